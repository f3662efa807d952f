// The dtypes narrower than a byte or without a mantissa (f4e2m1, f8e8m0, i2, u2): every code round trips,
// and rounding, saturation and wrapping follow ONNX's reference at their edges.
#include <QtTest>

#include <cmath>

#include "ir/tensor.h"

using namespace tessera;

class TestSmallDTypes : public QObject {
  Q_OBJECT
 private slots:
  void predicatesAndNames() {
    QVERIFY(isFloat(DType::F4E2M1) && !isFloat8(DType::F4E2M1) && !isInteger(DType::F4E2M1));
    QVERIFY(isFloat(DType::F8E8M0) && isFloat8(DType::F8E8M0));
    QVERIFY(isInteger(DType::I2) && isSigned(DType::I2) && isInt2(DType::I2) && !isInt4(DType::I2));
    QVERIFY(isInteger(DType::U2) && !isSigned(DType::U2) && isInt2(DType::U2));
    QCOMPARE(packedBits(DType::F4E2M1), 4);
    QCOMPARE(packedBits(DType::I4), 4);
    QCOMPARE(packedBits(DType::U2), 2);
    QCOMPARE(packedBits(DType::F8E8M0), 0);
    QCOMPARE(packedBits(DType::U8), 0);
    for (DType t : {DType::F8E8M0, DType::F4E2M1, DType::I2, DType::U2}) QCOMPARE(dtypeSize(t), size_t(1));
    QCOMPARE(parseDType("f4e2m1"), std::optional<DType>(DType::F4E2M1));
    QCOMPARE(parseDType("f8e8m0"), std::optional<DType>(DType::F8E8M0));
    QCOMPARE(parseDType("i2"), std::optional<DType>(DType::I2));
    QCOMPARE(parseDType("u2"), std::optional<DType>(DType::U2));
  }

