// TensorProto ↔ Tensor, element types, bounded reading and parsing, and the single-TensorProto file API.
#include <bit>
#include <cstring>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_proto.h"
#include "io/atomic_file.h"
#include "ir/error.h"

static_assert(std::endian::native == std::endian::little, "raw_data is little-endian; so is the host");

namespace tessera::onnxio {

namespace {
using TP = onnx::TensorProto;

// ONNX's codes after BFLOAT16 (float8 from ONNX 1.14, then 4-bit integers, float4, E8M0 and 2-bit integers):
// the libonnx 1.12 headers Tessera builds with predate them.
constexpr int32_t kFloat8E4M3Fn = 17, kFloat8E4M3Fnuz = 18, kFloat8E5M2 = 19, kFloat8E5M2Fnuz = 20, kUInt4 = 21,
                  kInt4 = 22, kFloat4E2M1 = 23, kFloat8E8M0 = 24, kUInt2 = 25, kInt2 = 26;

// What one packed byte holds, for error messages: "two 4-bit values".
std::string packedByteNote(DType dt) { return packedBits(dt) == 2 ? "four 2-bit values" : "two 4-bit values"; }

// Which typed field of TensorProto holds each dtype's values (ONNX's rules: narrow types use int32_data).
enum class TypedField { Float, Int32, Int64, Double, UInt64 };

TypedField typedFieldOf(DType t) {
  switch (t) {
    case DType::F32: return TypedField::Float;
    case DType::F64: return TypedField::Double;
    case DType::I64: return TypedField::Int64;
    case DType::U32:
    case DType::U64: return TypedField::UInt64;
    default: return TypedField::Int32;  // f16 bf16 (as bit patterns), i32 i16 i8 u8 u16 bool
  }
}

std::string_view typedFieldName(TypedField f) {
  static constexpr std::string_view names[] = {"float_data", "int32_data", "int64_data", "double_data", "uint64_data"};
  return names[size_t(f)];
}

int fieldSize(const TP& p, TypedField f) {
  switch (f) {
    case TypedField::Float: return p.float_data_size();
    case TypedField::Int32: return p.int32_data_size();
    case TypedField::Int64: return p.int64_data_size();
    case TypedField::Double: return p.double_data_size();
    case TypedField::UInt64: return p.uint64_data_size();
  }
  return 0;
}

// Range of the values an int32_data entry may hold for a narrow dtype.
std::pair<int64_t, int64_t> int32FieldRange(DType t) {
  switch (t) {
    case DType::I16: return {INT16_MIN, INT16_MAX};
    case DType::I8: return {INT8_MIN, INT8_MAX};
    case DType::U8: return {0, UINT8_MAX};
    case DType::U16: return {0, UINT16_MAX};
    case DType::Bool: return {0, 1};
    case DType::F16:
    case DType::BF16: return {0, UINT16_MAX};
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0: return {0, UINT8_MAX};
    default: return {INT32_MIN, INT32_MAX};
  }
}

Tensor fromInt32Field(const TP& p, DType dt, const Shape& shape, const std::string& what) {
  Tensor t(dt, shape);
  auto [lo, hi] = int32FieldRange(dt);
  for (int i = 0; i < p.int32_data_size(); ++i) {
    int64_t v = p.int32_data(i);
    if (v < lo || v > hi)
      fail(what + ": int32_data[" + std::to_string(i) + "] = " + std::to_string(v) + " does not fit " +
           std::string(dtypeName(dt)));
    if (dt == DType::F16 || dt == DType::BF16) {
      auto bits = uint16_t(v);  // the bit pattern, as ONNX stores 16-bit floats
      std::memcpy(t.mutableBytes().data() + 2 * size_t(i), &bits, 2);
    } else if (isFloat8(dt)) {
      t.mutableBytes()[size_t(i)] = std::byte(v);  // the bit pattern too
    } else {
      t.setInt(i, v);
    }
  }
  return t;
}

// u32 and u64 values; a u32 entry above UINT32_MAX is refused rather than wrapped.
Tensor fromUInt64Field(const TP& p, DType dt, const Shape& shape, const std::string& what) {
  Tensor t(dt, shape);
  for (int i = 0; i < p.uint64_data_size(); ++i) {
    uint64_t v = p.uint64_data(i);
    if (dt == DType::U32 && v > UINT32_MAX)
      fail(what + ": uint64_data[" + std::to_string(i) + "] = " + std::to_string(v) + " does not fit u32");
    t.setInt(i, int64_t(v));  // u64 stores the bit pattern back unchanged
  }
  return t;
}

template <class Field>
Tensor fromField(const Field& field, DType dt, const Shape& shape) {
  Tensor t(dt, shape);
  for (int i = 0; i < field.size(); ++i) t.setDouble(i, double(field.Get(i)));
  return t;
}

// Sub-byte values in int32_data: each entry is one packed byte (two or four values), as in raw_data.
Tensor fromPackedInt32Field(const TP& p, DType dt, const Shape& shape, const std::string& what) {
  TensorType type{dt, shape};
  int64_t packed = fileByteSize(type);
  if (p.int32_data_size() != packed)
    fail(what + ": int32_data holds " + std::to_string(p.int32_data_size()) + " values but " + type.toString() +
         " needs " + std::to_string(packed) + " (" + packedByteNote(dt) + " an entry)");
  std::string raw;
  for (int i = 0; i < p.int32_data_size(); ++i) {
    if (p.int32_data(i) < 0 || p.int32_data(i) > 255)
      fail(what + ": int32_data[" + std::to_string(i) + "] = " + std::to_string(p.int32_data(i)) +
           " is not a byte of " + packedByteNote(dt));
    raw.push_back(char(p.int32_data(i)));
  }
  return unpackValues(raw, dt, shape);
}

Tensor fromTypedField(const TP& p, DType dt, const Shape& shape, const std::string& what) {
  if (packedBits(dt)) return fromPackedInt32Field(p, dt, shape, what);
  TypedField want = typedFieldOf(dt);
  for (TypedField f :
       {TypedField::Float, TypedField::Int32, TypedField::Int64, TypedField::Double, TypedField::UInt64})
    if (f != want && fieldSize(p, f) > 0)
      fail(what + ": data stored in " + std::string(typedFieldName(f)) + ", which does not hold " +
           std::string(dtypeName(dt)));
  if (p.string_data_size() > 0)
    fail(what + ": data stored in string_data, which does not hold " + std::string(dtypeName(dt)));
  int64_t n = numElements(shape);
  if (fieldSize(p, want) != n)
    fail(what + ": " + std::string(typedFieldName(want)) + " holds " + std::to_string(fieldSize(p, want)) +
         " values but " + TensorType{dt, shape}.toString() + " needs " + std::to_string(n));
  switch (want) {
    case TypedField::Float: return fromField(p.float_data(), dt, shape);
    case TypedField::Double: return fromField(p.double_data(), dt, shape);
    case TypedField::Int64: {
      Tensor t(dt, shape);
      for (int i = 0; i < p.int64_data_size(); ++i) t.setInt(i, p.int64_data(i));
      return t;
    }
    case TypedField::Int32: return fromInt32Field(p, dt, shape, what);
    case TypedField::UInt64: return fromUInt64Field(p, dt, shape, what);
  }
  return {};
}

bool hasTypedData(const TP& p) {
  return p.float_data_size() || p.int32_data_size() || p.int64_data_size() || p.double_data_size() ||
         p.string_data_size() || p.uint64_data_size();
}

Tensor fromRawData(const TP& p, DType dt, const Shape& shape, const std::string& what) {
  if (hasTypedData(p)) fail(what + ": has both raw_data and typed data fields");
  TensorType type{dt, shape};
  if (packedBits(dt)) {
    int64_t packed = fileByteSize(type);
    if (int64_t(p.raw_data().size()) != packed)
      fail(what + ": raw_data holds " + std::to_string(p.raw_data().size()) + " bytes but " + type.toString() +
           " needs " + std::to_string(packed) + " (" + packedByteNote(dt) + " a byte)");
    return unpackValues(p.raw_data(), dt, shape);
  }
  if (int64_t(p.raw_data().size()) != type.bytes())
    fail(what + ": raw_data holds " + std::to_string(p.raw_data().size()) + " bytes but " + type.toString() +
         " needs " + std::to_string(type.bytes()));
  Tensor t(dt, shape);
  if (!p.raw_data().empty()) std::memcpy(t.mutableBytes().data(), p.raw_data().data(), p.raw_data().size());
  if (dt == DType::Bool)  // one canonical byte per bool, so equal tensors have equal bytes
    for (std::byte& b : t.mutableBytes()) b = std::byte(b != std::byte(0));
  return t;
}
}  // namespace

int64_t fileByteSize(const TensorType& type) {
  if (int bits = packedBits(type.dtype)) {
    int64_t perByte = 8 / bits;
    return (type.numElements() + perByte - 1) / perByte;
  }
  return type.bytes();
}

Tensor unpackValues(std::string_view packed, DType dt, const Shape& shape) {
  Tensor t(dt, shape);
  const int bits = packedBits(dt), perByte = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    unsigned field = (uint8_t(packed[size_t(i / perByte)]) >> (i % perByte * bits)) & mask;
    if (isFloat(dt)) t.mutableBytes()[size_t(i)] = std::byte(field);  // f4e2m1: the code itself
    else t.setInt(i, field);  // setInt wraps: the upper half of the codes read negative for i4 and i2
  }
  return t;
}

