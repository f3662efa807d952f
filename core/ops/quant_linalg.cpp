// Quantized linear algebra: MatMulInteger and ConvInteger ((a - a_zero) x (b - b_zero) exactly, to i32),
// QLinearMatMul and QLinearConv (the same product rescaled by a_scale * b_scale / y_scale, rounded half to even,
// plus y_zero, saturated) and DynamicQuantizeLinear (x to u8 with a scale and zero point from x's range). The
// products reuse MatMul's and Conv's reference semantics on f64 copies of the zero-shifted operands (exact: the
// sums of i32 products of 8-bit values stay far below 2^53).
#include <cmath>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

const std::initializer_list<DType> kQuantized = {DType::I8, DType::U8};

// x - zero as f64, the zero point per tensor (one element) or per row (axis -2, for the left matrix operand) or
// per column/channel (`perAxis` of x, for the right operand or the conv weights).
Tensor shifted(const Tensor& x, const Tensor* zero, int64_t perAxis) {
  std::vector<double> v = x.toDoubles();
  if (zero && zero->numElements() > 0) {
    std::vector<double> z = zero->toDoubles();
    AxisSplit sp = splitAtAxis(x.shape(), perAxis < 0 ? int64_t(x.shape().size()) + perAxis : perAxis);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] -= z.size() == 1 ? z[0] : z[size_t(int64_t(i) / sp.inner % sp.extent)];
  }
  return Tensor::fromDoubles(DType::F64, x.shape(), v);
}

// Runs `op`'s reference semantics (MatMul or Conv, with this node's attributes) on f64 operands.
std::vector<double> product(const std::string& op, const Node& node, const Tensor& a, const Tensor& b,
                            const Shape& out) {
  const OpSchema* s = OpRegistry::instance().find(op);
  std::vector<Tensor> r = s->eval(node, {&a, &b}, {TensorType{DType::F64, out}});
  return r[0].toDoubles();
}

// Output shapes through MatMul's and Conv's own inference on the same operand types.
Shape productShape(InferContext& ctx, const std::string& op, size_t a, size_t b) {
  const OpSchema* s = OpRegistry::instance().find(op);
  Graph g("shape");
  Value* va = g.addInput("a", {DType::F32, ctx.input(a).shape});
  Value* vb = g.addInput("b", {DType::F32, ctx.input(b).shape});
  Node* n = g.addNode(op, {va, vb}, {"y"}, ctx.node().attrs(), ctx.node().id());
  InferContext inner(*n, nullptr);
  inner.outputs.resize(1);
  s->infer(inner);
  return inner.outputs[0].shape;
}

// --- MatMulInteger(A, B, a_zero?, b_zero?) and ConvInteger(x, w, x_zero?, w_zero?) -> i32 ---

// Zero points (and scales) are one value, or one per row of the left operand / column or output channel of the
// right one; `extent` is that count.
void requirePerAxis(const InferContext& ctx, size_t i, int64_t extent, const char* what) {
  if (!ctx.hasInput(i)) return;
  int64_t n = numElements(ctx.input(i).shape);
  if (n != 1 && (n != extent || ctx.input(i).shape.size() != 1))
    ctx.error(std::string(what) + " " + ctx.input(i).toString() + " must hold 1 or " + std::to_string(extent) +
              " values");
}

// The per-axis extents: rows (axis -2) of the left operand and columns (last axis) of the right one for a
// matrix product; for a convolution, input channels have one zero point and output channels (W's dim 0) one each.
std::pair<int64_t, int64_t> perAxisExtents(const InferContext& ctx, bool matmul, size_t a, size_t b) {
  const Shape& sa = ctx.input(a).shape;
  const Shape& sb = ctx.input(b).shape;
  if (matmul) return {sa.size() >= 2 ? sa[sa.size() - 2] : 1, sb.empty() ? 1 : sb.back()};
  return {1, sb.empty() ? 1 : sb[0]};
}

void inferInteger(InferContext& ctx) {
  requireDType(ctx, 0, kQuantized);
  requireDType(ctx, 1, kQuantized);
  bool mm = ctx.node().op() == "MatMulInteger";
  ctx.outputs[0] = {DType::I32, productShape(ctx, mm ? "MatMul" : "Conv", 0, 1)};
  auto [rows, cols] = perAxisExtents(ctx, mm, 0, 1);
  requirePerAxis(ctx, 2, rows, "a_zero_point");
  requirePerAxis(ctx, 3, cols, "b_zero_point");
}

std::vector<Tensor> evalInteger(const Node& node, const std::vector<const Tensor*>& in,
                                const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i ? in[i] : nullptr; };
  bool mm = node.op() == "MatMulInteger";
  Tensor a = shifted(*in[0], input(2), mm ? -2 : 0), b = shifted(*in[1], input(3), mm ? -1 : 0);
  std::vector<double> y = product(mm ? "MatMul" : "Conv", node, a, b, types[0].shape);
  return {fromDoublesRounded(DType::I32, types[0].shape, y)};
}

// --- QLinearMatMul(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero) and QLinearConv(x, x_scale, x_zero,
// w, w_scale, w_zero, y_scale, y_zero, B?) ---

