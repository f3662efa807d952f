#include "ir/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace tessera {

std::string_view dtypeName(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F64: return "f64";
    case DType::I64: return "i64";
    case DType::I32: return "i32";
    case DType::I16: return "i16";
    case DType::I8: return "i8";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
    case DType::U16: return "u16";
    case DType::U32: return "u32";
    case DType::U64: return "u64";
    case DType::F8E4M3FN: return "f8e4m3fn";
    case DType::F8E4M3FNUZ: return "f8e4m3fnuz";
    case DType::F8E5M2: return "f8e5m2";
    case DType::F8E5M2FNUZ: return "f8e5m2fnuz";
    case DType::I4: return "i4";
    case DType::U4: return "u4";
    case DType::F8E8M0: return "f8e8m0";
    case DType::F4E2M1: return "f4e2m1";
    case DType::I2: return "i2";
    case DType::U2: return "u2";
    case DType::String: return "str";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtypeName(t) == name) return t;
  if (name == dtypeName(DType::String)) return DType::String;
  return std::nullopt;
}

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64:
    case DType::U64:
    case DType::String: return 8;
    case DType::F32:
    case DType::I32:
    case DType::U32: return 4;
    case DType::F16:
    case DType::BF16:
    case DType::I16:
    case DType::U16: return 2;
    case DType::I8:
    case DType::U8:
    case DType::Bool:
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::I4:
    case DType::U4:
    case DType::F8E8M0:
    case DType::F4E2M1:
    case DType::I2:
    case DType::U2: return 1;
  }
  return 1;
}

bool isFloat8(DType t) {
  return t == DType::F8E4M3FN || t == DType::F8E4M3FNUZ || t == DType::F8E5M2 || t == DType::F8E5M2FNUZ ||
         t == DType::F8E8M0;
}
bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64 || isFloat8(t) ||
         t == DType::F4E2M1;
}
bool isInteger(DType t) { return !isFloat(t) && t != DType::Bool && t != DType::String; }
bool isSigned(DType t) {
  return isFloat(t) || t == DType::I64 || t == DType::I32 || t == DType::I16 || t == DType::I8 || t == DType::I4 ||
         t == DType::I2;
}
bool isInt4(DType t) { return t == DType::I4 || t == DType::U4; }
bool isInt2(DType t) { return t == DType::I2 || t == DType::U2; }
int packedBits(DType t) {
  if (isInt4(t) || t == DType::F4E2M1) return 4;
  return isInt2(t) ? 2 : 0;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: value = mant * 2^-24
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  uint32_t bits = exp == 31 ? (sign | 0x7f800000u | (mant << 13)) : (sign | ((exp + 112) << 23) | (mant << 13));
  return std::bit_cast<float>(bits);
}

uint16_t floatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));  // inf, nan
  if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflows to inf after rounding
  if (absx < 0x38800000u) {                                  // subnormal half or zero
    float a = std::bit_cast<float>(absx);
    float scaled = a * 16777216.0f;  // 2^24: one unit = smallest subnormal
    uint32_t m = uint32_t(std::nearbyint(scaled));
    return uint16_t(sign | m);
  }
  uint32_t mant = absx & 0x7fffffu;
  uint32_t exp = (absx >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
  return uint16_t(sign | h);
}

float bf16ToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

uint16_t floatToBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet nan
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return uint16_t(x >> 16);
}

}  // namespace tessera
