// The comparator's tolerance: relative to each element, with a floor at a tenth of the tensor's RMS so that
// elements a long sum cancels toward zero are judged by the sum's scale, while real errors still fail.
#include <QtTest>
#include <limits>

#include <vector>

#include "runtime/reference/compare.h"

using namespace tessera;

namespace {
Tensor f32(const std::vector<double>& values) {
  return Tensor::fromDoubles(DType::F32, Shape{int64_t(values.size())}, values);
}
}  // namespace

class TestCompare : public QObject {
  Q_OBJECT
 private slots:
  void cancelledElementIsJudgedByTheTensorsScale() {
    // Entries of size ~20 and one that cancelled to 0.0433: 2.2e-5 off is rounding, not an error.
    Tensor expected = f32({20.0, -21.0, 19.5, 0.043331});
    Comparison c = compareTensors(f32({20.0, -21.0, 19.5, 0.043353}), expected);
    QVERIFY2(c.ok, c.message.c_str());
    QVERIFY(c.maxRelError > 1e-4);  // the element's own relative error is still reported
  }
  void sameBytesAgreeAndOthersAreStillJudged() {
    // Identical bytes (a fill, a copy) agree at once, NaN and infinity included; a signed zero differs in its
    // bytes only and is judged element by element (and agrees); a different last element still fails.
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    Comparison same = compareTensors(f32({1.0, nan, -inf, 0.0}), f32({1.0, nan, -inf, 0.0}));
    QVERIFY(same.ok && same.maxAbsError == 0 && same.maxRelError == 0);
    QVERIFY(compareTensors(f32({1.0, 2.0, -0.0}), f32({1.0, 2.0, 0.0})).ok);
    Comparison last = compareTensors(f32({1.0, 2.0, 3.0}), f32({1.0, 2.0, 3.5}));
    QVERIFY(!last.ok && last.message.find("element 2") != std::string::npos);
  }
  void errorsAboveTheFloorStillFail() {
    Tensor expected = f32({20.0, -21.0, 19.5, 0.043331});
    Comparison c = compareTensors(f32({20.0, -21.0, 19.5, 0.0533}), expected);  // 0.01 off: 5e-4 of the RMS
    QVERIFY(!c.ok);
    QVERIFY2(c.message.find("element 3") != std::string::npos, c.message.c_str());
  }
  void largeElementsKeepTheirRelativeTolerance() {
    Tensor expected = f32({1000.0, 1.0});
    QVERIFY(compareTensors(f32({1000.05, 1.0}), expected).ok);
    QVERIFY(!compareTensors(f32({1000.5, 1.0}), expected).ok);
  }
  // tf32 products (operands rounded to a 10-bit mantissa) are off by ~3e-4 of the result's RMS, per standard
  // deviation: f32's tolerance fails them, tf32's takes them; an error of 10% still fails; other dtypes keep
  // at least their own tolerance, integers stay exact.
  void tf32IsJudgedAtItsOwnTolerance() {
    Tensor expected = f32({20.0, -21.0, 19.5, 0.5});
    Tensor rounded = f32({20.0, -21.0, 19.5, 0.53});  // ~6 standard deviations of tf32 at this RMS (17.5)
    QVERIFY(!compareTensors(rounded, expected).ok);
    QVERIFY(compareTensors(rounded, expected, toleranceFor(DType::F32, "tf32")).ok);
    QVERIFY(!compareTensors(f32({22.0, -21.0, 19.5, 0.5}), expected, toleranceFor(DType::F32, "tf32")).ok);
    QCOMPARE(toleranceFor(DType::F32, "").rel, toleranceFor(DType::F32).rel);
    QVERIFY(toleranceFor(DType::BF16, "tf32").rel >= toleranceFor(DType::BF16).rel);
    QCOMPARE(toleranceFor(DType::I32, "tf32").abs, 0.0);
  }
};

QTEST_GUILESS_MAIN(TestCompare)
#include "test_compare.moc"
