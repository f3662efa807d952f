#include "ops/verify.h"

#include <unordered_set>

#include "ir/error.h"
#include "ops/infer.h"
#include "ops/registry.h"

namespace tessera {

std::vector<std::string> verifyGraph(const Graph& graph) {
  std::vector<std::string> problems;
  std::unordered_set<const Value*> owned;
  for (Value* v : graph.values()) owned.insert(v);
  for (Node* n : graph.nodes()) {
    for (size_t i = 0; i < n->numInputs(); ++i) {
      Value* in = n->input(i);
      if (in && !owned.count(in))
        problems.push_back("node '" + n->id() + "': input " + std::to_string(i) + " is a dangling value");
      else if (in && !in->producer() && !in->isGraphInput() && !in->initializer())
        problems.push_back("node '" + n->id() + "': input '" + in->name() + "' has no producer and is not a graph input");
    }
  }
  for (Value* o : graph.outputs())
    if (!owned.count(o)) problems.push_back("graph output is a dangling value");
  std::vector<Node*> order;
  try {
    order = graph.topoOrder();
  } catch (const Error& e) {
    problems.push_back(e.what());
    return problems;
  }
  if (!problems.empty()) return problems;
  // Types: re-infer with constant propagation on a copy and compare with what the graph says.
  Graph copy = graph.clone();
  try {
    inferTypes(copy);
  } catch (const Error& e) {
    problems.push_back(e.what());
    return problems;
  }
  for (Node* n : order) {
    Node* c = copy.findNode(n->id());
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (n->output(i)->type() != c->output(i)->type())
        problems.push_back("node '" + n->id() + "' (" + n->op() + "): output '" + n->output(i)->name() + "' is " +
                           n->output(i)->type().toString() + " but the op gives " + c->output(i)->type().toString());
  }
  return problems;
}

void verifyOrThrow(const Graph& graph) {
  auto problems = verifyGraph(graph);
  if (!problems.empty()) fail(problems.front());
}

}  // namespace tessera
