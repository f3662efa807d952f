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

namespace tessera::execute {

struct CompiledKernel {
  kernel::KernelSpec spec;
  kernel::Kernel kernel;  // lowered and scheduled; empty body when `error` is set
  kernel::Trace trace;
  std::string error;      // lowering or scheduling failed: why (the kernel cannot be generated)
  bool replayed = false;  // the schedule came from a saved trace
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

// Lowers and schedules every group; a group that cannot be lowered keeps its error and the rest go on.
// `cancel` is asked before each group (throws Cancelled); `progress` after each (done, total).
CompiledModel compileKernels(std::shared_ptr<const Graph> graph, const std::vector<kernel::KernelSpec>& groups,
                             const ScheduleSet* saved = nullptr, const CancelToken& cancel = {},
                             const std::function<void(size_t done, size_t total)>& progress = {});
// One group per node (the unfused baseline), in topological order, ids "n0", "n1", ..., under `tf32`.
std::vector<kernel::KernelSpec> unfusedGroups(const Graph& graph, kernel::Tf32Policy tf32 = {},
                                              kernel::Machine machine = kernel::Machine::Gpu);

}  // namespace tessera::execute
