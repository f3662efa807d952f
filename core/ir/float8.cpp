// Float8 encodings (ONNX's four): decoding by fields, encoding by rounding the value to a multiple of the
// quantum of its binade, which is exact in double for every value these formats hold.
#include <cmath>

#include "ir/dtype.h"

namespace tessera {

namespace {

struct Float8Format {
  int exponentBits, mantissaBits, bias;
  bool infinities;    // F8E5M2: an all-ones exponent is infinity or NaN, as in IEEE
  bool unsignedZero;  // FNUZ: no negative zero; 0x80 is the one NaN
};

Float8Format formatOf(DType t) {
  switch (t) {
    case DType::F8E4M3FNUZ: return {4, 3, 8, false, true};
    case DType::F8E5M2: return {5, 2, 15, true, false};
    case DType::F8E5M2FNUZ: return {5, 2, 16, false, true};
    default: return {4, 3, 7, false, false};  // F8E4M3FN
  }
}

int maxExponentField(const Float8Format& f) { return (1 << f.exponentBits) - 1; }

// The magnitude encoded by exponent field e and mantissa field m (no special values).
double magnitude(const Float8Format& f, int e, int m) {
  double scale = std::ldexp(1.0, -f.mantissaBits);
  if (e == 0) return std::ldexp(m * scale, 1 - f.bias);
  return std::ldexp(1.0 + m * scale, e - f.bias);
}

double largestFinite(const Float8Format& f) {
  int top = maxExponentField(f), full = (1 << f.mantissaBits) - 1;
  if (f.infinities) return magnitude(f, top - 1, full);
  if (f.unsignedZero) return magnitude(f, top, full);
  return magnitude(f, top, full - 1);  // E4M3FN: S.1111.111 is NaN
}

uint8_t nanBits(const Float8Format& f) { return f.unsignedZero ? 0x80 : 0x7F; }

// Fields of a finite magnitude that the format holds exactly.
uint8_t encodeMagnitude(const Float8Format& f, double a) {
  double minNormal = std::ldexp(1.0, 1 - f.bias);
  if (a < minNormal) return uint8_t(std::lround(a / std::ldexp(minNormal, -f.mantissaBits)));
  int exp2 = std::ilogb(a);
  int m = int(std::lround((std::ldexp(a, -exp2) - 1.0) * (1 << f.mantissaBits)));
  return uint8_t(((exp2 + f.bias) << f.mantissaBits) | m);
}

}  // namespace

double float8ToDouble(uint8_t bits, DType t) {
  Float8Format f = formatOf(t);
  bool negative = bits & 0x80;
  int e = (bits >> f.mantissaBits) & maxExponentField(f), m = bits & ((1 << f.mantissaBits) - 1);
  if (f.unsignedZero && bits == 0x80) return NAN;
  if (f.infinities && e == maxExponentField(f)) return m ? NAN : negative ? -INFINITY : INFINITY;
  if (!f.infinities && !f.unsignedZero && e == maxExponentField(f) && m == (1 << f.mantissaBits) - 1) return NAN;
  double v = magnitude(f, e, m);
  return negative ? -v : v;
}

uint8_t toFloat8(double v, DType t, bool saturate) {
  Float8Format f = formatOf(t);
  if (std::isnan(v)) return nanBits(f);
  uint8_t sign = std::signbit(v) ? 0x80 : 0;
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

}  // namespace tessera
