// External tensor data: an initializer whose bytes live in a file beside the model is read from it (offset and
// length honoured, a model over protobuf's 2 GB opens); a location that is absolute, climbs out of the model's
// folder or goes through a link that leaves it, a file too short, a wrong length and a model given as bytes (no
// folder) are each refused with an error naming the initializer and the location.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"
#include "onnx_model_maker.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;
using namespace tessera::testing;
namespace fs = std::filesystem;

namespace {

void addKey(onnx::TensorProto* t, const std::string& key, const std::string& value) {
  auto* kv = t->add_external_data();
  kv->set_key(key);
  kv->set_value(value);
}

// y = x + w, with w: f32[n] stored externally at `location` (offset, length: "" to leave out).
std::string addModel(int64_t n, const std::string& location, const std::string& offset = "",
                     const std::string& length = "") {
  ModelMaker m;
  m.floatInput("x", {n});
  auto* w = m.initializer("w", onnx::TensorProto::FLOAT, {n});
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  addKey(w, "location", location);
  if (!offset.empty()) addKey(w, "offset", offset);
  if (!length.empty()) addKey(w, "length", length);
  m.node("Add", {"x", "w"}, {"y"}, "add");
  m.output("y");
  return m.bytes();
}

void writeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string floats(const std::vector<float>& v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

QString errorOf(const std::string& path) {
  try {
    importOnnxFile(path);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestExternalData : public QObject {
  Q_OBJECT
 private slots:
  void initializerIsReadFromItsFile() {
    QTemporaryDir dir;
    const fs::path folder = dir.path().toStdString();
    fs::create_directories(folder / "weights");
    writeFile(folder / "weights" / "w.bin", std::string(8, 'x') + floats({1, 2, 3, 4}));
    writeFile(folder / "model.onnx", addModel(4, "weights/w.bin", "8", "16"));
    Graph g = importOnnxFile((folder / "model.onnx").string());
    Tensor x(DType::F32, {4});
    for (int i = 0; i < 4; ++i) x.setDouble(i, 10 * i);
    Tensor y = runReference(g, {x}).outputs[0];
    for (int i = 0; i < 4; ++i) QCOMPARE(y.getDouble(i), 10.0 * i + i + 1);
  }

  // A weight of 64 MiB or more is mapped from its file, not read: its values are the file's at any offset, the
  // file is left as it was when the tensor is written to (a private mapping), and a weight at an offset that is
  // not a multiple of its element size is read instead.
  void largeWeightsAreMapped() {
    QTemporaryDir dir;
    const fs::path folder = dir.path().toStdString();
    const int64_t n = int64_t(16) << 20;  // 64 MiB of f32
    std::vector<float> w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) w[size_t(i)] = float(i % 1000) - 500.0f;
    writeFile(folder / "w.bin", std::string(4100, '\0') + floats(w));  // offset 4100: past a page, not page-aligned
    for (const auto& [offset, mapped] : {std::pair{"4100", true}, std::pair{"4098", false}}) {
      writeFile(folder / "model.onnx", addModel(n, "w.bin", offset));
      Graph g = importOnnxFile((folder / "model.onnx").string());
      Tensor t = *g.findValue("w")->initializer();
      QCOMPARE(t.mapped(), mapped);
      if (!mapped) continue;
      for (int64_t i : {int64_t(0), int64_t(999), n / 2 + 7, n - 1}) QCOMPARE(t.getDouble(i), double(w[size_t(i)]));
      t.setDouble(0, 12345.0);  // copy-on-write: the file keeps its bytes
      Graph again = importOnnxFile((folder / "model.onnx").string());
      QCOMPARE(again.findValue("w")->initializer()->getDouble(0), double(w[0]));
    }
  }

  // Sub-byte dtypes are packed in external files as in raw_data: five i2 values take two bytes, and a length
  // counting one byte a value is refused.
  void packedValuesAreUnpacked() {
    QTemporaryDir dir;
    const fs::path folder = dir.path().toStdString();
    writeFile(folder / "q.bin", std::string("\x39\x02", 2));  // 1, -2, -1, 0 | -2
    auto model = [](const std::string& length) {
      ModelMaker m;
      auto* q = m.initializer("q", 26, {5});
      q->set_data_location(onnx::TensorProto::EXTERNAL);
      addKey(q, "location", "q.bin");
      addKey(q, "length", length);
      m.node("Identity", {"q"}, {"y"});
      m.output("y");
      return m.bytes();
    };
    writeFile(folder / "model.onnx", model("2"));
    Graph g = importOnnxFile((folder / "model.onnx").string());
    QCOMPARE(g.findValue("q")->initializer()->toInts(), (std::vector<int64_t>{1, -2, -1, 0, -2}));
    writeFile(folder / "model.onnx", model("5"));
    QVERIFY(errorOf((folder / "model.onnx").string()).contains("external data length 5 but i2[5] needs 2 bytes"));
  }

  void escapesAndBadSizesAreRefused() {
    QTemporaryDir dir;
    const fs::path folder = fs::path(dir.path().toStdString()) / "model";
    fs::create_directories(folder);
    writeFile(fs::path(dir.path().toStdString()) / "outside.bin", floats({1, 2, 3, 4}));
    writeFile(folder / "w.bin", floats({1, 2, 3, 4}));
    fs::create_symlink(fs::path(dir.path().toStdString()) / "outside.bin", folder / "link.bin");
    struct Case {
      std::string location, offset, length;
      const char* expected;
    };
    const std::vector<Case> cases = {
        {"../outside.bin", "", "", "external data location '../outside.bin' leaves the model's folder"},
        {"link.bin", "", "", "external data location 'link.bin' leaves the model's folder"},
        {"/etc/passwd", "", "", "external data location '/etc/passwd' is absolute"},
        {"w.bin", "4", "", "holds 16 bytes; 16 from offset 4 are past its end"},
        {"w.bin", "", "12", "external data length 12 but f32[4] needs 16 bytes"},
        {"w.bin", "-1", "", "external data offset '-1' is not a non-negative integer"},
        {"missing.bin", "", "", "missing.bin"},
    };
    for (const Case& c : cases) {
      writeFile(folder / "model.onnx", addModel(4, c.location, c.offset, c.length));
      const QString error = errorOf((folder / "model.onnx").string());
      QVERIFY2(error.contains("initializer 'w'") && error.contains(c.expected), qPrintable(QString::fromStdString(c.location) + ": " + error));
    }
    // Bytes without a file: there is no folder to read from.
    try {
      importOnnxBytes(addModel(4, "w.bin"), "memory");
      QFAIL("external data without a folder was read");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("external data needs the model's folder"), e.what());
    }
  }

  void modelOverTwoGigabytesOpens() {
    // 2.25 GB of weights beside a model file of a few hundred bytes: past protobuf's 2 GB limit for one file.
    if (qgetenv("TESSERA_BIG_FILES") != "1") QSKIP("writes and reads 2.25 GB: run by the test_external_data_over_2gb CTest");
    QTemporaryDir dir;
    const fs::path folder = dir.path().toStdString();
    const int64_t n = int64_t(9) << 26;  // 603,979,776 floats
    {
      std::ofstream out(folder / "big.bin", std::ios::binary);
      out.seekp(n * 4 - 4);
      const float last = 7.5f;
      out.write(reinterpret_cast<const char*>(&last), 4);  // a sparse file of zeros ending in 7.5
    }
    writeFile(folder / "model.onnx", addModel(n, "big.bin"));
    Graph g = importOnnxFile((folder / "model.onnx").string());
    const Tensor& w = *g.findValue("w")->initializer();
    QCOMPARE(int64_t(w.byteSize()), n * 4);
    QVERIFY(w.mapped());  // 2.25 GB mapped, not read: the import takes address space, not memory
    QCOMPARE(w.getDouble(0), 0.0);
    QCOMPARE(w.getDouble(n - 1), 7.5);
  }
};

QTEST_GUILESS_MAIN(TestExternalData)
#include "test_external_data.moc"
