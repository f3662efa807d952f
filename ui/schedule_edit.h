#pragma once
// Schedule edits as data: the trace a kernel gets when its template runs with other parameters. The trace is
// made on a fresh lowering of the kernel's group, exactly as a saved schedule replays, so an edit is a schedule
// override like a tuned one (execute::ScheduleSet, keyed by the group's node ids).
#include <QString>

#include "ir/graph.h"
#include "kernel/lower.h"
#include "kernel/templates.h"
#include "kernel/trace.h"

namespace tessera::ui {

// Applies the group's template with `params` (missing ones take their defaults) to a fresh lowering. Throws
// kernel::ScheduleError (naming the loop) or Error when the template refuses the combination.
kernel::Trace traceWithParams(const Graph& graph, const kernel::KernelSpec& spec, const kernel::TemplateParams& params);

// The parameter values recorded in a trace (its set_param steps), in the order recorded.
kernel::TemplateParams paramsOfTrace(const kernel::Trace& trace);

}  // namespace tessera::ui
