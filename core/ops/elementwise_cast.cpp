// Type conversions and pass-through ops: Cast, CastLike, BitCast, Identity, Dropout (inference form).
#include <algorithm>

#include "ops/elementwise_parts.h"
#include "ops/op_support.h"

namespace tessera {
namespace {
using namespace ops;  // the shared helpers of op_support.h

// Converts every element to `to`: floats round once (to integers: truncation toward zero), integers convert
// exactly or wrap like a C cast (to i4 u4 i2 u2 too: ONNX's Cast wraps), anything to bool is "!= 0" (NaN is
// true). To a float8 type, values beyond its range saturate to its largest finite value unless `saturate` is off
// (then infinity or NaN); to f8e8m0 they round as `rounding` says; f4e2m1 always saturates.
Tensor convert(const Tensor& x, DType to, bool saturate, E8M0Rounding rounding) {
  if (to == DType::F8E8M0 || (isFloat8(to) && !saturate)) {
    Tensor y(to, x.shape());
    auto* bits = reinterpret_cast<uint8_t*>(y.mutableBytes().data());
    for (int64_t i = 0; i < x.numElements(); ++i)
      bits[i] = to == DType::F8E8M0 ? toFloat8E8M0(x.getDouble(i), saturate, rounding)
                                    : toFloat8(x.getDouble(i), to, false);
    return y;
  }
  if (isFloat(x.dtype()) || isFloat(to)) {
    std::vector<double> v = x.toDoubles();
    return fromDoublesRounded(to, x.shape(), v);
  }
  std::vector<int64_t> v = x.toInts();
  return Tensor::fromInts(to, x.shape(), v);
}

// Cast's and CastLike's round_mode (opset 25), which only a cast to f8e8m0 reads; anything else is refused.
std::optional<E8M0Rounding> parseRoundMode(const std::string& mode) {
  if (mode == "up") return E8M0Rounding::Up;
  if (mode == "down") return E8M0Rounding::Down;
  if (mode == "nearest") return E8M0Rounding::Nearest;
  return std::nullopt;
}

void checkRoundMode(const InferContext& ctx) {
  std::string mode = ctx.node().attrString("round_mode", "up");
  if (!parseRoundMode(mode)) ctx.error("attribute 'round_mode' = '" + mode + "' is not up, down or nearest");
}

DType castTarget(const InferContext& ctx) {
  const Attribute* to = ctx.node().attr("to");
  if (!to) ctx.error("attribute 'to' (the ONNX dtype code) is missing");
  if (to->kind() != AttrKind::Int) ctx.error("attribute 'to' must be an int (an ONNX dtype code)");
  std::optional<DType> t = dtypeFromOnnxCode(to->i());
  if (!t)
    ctx.error("attribute 'to' = " + std::to_string(to->i()) +
              " is not a supported dtype code (supported: 1 f32, 10 f16, 16 bf16, 11 f64, 7 i64, 6 i32, 5 i16, "
              "3 i8, 2 u8, 4 u16, 12 u32, 13 u64, 9 bool, 17 f8e4m3fn, 18 f8e4m3fnuz, 19 f8e5m2, 20 f8e5m2fnuz, "
              "21 u4, 22 i4, 23 f4e2m1, 24 f8e8m0, 25 u2, 26 i2)");
  return *t;
}

std::vector<Tensor> evalConvert(const Node& node, const std::vector<const Tensor*>& in,
                                const std::vector<TensorType>& types) {
  E8M0Rounding rounding = parseRoundMode(node.attrString("round_mode", "up")).value_or(E8M0Rounding::Up);
  Tensor y = convert(*in[0], types[0].dtype, node.attrInt("saturate", 1) != 0, rounding);
  requireType(node, y, types[0]);
  return {y};
}

OpSchema castSchema() {
  OpSchema s;
  s.name = "Cast";
  s.category = OpCategory::Pointwise;
  s.summary = "y = x converted to the dtype given by attribute 'to' (ONNX dtype code)";
  s.traits = {.identityWhenTypeKept = true};
  s.infer = [](InferContext& ctx) {
    checkRoundMode(ctx);
    ctx.outputs[0] = {castTarget(ctx), ctx.input(0).shape};
  };
  s.eval = evalConvert;
  return s;
}

OpSchema castLikeSchema() {
  OpSchema s;
  s.name = "CastLike";
  s.category = OpCategory::Pointwise;
  s.summary = "y = x converted to the dtype of the second input";
  s.traits = {.identityWhenTypeKept = true};
  s.minInputs = s.maxInputs = 2;
  s.infer = [](InferContext& ctx) {
    checkRoundMode(ctx);
    ctx.outputs[0] = {ctx.input(1).dtype, ctx.input(0).shape};
  };
  s.eval = evalConvert;
  return s;
}

// BitCast: the same bytes read as dtype `to`, which must have the input's element size.
OpSchema bitCastSchema() {
  OpSchema s;
  s.name = "BitCast";
  s.category = OpCategory::Other;  // no kernel template (see README)
  s.summary = "y = x's bytes reinterpreted as the dtype given by attribute 'to' (same element size)";
  s.infer = [](InferContext& ctx) {
    DType to = castTarget(ctx), from = ctx.input(0).dtype;
    if (dtypeSize(to) != dtypeSize(from))
      ctx.error("casts " + std::string(dtypeName(from)) + " to " + std::string(dtypeName(to)) +
                "; BitCast needs dtypes of the same size");
    ctx.outputs[0] = {to, ctx.input(0).shape};
  };
  s.eval = [](const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    Tensor y(types[0].dtype, types[0].shape);
    std::copy(in[0]->bytes().begin(), in[0]->bytes().end(), y.mutableBytes().begin());
    return std::vector<Tensor>{y};
  };
  return s;
}

OpSchema identitySchema() {
  OpSchema s;
  s.name = "Identity";
  s.category = OpCategory::Pointwise;
  s.summary = "y = x";
  s.traits = {.containers = true, .strings = true};  // a sequence, an optional or strings pass through too
  s.infer = [](InferContext& ctx) { ctx.outputs[0] = ctx.input(0); };
  s.eval = [](const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
    return std::vector<Tensor>{*in[0]};
  };
  return s;
}

// Dropout(data, ratio?, training_mode?) in inference: y = data, mask (optional) all true. Training mode would
// make the result random, so it is refused.
OpSchema dropoutSchema() {
  OpSchema s;
  s.name = "Dropout";
  s.category = OpCategory::Pointwise;
  s.summary = "inference: y = x, mask = true (training mode is refused)";
  s.traits = {.randomInTraining = true};
  s.maxInputs = 3;
  s.maxOutputs = 2;
  s.infer = [](InferContext& ctx) {
    requireDType(ctx, 0, DTypeClass::Float);
    if (ctx.hasInput(1)) {
      requireDType(ctx, 1, DTypeClass::Float);
      if (ctx.input(1).numElements() != 1) ctx.error("input 1 (ratio) must be a scalar");
    }
    if (ctx.hasInput(2)) {
      requireDType(ctx, 2, DTypeClass::Bool);
      if (ctx.input(2).numElements() != 1) ctx.error("input 2 (training_mode) must be a scalar");
      const Tensor* mode = ctx.constantInput(2);
      if (mode && mode->getInt(0)) ctx.error("training_mode = true is not supported (inference only)");
    }
    ctx.outputs[0] = ctx.input(0);
    if (ctx.outputs.size() > 1) ctx.outputs[1] = {DType::Bool, ctx.input(0).shape};
  };
  s.eval = [](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    if (in.size() > 2 && in[2] && in[2]->getInt(0)) failNode(node, "training_mode = true is not supported");
    std::vector<Tensor> out{*in[0]};
    if (types.size() > 1) {
      Tensor mask(DType::Bool, types[1].shape);
      for (int64_t i = 0; i < mask.numElements(); ++i) mask.setInt(i, 1);
      out.push_back(mask);
    }
    return out;
  };
  return s;
}

}  // namespace

void registerConversionOps(OpRegistry& r) {
  ops::addOp(r, castSchema());
  ops::addOp(r, castLikeSchema());
  ops::addOp(r, bitCastSchema());
  ops::addOp(r, identitySchema());
  ops::addOp(r, dropoutSchema());
}

}  // namespace tessera
