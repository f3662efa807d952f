#pragma once
// The reference interpreter: executes nodes in topological order with each op's reference semantics,
// freeing intermediates after their last use.
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/cancel.h"
#include "ir/graph.h"
#include "ir/random.h"  // randomInputs: what a run feeds when given none

namespace tessera {

struct ReferenceOptions {
  // Keep every value (for views and for comparing after each pass), not only graph outputs.
  bool keepAll = false;
  // Called before each node (for progress reports).
  std::function<void(const Node&, size_t index, size_t total)> progress;
  CancelToken cancel;  // asked before each node; the run then throws Cancelled
  // Stop before the first node without reference semantics (an op unknown to Tessera) instead of throwing;
  // ReferenceResult::stopped then says why, and `values` hold what was computed before it.
  bool stopWithoutSemantics = false;
};

struct ReferenceResult {
  std::vector<Tensor> outputs;                        // in graph output order; empty when the run stopped
  std::unordered_map<std::string, Tensor> values;     // by value name, when keepAll
  std::string stopped;    // "node 'x' (com.acme::Foo): unknown op ...": why the run stopped early; "" when it did not
  std::string stoppedAt;  // that node's id
};

// `inputs` in graph input order. Throws Error naming the node or input at fault (an op without reference
// semantics too, unless stopWithoutSemantics).
ReferenceResult runReference(const Graph& graph, const std::vector<Tensor>& inputs, const ReferenceOptions& options = {});

// Runs only the nodes `nodeIds` (in the graph's topological order) on `values` (by value name; initializers are
// taken from the graph), which must hold every other value they read; returns the values they produce, by name.
// For checking one kernel (a group of nodes) on the inputs it was given, without running the whole graph.
// `cancel` is asked before each node (and inside control flow).
std::unordered_map<std::string, Tensor> runReferenceNodes(const Graph& graph, const std::vector<std::string>& nodeIds,
                                                          const std::unordered_map<std::string, Tensor>& values,
                                                          const CancelToken& cancel = {});

}  // namespace tessera
