#pragma once
// A compiled model: the final graph and one scheduled kernel per group, ready for a backend. Schedules come from
// the template defaults or from saved traces (a ScheduleSet keyed by the group's node ids).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/cancel.h"
#include "ir/graph.h"
#include "kernel/lower/lower.h"
#include "kernel/schedule/trace.h"
#include "runtime/execute/placement.h"

namespace tessera::execute {

struct CompiledKernel {
  kernel::KernelSpec spec;
  // Lowered and scheduled; for a host group no loops, only the buffers it reads and writes (hostKernel).
  kernel::Kernel kernel;
  kernel::Trace trace;    // empty for a host group
  Placement placement;    // a generated kernel, or a host group with the rule and reason (placement.h)
  bool replayed = false;  // the schedule came from a saved trace
  bool onHost() const { return placement.onHost(); }
};

// Saved schedules: key = the group's node ids joined by ',' → trace.
struct ScheduleSet {
  std::map<std::string, kernel::Trace> traces;
  std::string save() const;                     // {"format": "tessera-schedules", "version": 1, "kernels": [...]}
  static ScheduleSet load(const std::string& text);  // throws Error naming the bad field
  static std::string keyOf(const std::vector<std::string>& nodeIds);
};

struct CompiledModel {
  std::shared_ptr<const Graph> graph;
  std::vector<CompiledKernel> kernels;  // in execution order
  std::vector<std::string> staleSchedules;  // saved entries that matched no kernel, or failed to replay: why
  ScheduleSet schedules() const;        // every kernel's trace
};

// Lowers and schedules every group. A group that cannot be a generated kernel (placeBeforeLowering, or the
// lowering refuses it naming the node and op) becomes a host group with the reason, and the rest go on.
// `cancel` is asked before each group (throws Cancelled); `progress` after each (done, total).
CompiledModel compileKernels(std::shared_ptr<const Graph> graph, const std::vector<kernel::KernelSpec>& groups,
                             const ScheduleSet* saved = nullptr, const CancelToken& cancel = {},
                             const std::function<void(size_t done, size_t total)>& progress = {});
// One group per node (the unfused baseline), in topological order, ids "n0", "n1", ..., under `tf32`.
std::vector<kernel::KernelSpec> unfusedGroups(const Graph& graph, kernel::Tf32Policy tf32 = {},
                                              kernel::Machine machine = kernel::Machine::Gpu);

}  // namespace tessera::execute
