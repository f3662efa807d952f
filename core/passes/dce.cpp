#include "passes/dce.h"

#include <unordered_set>

namespace tessera {
namespace {

// Nodes from which some graph output can be reached, found by walking back from the outputs.
std::unordered_set<const Node*> liveNodes(const Graph& graph) {
  std::unordered_set<const Node*> live;
  std::vector<const Node*> work;
  for (const Value* o : graph.outputs())
    if (o->producer() && live.insert(o->producer()).second) work.push_back(o->producer());
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    for (const Value* in : n->inputs())
      if (in && in->producer() && live.insert(in->producer()).second) work.push_back(in->producer());
  }
  return live;
}

class DcePass : public Pass {
 public:
  std::string name() const override { return "dce"; }
  std::string summary() const override { return "remove nodes and initializers that no graph output needs"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"removed-nodes", "nodes whose outputs reach no graph output"},
            {"removed-initializers", "initializers nobody reads"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    std::unordered_set<const Node*> live = liveNodes(graph);
    std::vector<Node*> order = graph.topoOrder();
    // Consumers first, so each node is unused by the time it is removed.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* n = *it;
      if (live.count(n)) continue;
      bool used = false;  // only possible when the fuel stopped a consumer's removal
      for (Value* out : n->outputs()) used |= !out->uses().empty() || out->isGraphOutput();
      if (used || !ctx.tryRewrite()) continue;
      graph.removeNode(n);
      ctx.count("removed-nodes");
    }
    for (Value* v : graph.initializers())
      if (v->uses().empty() && !v->isGraphOutput() && ctx.tryRewrite()) {
        graph.removeValue(v);
        ctx.count("removed-initializers");
      }
  }
};

}  // namespace

std::unique_ptr<Pass> createDcePass() { return std::make_unique<DcePass>(); }

}  // namespace tessera
