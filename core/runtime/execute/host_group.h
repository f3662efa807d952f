#pragma once
// Internal: a host group's turn in a run (placement.h), or that of a kernel whose inputs have other extents on
// this run than it was built for (executor.cpp, otherExtents). Its inputs are copied out of the executor's memory,
// where the kernels before it left them; its nodes run with the reference interpreter's semantics; its outputs
// are copied back for the kernels after it. One call, timed with the copies.
#include <set>
#include <string>

#include "ir/cancel.h"
#include "runtime/execute/arena.h"
#include "runtime/execute/compiled_model.h"

namespace tessera::execute::detail {

// Runs host group `index` of `m`; the milliseconds it took. Throws Error naming the node at fault.
double runHostGroup(const CompiledModel& m, size_t index, Arena& arena, const CancelToken& cancel);

// The values host code may read: the host groups' inputs, and those of every kernel after a specialized node (a
// run whose values give that node other extents runs such a kernel on the host too). A device backend must leave
// them on the host as well. And the values a kernel reads packed (Buffer::packBlock): the arena packs them on the host.
std::set<std::string> valuesReadOnHost(const CompiledModel& m);

}  // namespace tessera::execute::detail