std::string packValues(const Tensor& t) {
  const int bits = packedBits(t.dtype()), perByte = 8 / bits;
  const unsigned mask = (1u << bits) - 1;
  std::string packed(size_t(fileByteSize(t.type())), '\0');
  auto bytes = t.bytes();  // one value a byte: the code, or the integer in two's complement
  for (int64_t i = 0; i < t.numElements(); ++i) {
    unsigned field = unsigned(bytes[size_t(i)]) & mask;
    packed[size_t(i / perByte)] = char(uint8_t(packed[size_t(i / perByte)]) | (field << (i % perByte * bits)));
  }
  return packed;
}

std::string onnxTypeName(int32_t code) {
  static constexpr const char* names[] = {
      "UNDEFINED", "FLOAT",        "UINT8",          "INT8",       "UINT16",         "INT16",  "INT32",
      "INT64",     "STRING",       "BOOL",           "FLOAT16",    "DOUBLE",         "UINT32", "UINT64",
      "COMPLEX64", "COMPLEX128",   "BFLOAT16",       "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",   "INT4",           "FLOAT4E2M1", "FLOAT8E8M0",     "UINT2",  "INT2"};
  if (code >= 0 && code < int32_t(std::size(names))) return names[code];
  return "code " + std::to_string(code);
}

