#include "passes/decompose_quant.h"

#include "ops/registry.h"
#include "passes/decompose_emitter.h"

namespace tessera {
namespace {
using decompose::Emitter;

// ONNX's Cast codes for the types used here.
constexpr int64_t kToF32 = 1, kToI32 = 6, kToF64 = 11;

// The inputs of the four forms: operands, their zero points and scales, the output's scale and zero point, bias.
struct Operands {
  Value *a = nullptr, *aZero = nullptr, *aScale = nullptr;
  Value *b = nullptr, *bZero = nullptr, *bScale = nullptr;
  Value *yScale = nullptr, *yZero = nullptr, *bias = nullptr;
};

Operands operandsOf(const Node& n) {
  auto in = [&](size_t i) { return i < n.numInputs() ? n.input(i) : nullptr; };
  if (n.op() == "MatMulInteger" || n.op() == "ConvInteger") return {in(0), in(2), nullptr, in(1), in(3)};
  return {in(0), in(2), in(1), in(3), in(5), in(4), in(6), in(7), in(8)};
}

Value* cast(Emitter& e, const std::string& name, Value* x, int64_t to) {
  return e.op(name, "Cast", {x}, {{"to", to}});
}

// A per-axis vector of `extent` values laid along axis `axis` of a rank-`rank` result: [extent, 1, ..., 1] with
// rank - 1 - axis ones. One value, or a vector along the last axis, broadcasts as it is.
Value* alongAxis(Emitter& e, const std::string& name, Value* v, int64_t rank, int64_t axis) {
  const Shape& s = v->shape();
  if (s.size() != 1 || s[0] == 1 || axis == rank - 1) return v;
  Shape to{s[0]};
  for (int64_t i = axis + 1; i < rank; ++i) to.push_back(1);
  return e.reshape(name, v, to);
}

// x - zero in i32 (x and zero are 8-bit); zero per tensor or per `axis` of x.
Value* shifted(Emitter& e, const std::string& name, Value* x, Value* zero, int64_t axis) {
  Value* wide = cast(e, name + "_i32", x, kToI32);
  if (!zero || numElements(zero->shape()) == 0) return wide;
  int64_t rank = int64_t(x->shape().size());
  Value* z = alongAxis(e, name + "_zero_axis", cast(e, name + "_zero_i32", zero, kToI32), rank, axis < 0 ? rank + axis : axis);
  return e.op(name, "Sub", {wide, z});
}

// The largest |partial sum| a convolution of zero-shifted 8-bit values can reach: every term is at most 255²
// (a shifted u8 or i8 spans at most 255 either way), and there are C/group · kernel taps of them.
double convSumBound(const Value* w) {
  const Shape& s = w->shape();
  double taps = 1;
  for (size_t i = 1; i < s.size(); ++i) taps *= double(s[i]);
  return taps * 255.0 * 255.0;
}

// The exact zero-shifted product: i32 for a matrix product; for a convolution, in the narrowest float type that
// holds every partial sum exactly (Conv is float-only), so any summation order gives the same result.
Value* exactProduct(Emitter& e, const Node& n, const Operands& o, bool matmul, bool keepFloat) {
  Value* a = shifted(e, "a", o.a, o.aZero, matmul ? -2 : 0);
  Value* b = shifted(e, "b", o.b, o.bZero, matmul ? -1 : 0);
  if (matmul) return e.op("product", "MatMul", {a, b});
  int64_t to = convSumBound(o.b) < double(1 << 24) ? kToF32 : kToF64;
  Value* y = e.op("product", "Conv", {cast(e, "a_float", a, to), cast(e, "b_float", b, to)}, n.attrs());
  return keepFloat ? y : cast(e, "product_i32", y, kToI32);
}

// QLinear*: (product + bias) · (a_scale · b_scale / y_scale), the factor formed in the scales' type as the
// reference does, the rest in f64; rounded half to even, plus y_zero, saturated to the output's 8 bits.
Value* requantized(Emitter& e, const Node& n, const Operands& o, bool matmul) {
  Value* acc = exactProduct(e, n, o, matmul, true);
  int64_t rank = int64_t(n.output(0)->shape().size());
  int64_t channelAxis = matmul ? rank - 1 : 1;
  // In f64 from here: the product is an integer exact in it, and so is its sum with any i32 bias (which f32
  // would round above 2^24), as the reference adds them.
  if (acc->dtype() != DType::F64) acc = cast(e, "acc_f64", acc, kToF64);
  if (o.bias) acc = e.op("biased", "Add", {acc, alongAxis(e, "bias_axis", cast(e, "bias_f64", o.bias, kToF64), rank, channelAxis)});
  Value* factor = e.op("factor", "Div", {e.op("scale_product", "Mul", {o.aScale, o.bScale}), o.yScale});
  factor = alongAxis(e, "factor_axis", cast(e, "factor_f64", factor, kToF64), rank, channelAxis);
  Value* rounded = e.op("rounded", "Round", {e.op("scaled", "Mul", {acc, factor})});
  Value* y = e.op("shifted_y", "Add", {rounded, cast(e, "y_zero_f64", o.yZero, kToF64)});
  bool u8 = n.output(0)->dtype() == DType::U8;
  y = e.op("saturated", "Clip", {y, e.scalar("lo", u8 ? 0 : -128, DType::F64), e.scalar("hi", u8 ? 255 : 127, DType::F64)});
  return cast(e, "out", y, u8 ? 2 : 3);  // 2: uint8, 3: int8
}

}  // namespace

bool isQuantizedProduct(const std::string& op) {
  return op == "MatMulInteger" || op == "ConvInteger" || op == "QLinearMatMul" || op == "QLinearConv";
}

Value* quantizedProductAsPrimitives(Graph& g, const Node& n) {
  if (!isQuantizedProduct(n.op())) return nullptr;
  for (const char* op : {"Cast", "Sub", "MatMul", "Conv", "Reshape", "Add", "Mul", "Div", "Round", "Clip"})
    if (!OpRegistry::instance().find(op)) return nullptr;
  Operands o = operandsOf(n);
  bool matmul = n.op() == "MatMulInteger" || n.op() == "QLinearMatMul";
  if (o.b->shape().size() < (matmul ? 1u : 3u)) return nullptr;
  bool integer = n.op() == "MatMulInteger" || n.op() == "ConvInteger";
  // The factor matches the reference's rounding for f32 and f16 scales of one type (bf16's it forms in f64).
  if (!integer) {
    DType st = o.aScale->dtype();
    if ((st != DType::F32 && st != DType::F16) || o.bScale->dtype() != st || o.yScale->dtype() != st) return nullptr;
  }
  Emitter e(g, n);
  if (integer) return exactProduct(e, n, o, matmul, false);
  return requantized(e, n, o, matmul);
}

std::vector<Value*> dynamicQuantizeAsPrimitives(Graph& g, const Node& n) {
  Value* x = n.input(0);
  if (x->dtype() != DType::F32) return {};
  for (const char* op : {"ReduceMin", "ReduceMax", "Min", "Max", "Sub", "Div", "Equal", "Where", "Round", "Add", "Clip", "Cast"})
    if (!OpRegistry::instance().find(op)) return {};
  Emitter e(g, n);
  auto f32 = [&](const std::string& name, double v) { return e.scalar(name, v, DType::F32); };
  Value* zeroF = f32("zero", 0);
  Value* lo = e.op("lo", "Min", {e.op("min", "ReduceMin", {x}, {{"keepdims", int64_t(0)}}), zeroF});
  Value* hi = e.op("hi", "Max", {e.op("max", "ReduceMax", {x}, {{"keepdims", int64_t(0)}}), zeroF});
  Value* scale = e.op("scale", "Div", {e.op("range", "Sub", {hi, lo}), f32("levels", 255)});
  Value* divisor = e.op("divisor", "Where", {e.op("flat", "Equal", {scale, zeroF}), f32("one", 1), scale});
  Value *byteLo = f32("byte_lo", 0), *byteHi = f32("byte_hi", 255);
  Value* zero = e.op("zero_point", "Clip", {e.op("zero_round", "Round", {e.op("zero_f", "Sub", {zeroF, e.op("lo_steps", "Div", {lo, divisor})})}), byteLo, byteHi});
  Value* y = e.op("y_f", "Clip", {e.op("y_shift", "Add", {e.op("y_round", "Round", {e.op("steps", "Div", {x, divisor})}), zero}), byteLo, byteHi});
  return {cast(e, "out", y, 2), scale, cast(e, "zero_u8", zero, 2)};  // 2: uint8
}

}  // namespace tessera