  // The 16 codes are 0 0.5 1 1.5 2 3 4 6 and their negatives; each encodes back to itself (-0 too).
  void float4CodesRoundTrip() {
    const double magnitudes[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    for (int code = 0; code < 16; ++code) {
      double v = float4ToDouble(uint8_t(code));
      QCOMPARE(v, code & 8 ? -magnitudes[code & 7] : magnitudes[code & 7]);
      QCOMPARE(std::signbit(v), bool(code & 8));
      QCOMPARE(int(toFloat4(v)), code);
    }
  }

  // Ties go to the even code; beyond 6 (infinities included) saturates; NaN has no code and becomes -0 as
  // ONNX's test data have it (ml_dtypes); tiny values keep their sign.
  void float4RoundsAndSaturates() {
    QCOMPARE(int(toFloat4(0.25)), 0x0);   // between 0 and 0.5: to 0 (even)
    QCOMPARE(int(toFloat4(0.75)), 0x2);   // between 0.5 and 1: to 1 (even)
    QCOMPARE(int(toFloat4(1.25)), 0x2);   // between 1 and 1.5: to 1
    QCOMPARE(int(toFloat4(2.5)), 0x4);    // between 2 and 3: to 2
    QCOMPARE(int(toFloat4(-3.5)), 0xE);   // between 3 and 4: to -4
    QCOMPARE(int(toFloat4(5.0)), 0x6);    // between 4 and 6: to 4
    QCOMPARE(int(toFloat4(5.01)), 0x7);   // past the tie: 6
    QCOMPARE(int(toFloat4(7.0)), 0x7);    // would round to 8: saturates to 6
    QCOMPARE(int(toFloat4(1e30)), 0x7);
    QCOMPARE(int(toFloat4(INFINITY)), 0x7);
    QCOMPARE(int(toFloat4(-INFINITY)), 0xF);
    QCOMPARE(int(toFloat4(NAN)), 0x8);
    QCOMPARE(int(toFloat4(-1e-7)), 0x8);
    QCOMPARE(int(toFloat4(0.26)), 0x1);  // past the tie: 0.5
  }

  // Codes 0..254 are 2^(code - 127), 255 is NaN. Down and Nearest give every code back; Up gives 2^-127
  // (an f32 subnormal, so it has mantissa bits) as 2^-126, as ONNX's reference does.
  void e8m0CodesRoundTrip() {
    QCOMPARE(float8ToDouble(0x7F, DType::F8E8M0), 1.0);
    QCOMPARE(float8ToDouble(0x00, DType::F8E8M0), std::ldexp(1.0, -127));
    QCOMPARE(float8ToDouble(0xFE, DType::F8E8M0), std::ldexp(1.0, 127));
    QVERIFY(std::isnan(float8ToDouble(0xFF, DType::F8E8M0)));
    for (int code = 0; code < 256; ++code) {
      double v = float8ToDouble(uint8_t(code), DType::F8E8M0);
      QCOMPARE(int(toFloat8E8M0(v, true, E8M0Rounding::Down)), code);
      QCOMPARE(int(toFloat8E8M0(v, false, E8M0Rounding::Nearest)), code);
      QCOMPARE(int(toFloat8E8M0(v, true, E8M0Rounding::Up)), code == 0 ? 1 : code);
    }
  }

  // The three rounding modes between powers of two, the sign dropped, zero as the smallest code, saturation at
  // 2^127, and the value rounded to f32 before its exponent is read.
  void e8m0Rounds() {
    auto up = [](double v) { return int(toFloat8E8M0(v, true, E8M0Rounding::Up)); };
    auto down = [](double v) { return int(toFloat8E8M0(v, true, E8M0Rounding::Down)); };
    auto nearest = [](double v) { return int(toFloat8E8M0(v, true, E8M0Rounding::Nearest)); };
    QCOMPARE(up(1.25), 0x80);
    QCOMPARE(down(1.75), 0x7F);
    QCOMPARE(nearest(1.25), 0x7F);
    QCOMPARE(nearest(1.5), 0x80);  // half rounds up
    QCOMPARE(up(-3.0), 0x81);      // no sign: |-3| rounds up to 4
    QCOMPARE(up(0.0), 0x00);
    QCOMPARE(up(-0.0), 0x00);
    QCOMPARE(up(0.124), 0x7C);  // 0.125, as ONNX's Cast test
    QCOMPARE(up(1.0 + std::ldexp(1.0, -30)), 0x7F);  // the f32 of it is 1.0
    QCOMPARE(up(INFINITY), 0xFF);
    QCOMPARE(down(NAN), 0xFF);
    double past = std::ldexp(1.5, 127);
    QCOMPARE(up(past), 0xFE);  // saturates
    QCOMPARE(int(toFloat8E8M0(past, false, E8M0Rounding::Up)), 0xFF);
    QCOMPARE(int(toFloat8E8M0(past, false, E8M0Rounding::Down)), 0xFE);
    QCOMPARE(int(toFloat8(3.0, DType::F8E8M0)), 0x81);  // the default is Cast's: up, saturating
  }

  // 2-bit integers wrap when stored, as ONNX's Cast to them does (-3 is 1, 2 is -2 for i2; 4 is 0 for u2),
  // and a float truncates toward zero first.
  void int2ValuesWrap() {
    Tensor i2 = Tensor::fromDoubles(DType::I2, {6}, std::vector<double>{-3, -2, -1.9, 1, 2, 3.9});
    QCOMPARE(i2.toInts(), (std::vector<int64_t>{1, -2, -1, 1, -2, -1}));
    Tensor u2 = Tensor::fromInts(DType::U2, {4}, std::vector<int64_t>{-1, 3, 4, 6});
    QCOMPARE(u2.toInts(), (std::vector<int64_t>{3, 3, 0, 2}));
  }

  // Tensors hold the codes of the float types and give back values.
  void tensorsHoldCodes() {
    Tensor f4 = Tensor::fromDoubles(DType::F4E2M1, {3}, std::vector<double>{2.9, -0.3, 100});
    QCOMPARE(f4.toDoubles(), (std::vector<double>{3, -0.5, 6}));
    QCOMPARE(int(f4.bytes()[0]), 0x5);
    Tensor e8 = Tensor::fromDoubles(DType::F8E8M0, {2}, std::vector<double>{3, 0.25});
    QCOMPARE(e8.toDoubles(), (std::vector<double>{4, 0.25}));
    QCOMPARE(e8.toInts(), (std::vector<int64_t>{4, 0}));
  }
};

QTEST_GUILESS_MAIN(TestSmallDTypes)
#include "test_small_dtypes.moc"
