// Data-dependent shapes by specialization (ops/specialize.h): a model whose NonZero counts values of an input
// opens (no "must be a constant" refusal), the NonZero keeps the types it produced on the sample inputs, runs on
// the host (rule data-dependent) while the kernels after it take the specialized extents, and a run on inputs
// that give another count carries that count on: the kernels after the node that read other extents than they
// were built for run on the host, never past a buffer.
#include <QtTest>

#include <algorithm>

#include "driver/driver.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "ir/random.h"
#include "cpu_driver_helpers.h"
#include "onnx_model_maker.h"
#include "ops/specialize.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;
using namespace tessera::testing;
using TP = onnx::TensorProto;
using execute::HostRule;

namespace {

// y = the sum of x's positive elements, g = those elements (x f32[4,5]): Greater, NonZero, Transpose, GatherND,
// then Relu and ReduceSum as kernels over the gathered count.
std::string positivesModel() {
  ModelMaker m(17);
  m.floatInput("x", {4, 5});
  m.floatInitializer("zero", {}, {0.0f});
  m.node("Greater", {"x", "zero"}, {"pos"}, "greater");
  m.node("NonZero", {"pos"}, {"where"}, "nz");
  setInts(m.node("Transpose", {"where"}, {"idx"}, "transpose"), "perm", {1, 0});
  m.node("GatherND", {"x", "idx"}, {"g"}, "gather");
  m.node("Relu", {"g"}, {"r"}, "relu");
  setInt(m.node("ReduceSum", {"r"}, {"y"}, "sum"), "keepdims", 0);
  m.output("y");
  m.output("g");
  return m.bytes();
}

int64_t positives(const Tensor& x) {
  int64_t n = 0;
  for (double v : x.toDoubles()) n += v > 0;
  return n;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

class TestDataDependent : public QObject {
  Q_OBJECT
 private slots:
  void typeTextRoundTrips() {
    QCOMPARE(TensorType::fromString("i64[2,37]").value(), (TensorType{DType::I64, {2, 37}}));
    QCOMPARE(TensorType::fromString("f32[]").value(), (TensorType{DType::F32, {}}));
    for (const char* bad : {"i64[2,]", "i64[-1]", "q8[2]", "i64[2", "i64", "i64[2 ,3]", "f32[99999999999999999999]"})
      QVERIFY2(!TensorType::fromString(bad), bad);
  }

  // Opened with no inputs given, the NonZero is specialized on the inputs a run feeds by default.
  void nonZeroIsSpecializedOnTheDefaultInputs() {
    Graph g = importOnnxBytes(positivesModel(), "positives.onnx");
    const int64_t n = positives(randomInputs(g, 0)[0]);
    QVERIFY(n > 0 && n < 20);
    const Node* nz = g.findNode("nz");
    QVERIFY(isSpecialized(*nz));
    QCOMPARE(specializedTypes(*nz)->at(0), (TensorType{DType::I64, {2, n}}));
    QCOMPARE(g.findNode("gather")->output(0)->type(), (TensorType{DType::F32, {n}}));
    QVERIFY(!isSpecialized(*g.findNode("gather")));  // only the node whose inference needed values

    // Given sample inputs (a run's --inputs), it is specialized on them instead.
    OnnxImportOptions o;
    o.sampleInputs["x"] = Tensor::fromDoubles(DType::F32, {4, 5}, std::vector<double>(20, 1.0));
    Graph all = importOnnxBytes(positivesModel(), "positives.onnx", o);
    QCOMPARE(all.findNode("gather")->output(0)->type(), (TensorType{DType::F32, {20}}));
    o.sampleInputs["x"] = Tensor::fromDoubles(DType::F32, {5}, std::vector<double>(5, 1.0));
    QVERIFY(errorOf([&] { importOnnxBytes(positivesModel(), "positives.onnx", o); })
                .find("sample input 'x' is f32[5] but the model declares f32[4,5]") != std::string::npos);
  }

  // The .tsr text keeps the specialization; ONNX export leaves Tessera's attribute out (a re-import specializes
  // again); a malformed attribute is an error naming the node.
  void specializationSurvivesTextAndExport() {
    Graph g = importOnnxBytes(positivesModel(), "positives.onnx");
    std::string text = printTsr(g);
    QVERIFY2(text.find(kSpecializedTypesAttr) != std::string::npos, text.c_str());
    Graph back = parseTsr(text, "positives.tsr");
    QCOMPARE(specializedTypes(*back.findNode("nz")), specializedTypes(*g.findNode("nz")));
    QVERIFY(exportOnnxBytes(g).find(kSpecializedTypesAttr) == std::string::npos);
    Graph again = importOnnxBytes(exportOnnxBytes(g), "again.onnx");
    QCOMPARE(specializedTypes(*again.findNode("nz")), specializedTypes(*g.findNode("nz")));

    std::string bad = text;
    size_t at = bad.find("i64[2,");
    QVERIFY(at != std::string::npos);
    bad.replace(at, 6, "i64[2,x");
    std::string why = errorOf([&] { parseTsr(bad, "bad.tsr"); });
    QVERIFY2(why.find("node 'nz' (NonZero)") != std::string::npos && why.find("specialized_types") != std::string::npos,
             why.c_str());
  }

  // A file cannot hand in specialized types: an ONNX op's `specialized_types` is dropped on import (the node is
  // specialized on the sample inputs as any other), while a custom op's attribute of that name is its own.
  void aFileCannotSpecialize() {
    ModelMaker m(17);
    m.floatInput("x", {4, 5});
    m.floatInitializer("zero", {}, {0.0f});
    m.node("Greater", {"x", "zero"}, {"pos"}, "greater");
    auto* acme = m.model.add_opset_import();
    acme->set_domain("com.acme");
    acme->set_version(1);
    onnx::NodeProto* frob = m.node("Frob", {"x"}, {"f"}, "frob");
    frob->set_domain("com.acme");
    for (auto* n : {m.node("NonZero", {"pos"}, {"where"}, "nz"), frob}) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(kSpecializedTypesAttr);
      a->set_type(onnx::AttributeProto::STRINGS);
      a->add_strings("i64[2,999]");
    }
    declare(m.graph->add_value_info(), "f", {4, 5});
    m.output("where");
    m.output("f");
    Graph g = importOnnxBytes(m.bytes(), "forged.onnx");
    const int64_t n = positives(randomInputs(g, 0)[0]);
    QCOMPARE(specializedTypes(*g.findNode("nz"))->at(0), (TensorType{DType::I64, {2, n}}));
    QVERIFY(g.findNode("frob")->hasAttr(kSpecializedTypesAttr));
    QVERIFY(exportOnnxBytes(g).find("i64[2,999]") != std::string::npos);  // the custom op's, written back
  }

  // A shape computed from an input's values that the sample values cannot satisfy: the import fails naming the
  // node and what the sample values gave, not with a crash.
  void unsatisfiableSpecializationIsAnError() {
    ModelMaker m(17);
    m.floatInput("x", {6});
    m.input("s", TP::INT64, {2});
    m.node("Reshape", {"x", "s"}, {"y"}, "reshape");
    m.output("y");
    std::string why = errorOf([&] { importOnnxBytes(m.bytes(), "reshape.onnx"); });
    QVERIFY2(why.find("reshape.onnx: node 'reshape' (Reshape): input 1 (shape) must be a constant") == 0, why.c_str());
    QVERIFY2(why.find("with its inputs' values on the sample inputs") != std::string::npos, why.c_str());
    {  // an input of 2 GiB would have to be made up to specialize: refused naming it, nothing allocated
      ModelMaker big(17);
      big.floatInput("x", {int64_t(1) << 29});
      big.node("NonZero", {"x"}, {"y"}, "nz");
      big.output("y");
      std::string huge = errorOf([&] { importOnnxBytes(big.bytes(), "big.onnx"); });
      QVERIFY2(huge.find("would run sample input 'x' past 1024 MiB") != std::string::npos, huge.c_str());
    }
    OnnxImportOptions o;  // values that fit: the Reshape is specialized to them
    o.sampleInputs["s"] = Tensor::fromInts(DType::I64, {2}, std::vector<int64_t>{2, 3});
    Graph g = importOnnxBytes(m.bytes(), "reshape.onnx", o);
    QCOMPARE(g.outputs()[0]->type(), (TensorType{DType::F32, {2, 3}}));
  }

  // On the cpu backend: the NonZero is a host group (data-dependent), the kernels after it run over the
  // specialized count, the run verifies. Inputs with another count run too: the NonZero gives their count, and
  // the kernels built for the sample's extents that read what follows from it run on the host with this run's
  // extents, each saying so; the outputs are this input's, with or without the reference check.
  void runsOnTheHostWithTheExtentsItGives() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH");
    Graph g = importOnnxBytes(positivesModel(), "positives.onnx");
    Tensor x = randomInputs(g, 0)[0];
    const int64_t n = positives(x);
    driver::Driver d = cpuDriver(std::move(g));
    const execute::CompiledKernel& nz = kernelOf(d, "nz");
    QCOMPARE(nz.placement.rule, HostRule::DataDependent);
    QVERIFY2(nz.placement.reason.find("specialized to i64[2," + std::to_string(n) + "]") != std::string::npos,
             nz.placement.reason.c_str());
    QVERIFY(!kernelOf(d, "sum").onHost());
    execute::RunReport r = runOnCpu(d, {x});
    QVERIFY2(r.ran && r.stopped.empty(), r.cannotRun.c_str());
    QVERIFY(r.outputsVerified);
    double want = 0;
    for (double v : x.toDoubles()) want += v > 0 ? v : 0;
    QVERIFY(std::abs(r.outputs[0].getDouble(0) - want) < 1e-4);
    for (const auto& k : r.kernels) QVERIFY2(k.host.find("on this run") == std::string::npos, k.host.c_str());
    for (const auto& m : r.messages) QVERIFY2(m.find("data-dependent extents") == std::string::npos, m.c_str());

    std::vector<double> values(20);
    for (size_t i = 0; i < values.size(); ++i) values[i] = i % 3 == 0 ? -1.0 : 0.5 * double(i);
    Tensor other = Tensor::fromDoubles(DType::F32, {4, 5}, values);
    const int64_t count = positives(other);
    QVERIFY(count != n);
    double otherSum = 0;
    for (double v : values) otherSum += v > 0 ? v : 0;
    for (bool verify : {true, false}) {
      execute::RunReport o = runOnCpu(d, {other}, verify);
      QVERIFY2(o.ran && o.stopped.empty(), (o.cannotRun + " " + o.stopped).c_str());
      QVERIFY2(o.outputs[1].type() == (TensorType{DType::F32, {count}}), o.outputs[1].type().toString().c_str());  // g: this input's positives
      QVERIFY2(std::abs(o.outputs[0].getDouble(0) - otherSum) < 1e-4, std::to_string(o.outputs[0].getDouble(0)).c_str());
      const execute::KernelReport* sum = nullptr;
      for (const auto& k : o.kernels)
        if (std::find(k.nodes.begin(), k.nodes.end(), "sum") != k.nodes.end()) sum = &k;
      QVERIFY(sum);
      QVERIFY2(sum->host.find("is f32[" + std::to_string(count) + "] on this run, not the f32[" + std::to_string(n) +
                              "] the kernel was built for") != std::string::npos,
               sum->host.c_str());
      QVERIFY2(sum->status == (verify ? execute::KernelStatus::Ok : execute::KernelStatus::Unchecked), sum->message.c_str());
      QCOMPARE(o.outputsVerified, verify);
      const bool said = std::any_of(o.messages.begin(), o.messages.end(), [&](const std::string& m) {
        return m.find("data-dependent extents") == 0 && m.find(sum->group) != std::string::npos;
      });
      QVERIFY2(said, "the run's messages name the kernels that ran on the host for their extents");
    }
    Tensor reference = runReference(*d.model(), {other}).outputs.at(1);  // the reference carries the extents on too
    QCOMPARE(reference.type(), (TensorType{DType::F32, {count}}));
  }
};

QTEST_GUILESS_MAIN(TestDataDependent)
#include "test_data_dependent.moc"
