// QuantizeLinear and DequantizeLinear (opset 21-23 forms): y = saturate(round_half_even(x / scale) + zero_point)
// and y = (x - zero_point) * scale. The scale (and zero point) is per tensor (one element), per axis (1-D of
// x's extent along `axis`) or blocked (x's rank, `axis` divided into blocks of block_size). Quantized types are
// the 8-, 16- and 32-bit integers Tessera holds, i4 u4 i2 u2, the float8 types and f4e2m1 (no rounding to an
// integer: the quotient rounds once into the float type, saturating unless `saturate` is 0; f4e2m1 always
// saturates). f8e8m0 is a scale type, not a quantized one: refused, as ONNX's QuantizeLinear does.
#include <cmath>
#include <limits>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/quantize.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

// For each element of x, the index of its scale / zero point.
std::vector<int64_t> scaleIndex(const Node& node, const Shape& x, const Shape& scale) {
  int64_t n = numElements(x), rank = int64_t(x.size());
  std::vector<int64_t> at(size_t(n), 0);
  if (numElements(scale) == 1 && scale.size() <= 1) return at;
  int64_t axis = evalAxis(node, node.attrInt("axis", 1), rank), block = node.attrInt("block_size", 0);
  std::vector<int64_t> strides = stridesOf(x);
  if (block <= 0) {
    if (scale != Shape{x[size_t(axis)]})
      failNode(node, "scale " + shapeToString(scale) + " must be a scalar or [" + std::to_string(x[size_t(axis)]) +
                         "] (x's extent along axis " + std::to_string(axis) + ")");
    for (int64_t i = 0; i < n; ++i) at[size_t(i)] = i / strides[size_t(axis)] % x[size_t(axis)];
    return at;
  }
  Shape want = x;
  want[size_t(axis)] = (x[size_t(axis)] + block - 1) / block;
  if (scale != want)
    failNode(node, "blocked scale " + shapeToString(scale) + " must be " + shapeToString(want) + " for block_size " +
                       std::to_string(block));
  std::vector<int64_t> sStrides = stridesOf(want);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < x.size(); ++d) {
      int64_t c = i / strides[d] % x[d];
      off += (int64_t(d) == axis ? c / block : c) * sStrides[d];
    }
    at[size_t(i)] = off;
  }
  return at;
}

const std::initializer_list<DType> kQuantTypes = {DType::I8,         DType::U8,         DType::I16,
                                                  DType::U16,        DType::I32,        DType::U32,
                                                  DType::F8E4M3FN,   DType::F8E4M3FNUZ, DType::F8E5M2,
                                                  DType::F8E5M2FNUZ, DType::I4,         DType::U4,
                                                  DType::F4E2M1,     DType::I2,         DType::U2};

// The zero point is indexed like the scale, so it needs the scale's shape (or one element, like a per-tensor scale:
// ONNX's float8 tests give a [1] zero point to a scalar scale).
void requireZeroPointLikeScale(const InferContext& ctx) {
  bool perTensor = ctx.hasInput(2) && ctx.input(2).numElements() == 1 && ctx.input(1).numElements() == 1;
  if (ctx.hasInput(2) && !perTensor && ctx.input(2).shape != ctx.input(1).shape)
    ctx.error("zero point " + ctx.input(2).toString() + " must have the scale's shape " + ctx.input(1).toString());
}

void inferDequantize(InferContext& ctx) {
  requireDType(ctx, 0, kQuantTypes);
  requireDType(ctx, 1, DTypeClass::Float);
  if (ctx.hasInput(2) && ctx.input(2).dtype != ctx.input(0).dtype)
    ctx.error("x_zero_point " + ctx.input(2).toString() + " must have x's dtype " + ctx.input(0).toString());
  requireZeroPointLikeScale(ctx);
  scaleIndex(ctx.node(), ctx.input(0).shape, ctx.input(1).shape);
  DType out = ctx.input(1).dtype;
  if (int64_t code = ctx.node().attrInt("output_dtype", 0)) {
    std::optional<DType> t = dtypeFromOnnxCode(code);
    if (!t || *t != out) ctx.error("output_dtype " + std::to_string(code) + " must be the scale's dtype");
  }
  ctx.outputs[0] = {out, ctx.input(0).shape};
}

