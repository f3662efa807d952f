#pragma once
// Lowering of one fused group to a loop nest. Independent of the fusion pass's types: a group is a list of
// node ids in topological order. The lowering picks the structure from the ops it finds (gemm, conv, pool,
// row reduction, data movement, pointwise) and throws Error naming the node and op it cannot lower.
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kernel/kernel_ir.h"

namespace tessera::kernel {

struct KernelSpec {
  std::string id;    // the group id; becomes Kernel::id
  std::string kind;  // the fusion kind, informative (the lowering checks the ops themselves)
  std::vector<std::string> nodeIds;  // in topological order
  Tf32Policy tf32;   // Kernel::allowTf32 is the entry for the kind the lowering finds
  Machine machine = Machine::Gpu;  // becomes Kernel::machine: the backend the schedule is for
};

Kernel lowerToLoops(const Graph& g, const KernelSpec& spec);

}  // namespace tessera::kernel
