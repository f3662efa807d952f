// Ops whose outputs are known without reading input data: Constant, ConstantOfShape, Shape, Size, Range.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/error.h"
#include "ops/elementwise_parts.h"
#include "ops/infer.h"
#include "ops/op_support.h"

namespace tessera {

// The extents Shape returns: dims [start, end) with negative values counted from the end, clamped.
std::vector<int64_t> shapeSlice(const Node& node, const Shape& s) {
  int64_t rank = int64_t(s.size());
  int64_t start = node.attrInt("start", 0), end = node.attrInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return {s.begin() + start, s.begin() + end};
}

namespace {
using namespace ops;  // the shared helpers of op_support.h

// The tensor a Constant node holds, from whichever single value attribute it has.
Tensor constantValue(const Node& node) {
  for (const char* unsupported : {"value_string", "value_strings", "sparse_value"})
    if (node.hasAttr(unsupported)) failNode(node, "attribute '" + std::string(unsupported) + "' is not supported");
  std::vector<std::string> given;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints"})
    if (node.hasAttr(name)) given.push_back(name);
  if (given.size() != 1)
    failNode(node, "needs exactly one of the attributes value, value_float, value_floats, value_int, value_ints; "
                   "has " + std::to_string(given.size()));
  const Attribute& a = *node.attr(given[0]);
  try {
    if (given[0] == "value") return a.t();
    if (given[0] == "value_float") return Tensor::scalar(DType::F32, a.f());
    if (given[0] == "value_int") return Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{a.i()});
    if (given[0] == "value_floats") {
      const std::vector<double>& v = a.floats();
      return Tensor::fromDoubles(DType::F32, {int64_t(v.size())}, v);
    }
    const std::vector<int64_t>& v = a.ints();
    return Tensor::fromInts(DType::I64, {int64_t(v.size())}, v);
  } catch (const Error& e) {
    failNode(node, "attribute '" + given[0] + "': " + e.what());
  }
}

OpSchema constantSchema() {
  OpSchema s;
  s.name = "Constant";
  s.category = OpCategory::Constant;
  s.summary = "y = the tensor held in the node's value attribute";
  s.minInputs = s.maxInputs = 0;
  s.infer = [](InferContext& ctx) { ctx.outputs[0] = constantValue(ctx.node()).type(); };
  s.eval = [](const Node& node, const std::vector<const Tensor*>&, const std::vector<TensorType>& types) {
    Tensor y = constantValue(node);
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

// The fill value of ConstantOfShape: attribute 'value' (one element), default f32 0.
Tensor fillValue(const Node& node) {
  const Attribute* a = node.attr("value");
  if (!a) return Tensor::scalar(DType::F32, 0.0);
  if (a->kind() != AttrKind::Tensor) failNode(node, "attribute 'value' must be a tensor");
  if (a->t().numElements() != 1)
    failNode(node, "attribute 'value' must hold one element but is " + a->t().type().toString());
  return a->t();
}

Shape shapeFromTensor(const InferContext& ctx, const Tensor& t) {
  Shape s = t.toInts();
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] < 0) ctx.error("input 0 (shape) has a negative extent " + std::to_string(s[i]) + " at index " +
                            std::to_string(i));
  return s;
}

OpSchema constantOfShapeSchema() {
  OpSchema s;
  s.name = "ConstantOfShape";
  s.category = OpCategory::Constant;
  s.summary = "y = a tensor of the given shape filled with attribute 'value'";
  s.shapeInputs = {0};
  s.infer = [](InferContext& ctx) {
    if (ctx.input(0).dtype != DType::I64) ctx.error("input 0 (shape) must be i64 but is " + ctx.input(0).toString());
    requireRank(ctx, 0, 1);
    Shape shape = shapeFromTensor(ctx, ctx.requireConstant(0, "shape"));
    ctx.outputs[0] = {fillValue(ctx.node()).dtype(), shape};
  };
  s.eval = [](const Node& node, const std::vector<const Tensor*>&, const std::vector<TensorType>& types) {
    Tensor value = fillValue(node);
    Tensor y = Tensor::uninitialized(value.dtype(), types[0].shape);  // strings: empty ones, as Tensor makes
    size_t es = dtypeSize(y.dtype());
    std::byte* out = y.mutableBytes().data();
    const std::byte* one = value.bytes().data();
    const int64_t n = y.numElements();  // once: numElements() multiplies the shape out on every call
    // Whole elements of the common sizes (a memcpy call per element took most of a light model's weights' time).
    auto fill = [&](auto word) {
      std::memcpy(&word, one, sizeof(word));
      std::fill_n(reinterpret_cast<decltype(word)*>(out), n, word);
    };
    if (es == 4) fill(uint32_t(0));
    else if (es == 2) fill(uint16_t(0));
    else if (es == 8) fill(uint64_t(0));
    else if (es == 1) fill(uint8_t(0));
    else for (int64_t i = 0; i < n; ++i) std::memcpy(out + size_t(i) * es, one, es);
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

OpSchema shapeSchema() {
  OpSchema s;
  s.name = "Shape";
  s.category = OpCategory::Constant;
  s.summary = "y = the extents of x (dims [start, end)) as i64";
  s.traits = {.shapeOnly = true};
  s.infer = [](InferContext& ctx) {
    ctx.outputs[0] = {DType::I64, {int64_t(shapeSlice(ctx.node(), ctx.input(0).shape).size())}};
  };
  s.eval = [](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    std::vector<int64_t> dims = shapeSlice(node, in[0]->shape());
    Tensor y = Tensor::fromInts(DType::I64, {int64_t(dims.size())}, dims);
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

OpSchema sizeSchema() {
  OpSchema s;
  s.name = "Size";
  s.category = OpCategory::Constant;
  s.summary = "y = the number of elements of x as an i64 scalar";
  s.traits = {.shapeOnly = true};
  s.infer = [](InferContext& ctx) { ctx.outputs[0] = {DType::I64, {}}; };
  s.eval = [](const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
    return std::vector<Tensor>{Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{in[0]->numElements()})};
  };
  return s;
}

// Number of elements of Range(start, limit, delta): max(ceil((limit - start) / delta), 0). Integers exactly.
int64_t rangeLength(const Node& node, const Tensor& start, const Tensor& limit, const Tensor& delta) {
  if (isFloat(start.dtype())) {
    double d = delta.getDouble(0);
    if (d == 0 || !std::isfinite(d)) failNode(node, "delta must be finite and non-zero");
    double n = std::ceil((limit.getDouble(0) - start.getDouble(0)) / d);
    if (!(n < 9e18)) failNode(node, "the range is too long or not finite");
    return n > 0 ? int64_t(n) : 0;  // n may be -inf (an infinite start): never convert that to int64
  }
  int64_t d = delta.getInt(0), span = 0;
  if (d == 0) failNode(node, "delta must be non-zero");
  if (__builtin_sub_overflow(limit.getInt(0), start.getInt(0), &span)) failNode(node, "limit - start overflows i64");
  if ((span > 0) != (d > 0) || span == 0) return 0;
  return span / d + (span % d != 0);
}

OpSchema rangeSchema() {
  OpSchema s;
  s.name = "Range";
  s.category = OpCategory::Constant;
  s.summary = "y = start, start + delta, ... while before limit";
  s.minInputs = s.maxInputs = 3;
  s.shapeInputs = {0, 1, 2};
  s.infer = [](InferContext& ctx) {
    const char* names[] = {"start", "limit", "delta"};
    for (size_t i = 0; i < 3; ++i) {
      requireDType(ctx, i, DTypeClass::Numeric);
      requireSameDType(ctx, 0, i);
      if (ctx.input(i).numElements() != 1)
        ctx.error("input " + std::to_string(i) + " (" + names[i] + ") must be a scalar but is " +
                  ctx.input(i).toString());
    }
    int64_t n = rangeLength(ctx.node(), ctx.requireConstant(0, "start"), ctx.requireConstant(1, "limit"),
                            ctx.requireConstant(2, "delta"));
    if (n > Tensor::kMaxTensorBytes / int64_t(dtypeSize(ctx.input(0).dtype)))
      ctx.error("the range has " + std::to_string(n) + " elements, more than the 16 GiB limit");
    ctx.outputs[0] = {ctx.input(0).dtype, {n}};
  };
  s.eval = [](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    int64_t n = rangeLength(node, *in[0], *in[1], *in[2]);
    if (Shape{n} != types[0].shape)
      failNode(node, "the range has " + std::to_string(n) + " elements but " + types[0].toString() + " was inferred");
    Tensor y(types[0].dtype, {n});
    if (isFloat(y.dtype())) {
      double start = in[0]->getDouble(0), delta = in[2]->getDouble(0);
      for (int64_t i = 0; i < n; ++i) setRounded(y, i, start + double(i) * delta);
    } else {
      int64_t start = in[0]->getInt(0), delta = in[2]->getInt(0);
      for (int64_t i = 0; i < n; ++i) y.setInt(i, start + i * delta);
    }
    return std::vector<Tensor>{y};
  };
  return s;
}

}  // namespace

void registerConstantOps(OpRegistry& r) {
  ops::addOp(r, constantSchema());
  ops::addOp(r, constantOfShapeSchema());
  ops::addOp(r, shapeSchema());
  ops::addOp(r, sizeSchema());
  ops::addOp(r, rangeSchema());
}

}  // namespace tessera
