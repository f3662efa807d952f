#pragma once
// Internal: a host group's turn in a run (placement.h). Its inputs are copied out of the executor's memory,
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

// The values host groups read: a device backend must leave them on the host too.
std::set<std::string> valuesReadOnHost(const CompiledModel& m);

}  // namespace tessera::execute::detail