std::vector<Tensor> evalDequantize(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  const Tensor* zp = in.size() > 2 ? in[2] : nullptr;
  std::vector<int64_t> at = scaleIndex(node, x.shape(), in[1]->shape());
  std::vector<double> scale = in[1]->toDoubles(), y(size_t(x.numElements()));
  for (size_t i = 0; i < y.size(); ++i) {
    double z = zp ? zp->getDouble(at[i]) : 0.0;  // exact for the integer types, decoded for float8
    y[i] = (x.getDouble(int64_t(i)) - z) * scale[size_t(at[i])];
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

DType quantizedType(const InferContext& ctx) {
  if (ctx.hasInput(2)) return ctx.input(2).dtype;
  int64_t code = ctx.node().attrInt("output_dtype", 0);
  if (code == 0) return DType::U8;
  std::optional<DType> t = dtypeFromOnnxCode(code);
  if (!t) ctx.error("output_dtype " + std::to_string(code) + " is not a dtype Tessera holds");
  return *t;
}

void inferQuantize(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  requireDType(ctx, 1, DTypeClass::Float);
  DType out = quantizedType(ctx);
  bool ok = false;
  for (DType t : kQuantTypes) ok = ok || t == out;
  if (!ok)
    ctx.error("quantizes to " + std::string(dtypeName(out)) +
              "; QuantizeLinear supports i2 u2 i4 u4 i8 u8 i16 u16 i32 u32, f4e2m1 and the float8 types but f8e8m0");
  requireZeroPointLikeScale(ctx);
  scaleIndex(ctx.node(), ctx.input(0).shape, ctx.input(1).shape);
  ctx.outputs[0] = {out, ctx.input(0).shape};
}

std::vector<Tensor> evalQuantize(const Node& node, const std::vector<const Tensor*>& in,
                                 const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  const Tensor* zp = in.size() > 2 ? in[2] : nullptr;
  std::vector<int64_t> at = scaleIndex(node, x.shape(), in[1]->shape());
  std::vector<double> scale = in[1]->toDoubles();
  DType out = types[0].dtype;
  auto [lo, hi] = quantizedIntegerRange(out).value_or(std::pair<double, double>{0.0, 0.0});
  bool saturate = node.attrInt("saturate", 1) != 0;
  Tensor y(out, types[0].shape);
  auto* bits = reinterpret_cast<uint8_t*>(y.mutableBytes().data());
  for (int64_t i = 0; i < x.numElements(); ++i) {
    // x / scale in the input's precision (f32 for f32 inputs, as the reference divides), then half-to-even.
    double q = x.dtype() == DType::F64 ? x.getDouble(i) / scale[size_t(at[size_t(i)])]
                                       : double(float(x.getDouble(i)) / float(scale[size_t(at[size_t(i)])]));
    double z = zp ? zp->getDouble(at[size_t(i)]) : 0.0;
    if (isFloat8(out)) bits[i] = toFloat8(q + z, out, saturate);
    else if (out == DType::F4E2M1) bits[i] = toFloat4(q + z);
    else y.setInt(i, int64_t(std::clamp(std::nearbyint(q) + z, lo, hi)));
  }
  return {y};
}

}  // namespace

std::optional<std::pair<double, double>> ops::quantizedIntegerRange(DType t) {
  switch (t) {
    case DType::I8: return std::pair{-128.0, 127.0};
    case DType::U8: return std::pair{0.0, 255.0};
    case DType::I16: return std::pair{-32768.0, 32767.0};
    case DType::U16: return std::pair{0.0, 65535.0};
    case DType::I32: return std::pair{-2147483648.0, 2147483647.0};
    case DType::U32: return std::pair{0.0, 4294967295.0};
    case DType::I4: return std::pair{-8.0, 7.0};
    case DType::U4: return std::pair{0.0, 15.0};
    case DType::I2: return std::pair{-2.0, 1.0};
    case DType::U2: return std::pair{0.0, 3.0};
    default: return std::nullopt;
  }
}

void registerQuantizeOps(OpRegistry& r) {
  addOp(r, {"QuantizeLinear", OpCategory::Other, "y = saturate(round_half_even(x / scale) + zero_point), per tensor, "
            "axis or block", 2, 3, 1, 1, {}, inferQuantize, evalQuantize});
  addOp(r, {"DequantizeLinear", OpCategory::Other, "y = (x - zero_point) * scale, per tensor, axis or block", 2, 3, 1,
            1, {}, inferDequantize, evalDequantize});
}

}  // namespace tessera
