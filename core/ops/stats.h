#pragma once
// Model statistics for `tessera-cli info` and the inspector: FLOPs per node, parameter count, op counts.
#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace tessera {

// Floating-point operations of one node (a multiply-add counts 2). Pointwise ops count one per output
// element, reductions one per input element, data movement zero.
int64_t nodeFlops(const Node& node);

struct GraphStats {
  int64_t nodes = 0;
  int64_t flops = 0;
  int64_t parameters = 0;       // elements of all initializers
  int64_t parameterBytes = 0;
  std::map<std::string, int64_t> opCounts;
};
GraphStats graphStats(const Graph& graph);

}  // namespace tessera
