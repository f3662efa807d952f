#include "runtime/reference/interpreter.h"

#include <set>

#include "ir/error.h"
#include "ir/random.h"
#include "ops/eval_graph.h"

namespace tessera {

ReferenceResult runReference(const Graph& graph, const std::vector<Tensor>& inputs, const ReferenceOptions& options) {
  GraphEvalOptions o;
  o.keepAll = options.keepAll;
  o.progress = options.progress;
  o.cancel = options.cancel;
  o.stopWithoutSemantics = options.stopWithoutSemantics;
  GraphEvalResult r = evalGraph(graph, inputs, o);
  return {std::move(r.outputs), std::move(r.values), std::move(r.stopped), std::move(r.stoppedAt)};
}

std::unordered_map<std::string, Tensor> runReferenceNodes(const Graph& graph, const std::vector<std::string>& nodeIds,
                                                          const std::unordered_map<std::string, Tensor>& values,
                                                          const CancelToken& cancel) {
  std::set<std::string> wanted(nodeIds.begin(), nodeIds.end());
  std::unordered_map<std::string, Tensor> made;
  for (Node* n : graph.topoOrder()) {
    if (!wanted.erase(n->id())) continue;
    cancel.check();
    std::vector<const Tensor*> ins;
    for (Value* in : n->inputs()) {
      const Tensor* t = nullptr;
      if (in && made.count(in->name())) t = &made.at(in->name());
      else if (in && values.count(in->name())) t = &values.at(in->name());
      else if (in) t = in->initializer();
      if (in && !t) fail("node '" + n->id() + "': input '" + in->name() + "' has no value");
      ins.push_back(t);
    }
    std::vector<Tensor> outs = evalNode(*n, ins, cancel);
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (n->output(i)) made[n->output(i)->name()] = std::move(outs[i]);
  }
  if (!wanted.empty()) fail("no node '" + *wanted.begin() + "' in graph '" + graph.name() + "'");
  return made;
}

}  // namespace tessera
