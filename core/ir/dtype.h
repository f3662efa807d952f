#pragma once
// Element types of tensors. The set is closed: anything else is rejected by name.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// New members go at the end so that the numeric values of existing ones stay put.
// The float8 types are ONNX's: F8E4M3FN (no infinities; NaN is S.1111.111), F8E4M3FNUZ and F8E5M2FNUZ (no
// infinities, no negative zero; NaN is 0x80), F8E5M2 (IEEE-like, with infinities). They are storage types: ops
// compute in double and round once into them; the kernel backends do not take them. F8E8M0 is ONNX's scale type:
// an unsigned power of two 2^(e-127) for e < 255, and NaN (0xFF); no zero. F4E2M1 is ONNX's float4 (bias 1:
// 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives; no infinities, no NaN), one value per byte in its low nibble.
// I4 and U4 hold one 4-bit integer per byte, I2 and U2 one 2-bit integer per byte (ONNX files pack two or four
// per byte: the file functions pack and unpack); storing a value wraps it to the width, as ONNX's Cast does.
// The kernel backends take none of these.
enum class DType : uint8_t {
  F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool, U16, U32, U64,
  F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, I4, U4, F8E8M0, F4E2M1, I2, U2,
  // ONNX's STRING: each element a byte string of any length (UTF-8 by convention), held as std::string
  // (Tensor::strings), not as bytes. Only the host ops that say so take it (ops/registry.h, OpTraits::strings);
  // the kernel backends never see it. Not in kAllDTypes, which lists the numeric types.
  String
};

inline constexpr DType kAllDTypes[] = {DType::F32,      DType::F16,        DType::BF16,   DType::F64,
                                       DType::I64,      DType::I32,        DType::I16,    DType::I8,
                                       DType::U8,       DType::Bool,       DType::U16,    DType::U32,
                                       DType::U64,      DType::F8E4M3FN,   DType::F8E4M3FNUZ, DType::F8E5M2,
                                       DType::F8E5M2FNUZ, DType::I4,       DType::U4,     DType::F8E8M0,
                                       DType::F4E2M1,   DType::I2,         DType::U2};

// Short name used in .tsr text and in every view: f32, f16, bf16, f64, i64, i32, i16, i8, u8, bool, u16,
// u32, u64, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, i4, u4, f8e8m0, f4e2m1, i2, u2; and str.
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
// Bytes one element takes in a dense buffer; a string's slot (sizeof a pointer), which no buffer holds.
size_t dtypeSize(DType t);
bool isFloat(DType t);    // f32 f16 bf16 f64, the float8 types and f4e2m1
bool isFloat8(DType t);   // f8e4m3fn f8e4m3fnuz f8e5m2 f8e5m2fnuz f8e8m0
bool isInteger(DType t);  // i64 i32 i16 i8 u8 u16 u32 u64 i4 u4 i2 u2
bool isSigned(DType t);   // floats and i64 i32 i16 i8 i4 i2
bool isInt4(DType t);     // i4 u4
bool isInt2(DType t);     // i2 u2
// Bits one value takes in ONNX files when several share a byte: 4 for i4 u4 f4e2m1 (two a byte, element 2k in
// the low nibble of byte k), 2 for i2 u2 (four a byte, element 4k in the lowest two bits); 0 for every other dtype.
int packedBits(DType t);

// Float8 conversions. `toFloat8` rounds to nearest even; a value beyond the largest finite one (infinities
// included) becomes that value when `saturate`, else infinity (F8E5M2) or NaN, as ONNX's Cast specifies.
// F8E8M0 rounds as E8M0Rounding::Up (Cast's default round_mode; see toFloat8E8M0).
double float8ToDouble(uint8_t bits, DType t);
uint8_t toFloat8(double v, DType t, bool saturate = true);

// F8E8M0 from a value, as ONNX's reference (numpy_helper.to_float8e8m0): the value is rounded to f32 first and
// its sign dropped; f32's exponent field is the code, moved up one when `Up` and the f32 has mantissa bits set,
// or when `Nearest` and its mantissa is half or more (below 2^-126, more than half); infinities and NaN are
// 0xFF (NaN). Past 2^127 the code stays 0xFE when `saturate`, else becomes NaN. Zero is 0x00 (2^-127).
enum class E8M0Rounding { Up, Down, Nearest };
uint8_t toFloat8E8M0(double v, bool saturate, E8M0Rounding rounding);

// F4E2M1 (the code in the low nibble): rounds to nearest even and always saturates to +-6, infinities
// included; NaN becomes -0 (0x8), as ONNX's reference data do (ml_dtypes).
double float4ToDouble(uint8_t bits);
uint8_t toFloat4(double v);

// 16-bit float conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

}  // namespace tessera
