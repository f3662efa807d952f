// Inference checks (dtype classes, ranks, broadcasting, axes), ONNX dtype codes, rounding to an output dtype
// and evaluation-time checks; declared in op_support.h.
#include "ops/op_support.h"

#include <bit>
#include <cmath>

#include "ir/error.h"
#include "ops/broadcast.h"
#include "ops/specialize.h"

namespace tessera::ops {

bool inDTypeClass(DType t, DTypeClass c) {
  switch (c) {
    case DTypeClass::Float: return isFloat(t);
    case DTypeClass::SignedNumeric: return isSigned(t);
    case DTypeClass::Numeric: return t != DType::Bool;
    case DTypeClass::Integer: return isInteger(t);
    case DTypeClass::Bool: return t == DType::Bool;
    case DTypeClass::Any: return true;
  }
  return false;
}

std::string_view dtypeClassName(DTypeClass c) {
  switch (c) {
    case DTypeClass::Float: return "float types (f32 f16 bf16 f64)";
    case DTypeClass::SignedNumeric: return "signed numeric types (f32 f16 bf16 f64 i64 i32 i16 i8)";
    case DTypeClass::Numeric: return "numeric types (f32 f16 bf16 f64 i64 i32 i16 i8 u8 u16 u32 u64)";
    case DTypeClass::Integer: return "integer types (i64 i32 i16 i8 u8 u16 u32 u64)";
    case DTypeClass::Bool: return "bool only";
    case DTypeClass::Any: return "any type";
  }
  return "?";
}

void requireDType(const InferContext& ctx, size_t input, DTypeClass c) {
  DType t = ctx.input(input).dtype;
  if (!inDTypeClass(t, c))
    ctx.error("input " + std::to_string(input) + " is " + std::string(dtypeName(t)) + "; " + ctx.node().op() +
              " accepts " + std::string(dtypeClassName(c)));
}

void requireSameDType(const InferContext& ctx, size_t a, size_t b) {
  if (ctx.input(b).dtype != ctx.input(a).dtype)
    ctx.error("input " + std::to_string(b) + " is " + ctx.input(b).toString() + " but input " + std::to_string(a) +
              " is " + ctx.input(a).toString() + "; dtypes must match");
}

const Shape* requireWeightOperands(const InferContext& ctx, DTypeClass c) {
  requireDType(ctx, 0, c);
  requireSameDType(ctx, 0, 1);
  if (!ctx.hasInput(2)) return nullptr;
  requireSameDType(ctx, 0, 2);
  return &ctx.input(2).shape;
}

void requireRank(const InferContext& ctx, size_t input, size_t rank) {
  const TensorType& t = ctx.input(input);
  if (t.shape.size() != rank)
    ctx.error("input " + std::to_string(input) + " must have rank " + std::to_string(rank) + " but is " +
              t.toString());
}

Shape broadcastInputs(const InferContext& ctx, const std::vector<size_t>& inputs) {
  std::vector<Shape> shapes;
  std::string listed;
  for (size_t i : inputs) {
    if (!ctx.hasInput(i)) continue;
    shapes.push_back(ctx.input(i).shape);
    listed += (listed.empty() ? "" : ", ") + std::to_string(i) + " " + ctx.input(i).toString();
  }
  std::optional<Shape> out = broadcastShapes(shapes);
  if (!out) ctx.error("input shapes do not broadcast: " + listed);
  return *out;
}

int64_t normalizedAxis(const InferContext& ctx, int64_t axis, int64_t rank, const std::string& name) {
  std::optional<int64_t> a = normalizeAxis(axis, rank);
  if (!a)
    ctx.error("'" + name + "' = " + std::to_string(axis) + " is out of range for an input of rank " +
              std::to_string(rank));
  return *a;
}

std::optional<DType> dtypeFromOnnxCode(int64_t code) {
  switch (code) {
    case 1: return DType::F32;
    case 10: return DType::F16;
    case 16: return DType::BF16;
    case 11: return DType::F64;
    case 7: return DType::I64;
    case 6: return DType::I32;
    case 5: return DType::I16;
    case 3: return DType::I8;
    case 2: return DType::U8;
    case 4: return DType::U16;
    case 12: return DType::U32;
    case 13: return DType::U64;
    case 9: return DType::Bool;
    case 17: return DType::F8E4M3FN;
    case 18: return DType::F8E4M3FNUZ;
    case 19: return DType::F8E5M2;
    case 20: return DType::F8E5M2FNUZ;
    case 21: return DType::U4;
    case 22: return DType::I4;
    case 23: return DType::F4E2M1;
    case 24: return DType::F8E8M0;
    case 25: return DType::U2;
    case 26: return DType::I2;
    default: return std::nullopt;
  }
}

namespace {
// The double rounded to float with "round to odd": truncate, then set the lowest bit if anything was lost.
// Rounding that float again to a format with at most 22 mantissa bits gives the correctly rounded result.
float roundToOddFloat(double v) {
  if (!std::isfinite(v)) return float(v);
  float f = float(v);
  if (std::fabs(double(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);  // truncate toward zero
  if (double(f) != v) f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
  return f;
}
}  // namespace

void setRounded(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DType::F16 || t.dtype() == DType::BF16)
    t.setDouble(i, double(roundToOddFloat(v)));
  else
    t.setDouble(i, v);
}

Tensor fromDoublesRounded(DType dtype, Shape shape, std::span<const double> values) {
  if (dtype != DType::F16 && dtype != DType::BF16) return Tensor::fromDoubles(dtype, std::move(shape), values);
  Tensor t(dtype, std::move(shape));
  if (int64_t(values.size()) != t.numElements())
    fail("tensor " + t.type().toString() + " given " + std::to_string(values.size()) + " values");
  for (size_t i = 0; i < values.size(); ++i) setRounded(t, int64_t(i), values[i]);
  return t;
}

int64_t evalAxis(const Node& node, int64_t axis, int64_t rank) {
  std::optional<int64_t> a = normalizeAxis(axis, rank);
  if (!a)
    failNode(node, "axis " + std::to_string(axis) + " is out of range for an input of rank " + std::to_string(rank));
  return *a;
}

void requireType(const Node& node, const Tensor& t, const TensorType& want, size_t output) {
  if (t.type() != want && isSpecialized(node)) fail(specializedMismatch(node, output, t.type()));
  if (t.type() != want)
    failNode(node, "output " + std::to_string(output) + " computes as " + t.type().toString() + " but " +
                       want.toString() + " was inferred (an input changed since inference?)");
}

AxisSplit splitAtAxis(const Shape& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
    if (d < axis) s.outer *= shape[size_t(d)];
    else if (d == axis) s.extent = shape[size_t(d)];
    else s.inner *= shape[size_t(d)];
  }
  return s;
}

}  // namespace tessera::ops
