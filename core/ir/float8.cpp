// Small float encodings: ONNX's four sign-exponent-mantissa float8 types and float4 (E2M1) decode by fields and
// encode by rounding the value to a multiple of the quantum of its binade, which is exact in double for every
// value these formats hold. F8E8M0, a bare exponent, follows ONNX's reference bit by bit instead (its rounding
// modes are defined on f32's fields).
#include <bit>
#include <cmath>

#include "ir/dtype.h"

namespace tessera {

namespace {

struct MinifloatFormat {
  int exponentBits, mantissaBits, bias;
  bool infinities;    // F8E5M2: an all-ones exponent is infinity or NaN, as in IEEE
  bool unsignedZero;  // FNUZ: no negative zero; the negative zero code is the one NaN
  bool noNaN;         // F4E2M1: every code is a finite value

  uint8_t signMask() const { return uint8_t(1u << (exponentBits + mantissaBits)); }
};

MinifloatFormat formatOf(DType t) {
  switch (t) {
    case DType::F8E4M3FNUZ: return {4, 3, 8, false, true, false};
    case DType::F8E5M2: return {5, 2, 15, true, false, false};
    case DType::F8E5M2FNUZ: return {5, 2, 16, false, true, false};
    case DType::F4E2M1: return {2, 1, 1, false, false, true};
    default: return {4, 3, 7, false, false, false};  // F8E4M3FN
  }
}

int maxExponentField(const MinifloatFormat& f) { return (1 << f.exponentBits) - 1; }

// The magnitude encoded by exponent field e and mantissa field m (no special values).
double magnitude(const MinifloatFormat& f, int e, int m) {
  double scale = std::ldexp(1.0, -f.mantissaBits);
  if (e == 0) return std::ldexp(m * scale, 1 - f.bias);
  return std::ldexp(1.0 + m * scale, e - f.bias);
}

double largestFinite(const MinifloatFormat& f) {
  int top = maxExponentField(f), full = (1 << f.mantissaBits) - 1;
  if (f.infinities) return magnitude(f, top - 1, full);
  if (f.unsignedZero || f.noNaN) return magnitude(f, top, full);
  return magnitude(f, top, full - 1);  // E4M3FN: S.1111.111 is NaN
}

uint8_t nanBits(const MinifloatFormat& f) { return f.unsignedZero ? f.signMask() : uint8_t(f.signMask() - 1); }

// Fields of a finite magnitude that the format holds exactly.
uint8_t encodeMagnitude(const MinifloatFormat& f, double a) {
  double minNormal = std::ldexp(1.0, 1 - f.bias);
  if (a < minNormal) return uint8_t(std::lround(a / std::ldexp(minNormal, -f.mantissaBits)));
  int exp2 = std::ilogb(a);
  int m = int(std::lround((std::ldexp(a, -exp2) - 1.0) * (1 << f.mantissaBits)));
  return uint8_t(((exp2 + f.bias) << f.mantissaBits) | m);
}

double decode(const MinifloatFormat& f, uint8_t bits) {
  bool negative = bits & f.signMask();
  int e = (bits >> f.mantissaBits) & maxExponentField(f), m = bits & ((1 << f.mantissaBits) - 1);
  int fullMantissa = (1 << f.mantissaBits) - 1;
  if (f.unsignedZero && bits == f.signMask()) return NAN;
  if (f.infinities && e == maxExponentField(f)) return m ? NAN : negative ? -INFINITY : INFINITY;
  if (!f.infinities && !f.unsignedZero && !f.noNaN && e == maxExponentField(f) && m == fullMantissa) return NAN;
  double v = magnitude(f, e, m);
  return negative ? -v : v;
}

// v (not NaN) rounded to nearest even into the format; beyond its range, the largest finite value when
// `saturate`, else infinity or NaN.
uint8_t encode(const MinifloatFormat& f, double v, bool saturate) {
  uint8_t sign = std::signbit(v) ? f.signMask() : 0;
  double a = std::fabs(v), top = largestFinite(f);
  if (a != 0 && !std::isinf(a)) {  // round to the nearest multiple of the binade's quantum, ties to even
    double minNormal = std::ldexp(1.0, 1 - f.bias);
    int exp2 = a < minNormal ? 1 - f.bias : std::ilogb(a);
    double quantum = std::ldexp(1.0, exp2 - f.mantissaBits);
    a = std::nearbyint(a / quantum) * quantum;
  }
  if (a > top) {
    if (saturate) return uint8_t(sign | encodeMagnitude(f, top));
    if (f.infinities) return uint8_t(sign | (maxExponentField(f) << f.mantissaBits));
    return nanBits(f);
  }
  if (a == 0) return f.unsignedZero ? 0 : sign;
  return uint8_t(sign | encodeMagnitude(f, a));
}

constexpr uint8_t kE8M0NaN = 0xFF, kE8M0Max = 0xFE;

}  // namespace

double float8ToDouble(uint8_t bits, DType t) {
  if (t == DType::F8E8M0) return bits == kE8M0NaN ? NAN : std::ldexp(1.0, int(bits) - 127);
  return decode(formatOf(t), bits);
}

uint8_t toFloat8(double v, DType t, bool saturate) {
  if (t == DType::F8E8M0) return toFloat8E8M0(v, saturate, E8M0Rounding::Up);
  MinifloatFormat f = formatOf(t);
  if (std::isnan(v)) return nanBits(f);
  return encode(f, v, saturate);
}

uint8_t toFloat8E8M0(double v, bool saturate, E8M0Rounding rounding) {
  uint32_t bits = std::bit_cast<uint32_t>(float(v));
  uint32_t exponent = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) return kE8M0NaN;  // infinities and NaN
  bool up = false;
  if (rounding == E8M0Rounding::Up) up = mantissa != 0;
  if (rounding == E8M0Rounding::Nearest) {
    // ONNX's guard/round/sticky test: the guard bit (half) rounds up when anything else is set, and a normal
    // f32 always has its implicit leading bit, so there half rounds up too.
    bool guard = mantissa & 0x400000, rest = mantissa & 0x3FFFFF;
    up = guard && (rest || exponent > 0);
  }
  if (up && exponent == kE8M0Max && saturate) up = false;
  return uint8_t(exponent + (up ? 1 : 0));
}

double float4ToDouble(uint8_t bits) { return decode(formatOf(DType::F4E2M1), bits & 0xF); }

uint8_t toFloat4(double v) {
  MinifloatFormat f = formatOf(DType::F4E2M1);
  if (std::isnan(v)) return f.signMask();  // no NaN code: ml_dtypes (ONNX's reference) gives -0
  return encode(f, v, true);
}

}  // namespace tessera
