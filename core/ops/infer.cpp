#include "ops/infer.h"

#include <algorithm>

#include "ir/error.h"
#include "ops/registry.h"
#include "ops/specialize.h"
#include "ops/stats.h"

namespace tessera {

const Tensor* ConstantTable::find(const Value* v) const {
  if (const Tensor* t = v->initializer()) return t;
  auto it = known_.find(v);
  return it == known_.end() ? nullptr : &it->second;
}

std::vector<TensorType> inferNode(const Node& node, const ConstantTable& constants, bool runValues) {
  const OpSchema* known = OpRegistry::instance().find(node.op());
  if (!known) {  // an opaque node: its outputs keep the types its model declared (the importers require them)
    std::vector<TensorType> declared;
    for (const Value* out : node.outputs()) declared.push_back(out->type());
    return declared;
  }
  const OpSchema& schema = *known;
  auto arityError = [&](const std::string& what, size_t n, int lo, int hi) {
    fail("node '" + node.id() + "' (" + node.op() + "): has " + std::to_string(n) + " " + what + ", expected " +
         (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)));
  };
  size_t nin = node.numInputs();
  while (nin > 0 && !node.input(nin - 1)) --nin;  // trailing omitted optionals do not count
  if (int(nin) > schema.maxInputs || int(node.numInputs()) < schema.minInputs)
    arityError("inputs", node.numInputs(), schema.minInputs, schema.maxInputs);
  for (int i = 0; i < schema.minInputs; ++i)
    if (!node.input(size_t(i))) fail("node '" + node.id() + "' (" + node.op() + "): required input " +
                                     std::to_string(i) + " is missing");
  if (int(node.numOutputs()) < schema.minOutputs || int(node.numOutputs()) > schema.maxOutputs)
    arityError("outputs", node.numOutputs(), schema.minOutputs, schema.maxOutputs);
  InferContext ctx(node, [&](const Value* v) { return constants.find(v); }, runValues);
  ctx.outputs.resize(node.numOutputs());
  try {
    schema.infer(ctx);
  } catch (const NeedsValuesError&) {  // a data-dependent shape: the types measured when it was specialized
    if (std::optional<std::vector<TensorType>> kept = specializedTypes(node); kept && !runValues) return *kept;
    throw;
  }
  if (ctx.outputs.size() != node.numOutputs())
    fail("node '" + node.id() + "' (" + node.op() + "): inference produced the wrong number of outputs");
  for (const TensorType& t : ctx.outputs) numElements(t.shape);  // rejects negative extents
  return ctx.outputs;
}

namespace {
bool inputsKnown(const Node& node, const ConstantTable& constants) {
  for (Value* in : node.inputs())
    if (in && !constants.find(in)) return false;
  return true;
}

// Shape and Size depend only on the static type of their input.
Tensor evalShapeOf(const Node& node) {
  const Shape& s = node.input(0)->shape();
  if (node.op() == "Size") return Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{numElements(s)});
  std::vector<int64_t> dims = shapeSlice(node, s);
  return Tensor::fromInts(DType::I64, {int64_t(dims.size())}, dims);
}
}  // namespace

void propagateConstants(const Node& node, ConstantTable& constants) {
  if (node.op() == "Shape" || node.op() == "Size") {
    constants.set(node.output(0), evalShapeOf(node));
    return;
  }
  const OpSchema* known = OpRegistry::instance().find(node.op());
  if (!known) return;  // an opaque node: nothing knows what it computes
  const OpSchema& schema = *known;
  bool random = schema.traits.random || schema.traits.randomInTraining;  // Dropout
  if (!schema.eval || random || !evalCostBounded(node) || !inputsKnown(node, constants)) return;
  std::vector<TensorType> types;
  int64_t total = 0;
  for (Value* out : node.outputs()) {
    types.push_back(out->type());
    total += out->type().numElements();
  }
  bool makesContainer = std::any_of(types.begin(), types.end(), [](const TensorType& t) { return !t.isTensor(); });
  if (makesContainer)  // its type holds no size: count what it may hold, its inputs
    for (Value* in : node.inputs())
      if (in && in->type().isTensor()) total += in->type().numElements();
  if (total > kMaxFoldElements) return;
  if (nodeFlops(node) > kMaxFoldFlops) return;
  if (total > kAlwaysFoldElements && constants.foldedElements() + total > kMaxFoldTotalElements) return;
  std::vector<const Tensor*> ins;
  for (Value* in : node.inputs()) ins.push_back(in ? constants.find(in) : nullptr);
  std::vector<Tensor> outs = schema.eval(node, ins, types);
  for (size_t i = 0; i < outs.size() && i < node.numOutputs(); ++i) constants.set(node.output(i), std::move(outs[i]));
}

ConstantTable inferTypes(Graph& graph) {
  ConstantTable constants;
  for (Node* node : graph.topoOrder()) {
    std::vector<TensorType> types = inferNode(*node, constants);
    for (size_t i = 0; i < types.size(); ++i) node->output(i)->setType(types[i]);
    propagateConstants(*node, constants);
  }
  return constants;
}

}  // namespace tessera
