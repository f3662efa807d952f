#include "ops/stats.h"

#include "ops/registry.h"

namespace tessera {

namespace {
int64_t outElems(const Node& n) {
  int64_t total = 0;
  for (Value* v : n.outputs()) total += v->type().numElements();
  return total;
}
}  // namespace

int64_t nodeFlops(const Node& node) {
  const std::string& op = node.op();
  if (op == "MatMul" || op == "Gemm") {
    // Output elements times the contracted extent, times 2.
    const Value* a = node.input(0);
    if (!a || a->shape().empty()) return 0;
    int64_t k = op == "Gemm" && node.attrInt("transA", 0) ? a->shape().front() : a->shape().back();
    return 2 * outElems(node) * k;
  }
  if (op == "Conv") {
    const Value* w = node.input(1);
    if (!w || w->shape().size() < 2) return 0;
    int64_t perOutput = 1;  // Cin/group * kernel extents
    for (size_t i = 1; i < w->shape().size(); ++i) perOutput *= w->shape()[i];
    return 2 * outElems(node) * perOutput;
  }
  if (op == "ConvTranspose") {
    // Each input element is multiplied into Cout/group x kernel extents outputs (weight [Cin, Cout/group, k...]).
    const Value* x = node.input(0);
    const Value* w = node.input(1);
    if (!x || !w || w->shape().size() < 2) return 0;
    int64_t perInput = 1;
    for (size_t i = 1; i < w->shape().size(); ++i) perInput *= w->shape()[i];
    return 2 * x->type().numElements() * perInput;
  }
  if (op == "CumSum") return outElems(node);  // one addition an element
  const OpSchema* s = OpRegistry::instance().find(op);
  if (!s) return 0;
  switch (s->category) {
    case OpCategory::Pointwise: return outElems(node);
    case OpCategory::Reduction: return node.input(0) ? node.input(0)->type().numElements() : 0;
    default: return 0;
  }
}

GraphStats graphStats(const Graph& graph) {
  GraphStats s;
  for (Node* n : graph.nodes()) {
    s.nodes++;
    s.flops += nodeFlops(*n);
    s.opCounts[n->op()]++;
  }
  for (Value* v : graph.initializers()) {
    s.parameters += v->type().numElements();
    s.parameterBytes += v->type().bytes();
  }
  return s;
}

}  // namespace tessera
