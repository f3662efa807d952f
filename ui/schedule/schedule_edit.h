#pragma once
// Schedule edits as data: the trace a kernel gets when its template runs with other parameters
// (kernel::traceWithParams, made on a fresh lowering of the kernel's group exactly as a saved schedule replays),
// so an edit is a schedule override like a tuned one (execute::ScheduleSet, keyed by the group's node ids).
#include <QString>

#include "kernel/templates/templates.h"
#include "kernel/schedule/trace.h"

namespace tessera::ui {

// The parameter values recorded in a trace (its set_param steps), in the order recorded.
kernel::TemplateParams paramsOfTrace(const kernel::Trace& trace);

}  // namespace tessera::ui
