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
// compute in double and round once into them; the kernel backends do not take them. I4 and U4 hold one 4-bit
// integer per byte (ONNX files pack two per byte: the file functions pack and unpack); storing a value wraps it
// to 4 bits, as ONNX's Cast does. The kernel backends do not take them either.
enum class DType : uint8_t {
  F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool, U16, U32, U64,
  F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, I4, U4
};

inline constexpr DType kAllDTypes[] = {DType::F32,      DType::F16,        DType::BF16,   DType::F64,
                                       DType::I64,      DType::I32,        DType::I16,    DType::I8,
                                       DType::U8,       DType::Bool,       DType::U16,    DType::U32,
                                       DType::U64,      DType::F8E4M3FN,   DType::F8E4M3FNUZ, DType::F8E5M2,
                                       DType::F8E5M2FNUZ, DType::I4,       DType::U4};

// Short name used in .tsr text and in every view: f32, f16, bf16, f64, i64, i32, i16, i8, u8, bool, u16,
// u32, u64, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, i4, u4.
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeSize(DType t);
bool isFloat(DType t);    // f32 f16 bf16 f64 and the float8 types
bool isFloat8(DType t);   // f8e4m3fn f8e4m3fnuz f8e5m2 f8e5m2fnuz
bool isInteger(DType t);  // i64 i32 i16 i8 u8 u16 u32 u64 i4 u4
bool isSigned(DType t);   // floats and i64 i32 i16 i8 i4
bool isInt4(DType t);     // i4 u4

// Float8 conversions. `toFloat8` rounds to nearest even; a value beyond the largest finite one (infinities
// included) becomes that value when `saturate`, else infinity (F8E5M2) or NaN, as ONNX's Cast specifies.
double float8ToDouble(uint8_t bits, DType t);
uint8_t toFloat8(double v, DType t, bool saturate = true);

// 16-bit float conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

}  // namespace tessera
