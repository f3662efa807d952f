// Optional ops: Optional (wraps a tensor or a sequence, or makes an empty optional of attribute `type`),
// OptionalHasElement, OptionalGetElement. Whether an optional holds its element is data, so OptionalGetElement of
// an optional tensor needs the optional's value to type its output (a constant, or the sample inputs it is
// specialized on); of an optional sequence it does not (a sequence's type has no shape).
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/sequence_support.h"

namespace tessera::ops {
namespace {

void inferOptional(InferContext& ctx) {
  if (ctx.hasInput(0)) {
    const TensorType& t = ctx.input(0);
    if (t.isOptional()) ctx.error("input 0 is already an optional (" + t.toString() + ")");
    ctx.outputs[0] = TensorType::container(t.isTensor() ? ValueKind::Optional : ValueKind::OptionalSequence, t.dtype);
    return;
  }
  const Attribute* type = ctx.node().attr("type");
  if (!type || type->kind() != AttrKind::String) ctx.error("needs an input or attribute 'type' (the element's type)");
  std::optional<TensorType> element = TensorType::fromString(type->s());
  if (!element || element->isOptional())
    ctx.error("attribute 'type' = '" + type->s() + "' is not the type of a tensor or a sequence");
  ctx.outputs[0] = TensorType::container(element->isTensor() ? ValueKind::Optional : ValueKind::OptionalSequence,
                                         element->dtype);
}

std::vector<Tensor> evalOptional(const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  const Tensor* x = in.empty() ? nullptr : in[0];
  return {Tensor::optional(types[0], x ? std::optional<Tensor>(*x) : std::nullopt)};
}

void inferHasElement(InferContext& ctx) { ctx.outputs[0] = {DType::Bool, {}}; }

std::vector<Tensor> evalHasElement(const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
  const Tensor* x = in.empty() ? nullptr : in[0];
  bool has = x && (!x->type().isOptional() || !x->elements().empty());
  return {Tensor::fromInts(DType::Bool, {}, std::vector<int64_t>{has})};
}

void inferGetElement(InferContext& ctx) {
  const TensorType& t = ctx.input(0);
  if (!t.isOptional()) {  // opset 18: a tensor or a sequence is its own element
    ctx.outputs[0] = t;
    return;
  }
  if (t.isSequence()) {
    ctx.outputs[0] = TensorType::container(ValueKind::Sequence, t.dtype);
    return;
  }
  const Tensor& value = ctx.requireConstant(0, "input");
  if (value.elements().empty()) ctx.error("input 0 is an empty optional");
  ctx.outputs[0] = value.elements()[0].type();
}

std::vector<Tensor> evalGetElement(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
  if (!in[0]->type().isOptional()) return {*in[0]};
  if (in[0]->elements().empty()) failNode(node, "input 0 is an empty optional");
  return {in[0]->elements()[0]};
}

}  // namespace

void registerOptionalOps(OpRegistry& r) {
  const OpTraits containers{.containers = true};
  addOp(r, {"Optional", OpCategory::Other, "an optional holding the input, or empty of attribute type", 0, 1, 1, 1, {},
            inferOptional, evalOptional}, containers);
  addOp(r, {"OptionalHasElement", OpCategory::Other, "whether the optional holds a value (a tensor always does)", 0, 1,
            1, 1, {}, inferHasElement, evalHasElement}, containers);
  addOp(r, {"OptionalGetElement", OpCategory::Other, "the value an optional holds (a tensor or sequence: itself)", 1, 1,
            1, 1, {}, inferGetElement, evalGetElement}, containers);
}

}  // namespace tessera::ops
