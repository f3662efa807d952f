#pragma once
// Runs a graph with the ops' reference semantics: the loop under the reference interpreter
// (runtime/reference), kept here so that control-flow ops can run their bodies with it.
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/cancel.h"
#include "ir/graph.h"

namespace tessera {

struct GraphEvalOptions {
  bool keepAll = false;  // keep every value, not only the graph's outputs
  std::function<void(const Node&, size_t index, size_t total)> progress;  // before each node
  CancelToken cancel;                                                     // asked before each node
  // Stop before the first node the reference cannot run (an op unknown to Tessera, there or in its subgraphs;
  // ops/registry.h) instead of throwing: the result then says where, and holds what was computed before it.
  bool stopWithoutSemantics = false;
};

struct GraphEvalResult {
  std::vector<Tensor> outputs;                     // in graph output order; empty when the run stopped
  std::unordered_map<std::string, Tensor> values;  // by value name, when keepAll
  std::string stopped;    // why the run stopped early (noSemanticsMessage), "" when it ran every node
  std::string stoppedAt;  // the id of the node it stopped before
};

// One node's reference semantics on its inputs (null for an omitted optional input); checks the outputs' count
// and types against the graph's. Throws Error naming the node.
std::vector<Tensor> evalNode(const Node& node, const std::vector<const Tensor*>& inputs);
// The same, with `cancel` asked before each node of its subgraphs (a Loop run on the host can be stopped).
std::vector<Tensor> evalNode(const Node& node, const std::vector<const Tensor*>& inputs, const CancelToken& cancel);

// Every node in topological order, dropping intermediates after their last use. `inputs` in graph input order
// (captures included), each of the input's type.
GraphEvalResult evalGraph(const Graph& graph, const std::vector<Tensor>& inputs, const GraphEvalOptions& options = {});

}  // namespace tessera