std::optional<DType> dtypeFromOnnx(int32_t code) {
  switch (code) {
    case TP::FLOAT: return DType::F32;
    case TP::FLOAT16: return DType::F16;
    case TP::BFLOAT16: return DType::BF16;
    case TP::DOUBLE: return DType::F64;
    case TP::INT64: return DType::I64;
    case TP::INT32: return DType::I32;
    case TP::INT16: return DType::I16;
    case TP::INT8: return DType::I8;
    case TP::UINT8: return DType::U8;
    case TP::UINT16: return DType::U16;
    case TP::UINT32: return DType::U32;
    case TP::UINT64: return DType::U64;
    case TP::BOOL: return DType::Bool;
    case kFloat8E4M3Fn: return DType::F8E4M3FN;
    case kFloat8E4M3Fnuz: return DType::F8E4M3FNUZ;
    case kFloat8E5M2: return DType::F8E5M2;
    case kFloat8E5M2Fnuz: return DType::F8E5M2FNUZ;
    case kUInt4: return DType::U4;
    case kInt4: return DType::I4;
    case kFloat4E2M1: return DType::F4E2M1;
    case kFloat8E8M0: return DType::F8E8M0;
    case kUInt2: return DType::U2;
    case kInt2: return DType::I2;
    case TP::STRING: return DType::String;
    default: return std::nullopt;
  }
}

int32_t dtypeToOnnx(DType t) {
  switch (t) {
    case DType::F32: return TP::FLOAT;
    case DType::F16: return TP::FLOAT16;
    case DType::BF16: return TP::BFLOAT16;
    case DType::F64: return TP::DOUBLE;
    case DType::I64: return TP::INT64;
    case DType::I32: return TP::INT32;
    case DType::I16: return TP::INT16;
    case DType::I8: return TP::INT8;
    case DType::U8: return TP::UINT8;
    case DType::U16: return TP::UINT16;
    case DType::U32: return TP::UINT32;
    case DType::U64: return TP::UINT64;
    case DType::Bool: return TP::BOOL;
    case DType::F8E4M3FN: return kFloat8E4M3Fn;
    case DType::F8E4M3FNUZ: return kFloat8E4M3Fnuz;
    case DType::F8E5M2: return kFloat8E5M2;
    case DType::F8E5M2FNUZ: return kFloat8E5M2Fnuz;
    case DType::U4: return kUInt4;
    case DType::I4: return kInt4;
    case DType::F4E2M1: return kFloat4E2M1;
    case DType::F8E8M0: return kFloat8E8M0;
    case DType::U2: return kUInt2;
    case DType::I2: return kInt2;
    case DType::String: return TP::STRING;
  }
  return TP::UNDEFINED;
}

DType requireDType(int32_t code, const std::string& what) {
  if (auto t = dtypeFromOnnx(code)) return *t;
  fail(what + ": element type " + onnxTypeName(code) + " (" + std::to_string(code) +
       ") is not supported (f32 f16 bf16 f64 i64 i32 i16 i8 u8 u16 u32 u64 bool, the five float8 types, f4e2m1, "
       "i4 u4 i2 u2 and string are)");
}

