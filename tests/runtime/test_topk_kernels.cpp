// TopK along an axis of up to 256 runs as generated kernels: the decompose pass counts each element's rank (how
// many elements come before it, ties by the lower index, NaN after +inf) in a row reduction and picks the element
// of each rank in a second, then gathers the values. Ties, NaN and infinities, integers past 2^53 and both
// orders must come out as the reference sorts them; a longer axis keeps the node whole on the host.
#include <QtTest>

#include <cmath>

#include "cpu_driver_helpers.h"
#include "frontend/text/tsr.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

Graph topkModel(const std::string& type, int64_t k, const std::string& attrs) {
  return parseTsr("graph t {\n  input %x: " + type + "\n  const %k: i64[1] = [" + std::to_string(k) +
                  "]\n  node t = TopK(%x, %k) " + attrs + " -> %v, %i\n  output %v\n  output %i\n}\n");
}

// Values drawn from a few, so that most rows hold ties; `odd` adds NaN and the infinities.
Tensor fewValues(DType t, const Shape& shape, bool odd) {
  const std::vector<double> plain{0, 1, 2, -3}, special{0, 1, std::nan(""), INFINITY, -INFINITY, 2};
  const std::vector<double>& pool = odd ? special : plain;
  std::vector<double> v(static_cast<size_t>(numElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = pool[(i * 7 + i / 3) % pool.size()];
  return Tensor::fromDoubles(t, shape, v);
}

}  // namespace

class TestTopKKernels : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!hasCompiler()) QSKIP("no C++ compiler for the cpu backend");
  }

  void ranksAsKernels() {
    struct Form {
      std::string type, attrs;
      int64_t k;
      DType dtype;
      Shape shape;
      bool odd;
    };
    for (const Form& f : {Form{"f32[3,7,5]", "{axis=1}", 3, DType::F32, {3, 7, 5}, true},
                          Form{"f32[4,9]", "{largest=0}", 9, DType::F32, {4, 9}, true},
                          Form{"f16[6,4]", "{axis=0, largest=0}", 2, DType::F16, {6, 4}, false},
                          Form{"i32[5,8]", "", 4, DType::I32, {5, 8}, false}}) {
      driver::Driver d = cpuDriver(topkModel(f.type, f.k, f.attrs));
      runAllGenerated(d, {fewValues(f.dtype, f.shape, f.odd)});
      QVERIFY2(compiledNode(d, "t") == nullptr, f.type.c_str());
      QCOMPARE(kernelOf(d, "t.ranks").spec.kind, std::string("reduction"));
      QCOMPARE(kernelOf(d, "t.values").spec.kind, std::string("data-movement"));
    }
  }

  // Integers compare as themselves: 2^60 and 2^60 + 1 are one apart (as doubles they would tie).
  void wideIntegersCompareExactly() {
    const int64_t big = int64_t(1) << 60;
    const std::vector<int64_t> values{big + 1, -big, big, big + 3, big + 1};
    Tensor x = Tensor::fromInts(DType::I64, {1, 5}, values);
    driver::Driver d = cpuDriver(topkModel("i64[1,5]", 5, ""));
    runAllGenerated(d, {x});
    execute::RunReport r = runOnCpu(d, {x});
    QCOMPARE(r.outputs.at(1).toInts(), (std::vector<int64_t>{3, 0, 4, 2, 1}));
  }

  // Past 256 elements along the axis the pairs would cost more than a sort on the host: the node stays whole.
  void aLongAxisStaysOnTheHost() {
    driver::Driver d = cpuDriver(topkModel("f32[2,300]", 5, ""));
    QVERIFY(compiledNode(d, "t") != nullptr);
    execute::RunReport r = runOnCpu(d, {fewValues(DType::F32, {2, 300}, false)});
    QVERIFY(reportOf(r, "t").onHost());
    QVERIFY(r.outputsVerified);
  }
};

QTEST_GUILESS_MAIN(TestTopKKernels)
#include "test_topk_kernels.moc"
