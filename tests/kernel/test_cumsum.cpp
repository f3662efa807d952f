// CumSum as a generated kernel (kernel/lower/lower_scan.cpp): each output element sums the taps of its axis at
// or before it (after it with reverse; exclusive leaves itself out), scheduled by the pool template. Ranks 1 to
// 4, each axis, negative axes, the four attribute combinations, int32 and f16: each kernel runs in the kernel
// interpreter (as lowered and default-scheduled) against the reference, its CUDA compiles with NVRTC for sm_90,
// and the cpu backend runs it as a kernel, verified. An axis computed at run time is refused naming the node.
#include <QtTest>

#include "cpu_run.h"
#include "ir/error.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

Case cumsum(const Shape& shape, int64_t axis, bool exclusive, bool reverse, DType t = DType::F32, bool constantAxis = true) {
  GraphBuilder b("cs");
  Value* x = b.input("x", {t, shape});
  Value* a = constantAxis ? b.constant("axis", Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{axis}))
                          : b.input("axis", {DType::I64, {}});
  b.output(b.op("CumSum", {x, a}, {{"exclusive", int64_t(exclusive)}, {"reverse", int64_t(reverse)}}, "cumsum"));
  return {b.finish(), {"g0", "opaque", {"cumsum"}}};
}

}  // namespace

class TestCumSum : public QObject {
  Q_OBJECT
 private slots:
  void everyAttributeCombination() {
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        std::string why = agreesEverywhere(cumsum({37}, 0, exclusive, reverse), "pool", 3);
        QVERIFY2(why.empty(), (std::to_string(exclusive) + std::to_string(reverse) + ": " + why).c_str());
      }
  }
  void eachAxisOfHigherRanks() {
    QCOMPARE(agreesEverywhere(cumsum({5, 9}, 0, false, false), "pool", 4), std::string());
    QCOMPARE(agreesEverywhere(cumsum({5, 9}, -1, true, false), "pool", 5), std::string());
    QCOMPARE(agreesEverywhere(cumsum({2, 3, 4, 5}, 2, false, true), "pool", 6), std::string());
    QCOMPARE(agreesEverywhere(cumsum({2, 3, 4}, -3, true, true), "pool", 7), std::string());
  }
  void integerAndHalfTypes() {
    QCOMPARE(agreesEverywhere(cumsum({4, 11}, 1, false, false, DType::I32), "pool", 8), std::string());
    QCOMPARE(agreesEverywhere(cumsum({3, 16}, 1, true, false, DType::F16), "pool", 9), std::string());
  }
  void axisComputedAtRunTimeIsRefused() {
    Case c = cumsum({4, 5}, 0, false, false, DType::F32, false);
    try {
      lower(c);
      QFAIL("lowered a CumSum whose axis is an input");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("node 'cumsum' (CumSum): input 1 (axis) must be a constant") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestCumSum)
#include "test_cumsum.moc"