void checkTensorSize(const Shape& shape, DType dtype, const std::string& what) {
  // Bound the product of the non-zero extents step by step, so that it can neither overflow nor pass the
  // cap; an empty tensor with absurd other extents is refused too, as no later stride computation can trust it.
  const int64_t maxElements = Tensor::kMaxTensorBytes / int64_t(dtypeSize(dtype));
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) fail(what + ": dim " + std::to_string(i) + " is negative (" + std::to_string(shape[i]) + ")");
    if (shape[i] == 0) continue;
    if (shape[i] > maxElements / n)
      fail(what + ": shape " + shapeToString(shape) + " is larger than the 16 GiB limit");
    n *= shape[i];
  }
}

Shape checkedShape(const google::protobuf::RepeatedField<int64_t>& dims, DType dtype, const std::string& what) {
  if (dims.size() > 64) fail(what + ": rank " + std::to_string(dims.size()) + " is too large (at most 64)");
  Shape shape(dims.begin(), dims.end());
  checkTensorSize(shape, dtype, what);
  return shape;
}

// A string tensor's values are string_data, one entry an element (ONNX has no raw or external form for them).
Tensor fromStringData(const TP& p, const Shape& shape, const std::string& what) {
  if (p.has_raw_data() || p.data_location() == TP::EXTERNAL || p.external_data_size() > 0 ||
      fieldSize(p, TypedField::Float) || fieldSize(p, TypedField::Int32) || fieldSize(p, TypedField::Int64) ||
      fieldSize(p, TypedField::Double) || fieldSize(p, TypedField::UInt64))
    fail(what + ": a string tensor holds its values in string_data only");
  int64_t n = numElements(shape);
  if (p.string_data_size() != n)
    fail(what + ": string_data holds " + std::to_string(p.string_data_size()) + " values but " +
         TensorType{DType::String, shape}.toString() + " needs " + std::to_string(n));
  return Tensor::strings(shape, std::vector<std::string>(p.string_data().begin(), p.string_data().end()));
}

Tensor tensorFromProto(const TP& p, const std::string& what, const std::string& folder) {
  if (p.has_segment()) fail(what + ": segmented tensors are not supported");
  DType dt = requireDType(p.data_type(), what);
  Shape shape = checkedShape(p.dims(), dt, what);
  if (dt == DType::String) return fromStringData(p, shape, what);
  if (p.data_location() == TP::EXTERNAL || p.external_data_size() > 0) return externalTensor(p, dt, shape, folder, what);
  if (p.has_raw_data()) return fromRawData(p, dt, shape, what);
  return fromTypedField(p, dt, shape, what);
}

void tensorToProto(const Tensor& tensor, const std::string& name, TP& p) {
  if (!name.empty()) p.set_name(name);
  p.set_data_type(dtypeToOnnx(tensor.dtype()));
  for (int64_t d : tensor.shape()) p.add_dims(d);
  if (tensor.holdsStrings()) {
    for (const std::string& s : tensor.strings()) p.add_string_data(s);
    return;
  }
  if (packedBits(tensor.dtype())) {
    p.set_raw_data(packValues(tensor));
    return;
  }
  auto bytes = tensor.bytes();
  p.set_raw_data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::string readBoundedFile(const std::string& path) { return readWholeFile(path, kMaxProtoBytes); }

void writeMessage(const google::protobuf::MessageLite& message, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !message.SerializeToOstream(&out)) fail(path + ": cannot write file");
}

void parseBounded(google::protobuf::MessageLite& message, std::string_view bytes, const std::string& source,
                  const std::string& kind) {
  if (int64_t(bytes.size()) > kMaxProtoBytes) fail(source + ": larger than 2 GiB");
  google::protobuf::io::CodedInputStream input(reinterpret_cast<const uint8_t*>(bytes.data()), int(bytes.size()));
  input.SetRecursionLimit(kMaxProtoNesting);
  if (!message.ParseFromCodedStream(&input) || !input.ConsumedEntireMessage())
    fail(source + ": not a valid " + kind + " (protobuf parse failed: corrupt, cut short, or nested deeper than " +
         std::to_string(kMaxProtoNesting) + " messages)");
}

}  // namespace tessera::onnxio

namespace tessera {

Tensor parseTensorProto(std::string_view bytes, const std::string& sourceName) {
  onnx::TensorProto proto;
  onnxio::parseBounded(proto, bytes, sourceName, "ONNX TensorProto");
  std::string what = sourceName + ": tensor" + (proto.name().empty() ? "" : " '" + proto.name() + "'");
  return onnxio::tensorFromProto(proto, what);
}

Tensor readTensorProtoFile(const std::string& path) { return parseTensorProto(onnxio::readBoundedFile(path), path); }

void writeTensorProtoFile(const Tensor& tensor, const std::string& name, const std::string& path) {
  if (tensor.isContainer()) fail(path + ": a " + tensor.type().toString() + " is not a TensorProto (writeValueFile)");
  onnx::TensorProto proto;
  onnxio::tensorToProto(tensor, name, proto);
  onnxio::writeMessage(proto, path);
}

}  // namespace tessera
