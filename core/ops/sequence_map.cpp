// SequenceMap: its body (a subgraph) run once per position of its sequence inputs, each output collected into a
// sequence. Inputs: the sequence, further inputs (a sequence gives the body its element at the position, a tensor
// is given whole), then the body's captures. The body's output dtypes follow from the element types of the first
// position, so its inference needs the sequences' values (a constant, or the sample inputs it is specialized on).
#include "ops/control_flow_body.h"
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/sequence_support.h"

namespace tessera::ops {
namespace {

size_t formalInputs(const Node& node) {
  const Graph& body = bodyAttr(node, "body");
  size_t captures = body.numCaptures();
  if (node.numInputs() < captures + 1) failNode(node, "needs a sequence input before the body's outer values");
  return node.numInputs() - captures;
}

void inferSequenceMap(InferContext& ctx) {
  const Graph& body = bodyAttr(ctx.node(), "body");
  size_t formal = formalInputs(ctx.node());
  if (bodyFormalInputs(body) != formal)
    ctx.error("passes " + std::to_string(formal) + " inputs but body takes " +
              std::to_string(bodyFormalInputs(body)));
  if (body.outputs().size() != ctx.node().numOutputs())
    ctx.error("has " + std::to_string(ctx.node().numOutputs()) + " outputs but body gives " +
              std::to_string(body.outputs().size()));
  requireSequence(ctx, 0);
  std::vector<TensorType> first;  // the body's inputs at position 0
  bool empty = false;
  for (size_t j = 0; j < formal; ++j) {
    const TensorType& t = ctx.input(j);
    if (t.isOptional()) ctx.error("input " + std::to_string(j) + " is a " + t.toString() + "; it takes sequences and tensors");
    if (t.isTensor()) {
      first.push_back(t);
      continue;
    }
    const Tensor& s = ctx.requireConstant(j, "a sequence");
    if (s.elements().empty()) empty = true;
    else first.push_back(s.elements()[0].type());
  }
  std::vector<TensorType> out = declaredOutputTypes(body);
  if (!empty)
    if (auto inferred = inferBodyOutputs(ctx, "body", first)) out = *inferred;
  for (size_t k = 0; k < out.size(); ++k) {
    if (!out[k].isTensor()) ctx.error("body output " + std::to_string(k) + " is a " + out[k].toString() + ", not a tensor");
    ctx.outputs[k] = TensorType::container(ValueKind::Sequence, out[k].dtype);
  }
}

std::vector<Tensor> evalSequenceMap(const Node& node, const std::vector<const Tensor*>& in,
                                    const std::vector<TensorType>& types) {
  size_t formal = formalInputs(node);
  size_t n = in[0]->elements().size();
  for (size_t j = 1; j < formal; ++j)
    if (in[j] && in[j]->type().kind == ValueKind::Sequence && in[j]->elements().size() != n)
      failNode(node, "input " + std::to_string(j) + " holds " + std::to_string(in[j]->elements().size()) +
                         " tensors but input 0 holds " + std::to_string(n));
  BodyRunner body(node, "body", in);
  std::vector<std::vector<Tensor>> outs(types.size());
  for (size_t i = 0; i < n; ++i) {
    std::vector<Tensor> args;
    for (size_t j = 0; j < formal; ++j) args.push_back(in[j]->isContainer() ? in[j]->elements()[i] : *in[j]);
    std::vector<Tensor> made = body.run(args);
    for (size_t k = 0; k < types.size(); ++k) outs[k].push_back(std::move(made[k]));
  }
  std::vector<Tensor> result;
  for (size_t k = 0; k < types.size(); ++k) result.push_back(Tensor::sequence(types[k].dtype, std::move(outs[k])));
  return result;
}

}  // namespace

void registerSequenceMapOp(OpRegistry& r) {
  addOp(r, {"SequenceMap", OpCategory::Other, "runs body (a subgraph) on each position of the sequences", 1, kMaxVariadic,
            1, kMaxVariadic, {}, inferSequenceMap, evalSequenceMap},
        {.subgraphs = true, .unboundedEval = true, .containers = true});
}

}  // namespace tessera::ops
