#pragma once
// Where a group runs: as a generated kernel, or on the host (a host group), where the reference interpreter's
// semantics run its nodes on the values the kernels before it left (docs/backends.md, "Host groups"). Decided
// once per group, by compileKernels, as a value with its rule and reason; everything after it (the executor,
// the driver's source stage, the tuner, the CLI, the window) reads the decision instead of deciding again.
#include <string>

#include "ir/graph.h"
#include "kernel/kernel_ir.h"
#include "kernel/lower/lower.h"

namespace tessera::execute {

enum class HostRule {
  None,         // a generated kernel
  ControlFlow,  // If, Loop, Scan: the control flow (and the bodies, by the reference) runs on the host
  UnknownOp,    // an op Tessera does not know (another domain, a custom op): no kernel and no reference
                // semantics; a run stops before it
  NoLowering,   // no kernel template lowers the group, or its schedule failed (the reason names node and op)
  NoCodegen,    // a dtype the code generators have no form for (float4)
  DataDependent,  // a node specialized to a data-dependent shape (ops/specialize.h): the host checks its extents
  Containers,     // a node reads or makes a sequence, an optional (ir/shape.h) or strings: such values live on the host
};
// "kernel", "control-flow", "unknown-op", "no-lowering", "dtype", "data-dependent", "container"
const std::string& hostRuleName(HostRule r);

struct Placement {
  HostRule rule = HostRule::None;
  std::string reason;  // one sentence naming the node and op; "" for a kernel
  bool onHost() const { return rule != HostRule::None; }
  bool runs() const { return rule != HostRule::UnknownOp; }  // the reference interpreter can run the group
  // "runs on the host (control-flow): node 'if' (If) runs its subgraphs on the host"
  std::string describe() const;
};

// The part of the decision that needs no lowering: control flow, ops without reference semantics, dtypes
// generated code cannot hold. A kernel placement when none applies (the lowering then decides).
Placement placeBeforeLowering(const Graph& g, const kernel::KernelSpec& spec);
// A host group's kernel: no loops, only its buffers, so that the executor's memory (arena.h) and estimates
// see what it reads and writes: inputs are the values its nodes read from outside the group, outputs the
// values they make that something outside reads (a later group, or the graph's outputs).
kernel::Kernel hostKernel(const Graph& g, const kernel::KernelSpec& spec);

}  // namespace tessera::execute