void inferQLinear(InferContext& ctx) {
  requireDType(ctx, 0, kQuantized);
  requireDType(ctx, 3, kQuantized);
  std::string op = ctx.node().op() == "QLinearMatMul" ? "MatMul" : "Conv";
  ctx.outputs[0] = {ctx.input(7).dtype, productShape(ctx, op, 0, 3)};
  requireDType(ctx, 7, kQuantized);
  auto [rows, cols] = perAxisExtents(ctx, op == "MatMul", 0, 3);
  requirePerAxis(ctx, 2, rows, "a_zero_point");
  requirePerAxis(ctx, 4, cols, "b_scale");
  requirePerAxis(ctx, 5, cols, "b_zero_point");
  for (size_t i : {1, 6, 7})
    if (numElements(ctx.input(i).shape) != 1)
      ctx.error("input " + std::to_string(i) + " must be one value (per tensor)");
  if (op == "Conv" && ctx.hasInput(8) && ctx.input(8).shape != Shape{cols}) ctx.error("B must be [output channels]");
}

// s rounded to the scales' dtype, as the reference multiplies its scales in that precision.
double inScaleType(double s, DType t) {
  if (t == DType::F16) return halfToFloat(floatToHalf(float(s)));
  return t == DType::F32 ? double(float(s)) : s;
}

std::vector<Tensor> evalQLinear(const Node& node, const std::vector<const Tensor*>& in,
                                const std::vector<TensorType>& types) {
  bool mm = node.op() == "QLinearMatMul";
  Tensor a = shifted(*in[0], in[2], mm ? -2 : 0), b = shifted(*in[3], in[5], mm ? -1 : 0);
  std::vector<double> acc = product(mm ? "MatMul" : "Conv", node, a, b, types[0].shape);
  const Shape& y = types[0].shape;
  // Per-output-channel (conv: dim 1) or per-column (matmul: last dim) weight scales.
  AxisSplit sp = splitAtAxis(y, mm ? int64_t(y.size()) - 1 : 1);
  std::vector<double> as = in[1]->toDoubles(), bs = in[4]->toDoubles(), ys = in[6]->toDoubles();
  std::vector<double> bias = !mm && in.size() > 8 && in[8] ? in[8]->toDoubles() : std::vector<double>{};
  double zero = in[7]->getDouble(0);
  DType st = in[1]->dtype();
  Tensor out(types[0].dtype, y);
  double lo = types[0].dtype == DType::U8 ? 0 : -128, hi = types[0].dtype == DType::U8 ? 255 : 127;
  for (size_t i = 0; i < acc.size(); ++i) {
    size_t ch = size_t(int64_t(i) / sp.inner % sp.extent);
    double factor = inScaleType(inScaleType(as[0] * bs[bs.size() == 1 ? 0 : ch], st) / ys[0], st);
    double v = (acc[i] + (bias.empty() ? 0.0 : bias[ch])) * factor;
    out.setInt(int64_t(i), int64_t(std::clamp(std::nearbyint(v) + zero, lo, hi)));
  }
  return {out};
}

// --- DynamicQuantizeLinear(x) -> y (u8), y_scale, y_zero_point, in f32 as ONNX's function body ---

void inferDynamicQuantize(InferContext& ctx) {
  requireDType(ctx, 0, {DType::F32});
  ctx.outputs[0] = {DType::U8, ctx.input(0).shape};
  if (ctx.outputs.size() > 1) ctx.outputs[1] = {DType::F32, {}};
  if (ctx.outputs.size() > 2) ctx.outputs[2] = {DType::U8, {}};
}

std::vector<Tensor> evalDynamicQuantize(const Node&, const std::vector<const Tensor*>& in,
                                        const std::vector<TensorType>& types) {
  std::vector<double> x = in[0]->toDoubles();
  float lo = 0, hi = 0;  // the range always includes 0
  for (double v : x) lo = std::min(lo, float(v)), hi = std::max(hi, float(v));
  float scale = (hi - lo) / 255.0f;
  float zeroF = scale == 0 ? 0.0f : std::clamp(std::nearbyint(0.0f - lo / scale), 0.0f, 255.0f);
  Tensor y(DType::U8, types[0].shape);
  for (size_t i = 0; i < x.size(); ++i) {
    float q = scale == 0 ? 0.0f : std::nearbyint(float(x[i]) / scale) + zeroF;
    y.setInt(int64_t(i), int64_t(std::clamp(q, 0.0f, 255.0f)));
  }
  std::vector<Tensor> out{y};
  if (types.size() > 1) out.push_back(Tensor::scalar(DType::F32, scale));
  if (types.size() > 2) out.push_back(Tensor::scalar(DType::U8, zeroF));
  return out;
}

}  // namespace

void registerQuantLinalgOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template (see README)
  addOp(r, {"MatMulInteger", other, "i32 = (A - a_zero) x (B - b_zero)", 2, 4, 1, 1, {}, inferInteger, evalInteger});
  addOp(r, {"ConvInteger", other, "i32 = conv(x - x_zero, w - w_zero)", 2, 4, 1, 1, {}, inferInteger, evalInteger});
  addOp(r, {"QLinearMatMul", other, "quantized (a x b) * a_scale * b_scale / y_scale + y_zero", 8, 8, 1, 1, {},
            inferQLinear, evalQLinear});
  addOp(r, {"QLinearConv", other, "quantized (conv(x, w) + B) * x_scale * w_scale / y_scale + y_zero", 8, 9, 1, 1, {},
            inferQLinear, evalQLinear});
  addOp(r, {"DynamicQuantizeLinear", other, "x to u8 with the scale and zero point of x's range (with 0)", 1, 1, 1, 3,
            {}, inferDynamicQuantize, evalDynamicQuantize});
}

}  // namespace tessera
