#pragma once
// Element types of tensors. The set is closed: anything else is rejected by name.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// New members go at the end so that the numeric values of existing ones stay put.
enum class DType : uint8_t { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool, U16, U32, U64 };

inline constexpr DType kAllDTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                                       DType::I32, DType::I16,  DType::I8,   DType::U8,  DType::Bool,
                                       DType::U16, DType::U32,  DType::U64};

// Short name used in .tsr text and in every view: f32, f16, bf16, f64, i64, i32, i16, i8, u8, bool, u16,
// u32, u64.
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
size_t dtypeSize(DType t);
bool isFloat(DType t);    // f32 f16 bf16 f64
bool isInteger(DType t);  // i64 i32 i16 i8 u8 u16 u32 u64
bool isSigned(DType t);   // floats and i64 i32 i16 i8

// 16-bit float conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

}  // namespace tessera
