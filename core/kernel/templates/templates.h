#pragma once
// Default schedule templates, one per kernel kind. A template is a function that applies primitives through
// a TracedSchedule, so its result is a trace like any other. Each exposes its parameter space (named
// parameters with candidate values) and the defaults it picks for a given kernel; the parameters are
// recorded first in the trace with set_param.
#include <map>
#include <string>
#include <vector>

#include "kernel/lower/lower.h"
#include "kernel/schedule/trace.h"

namespace tessera::kernel {

struct TemplateParam {
  std::string name;
  std::vector<int64_t> candidates;
  std::string summary;  // one line for the inspector
  // The parameter changes what the kernel computes (its precision), not only how fast: the tuner leaves it at
  // the default, so tuning never trades accuracy for time unasked (gemm's tf32).
  bool changesPrecision = false;
};

using TemplateParams = std::map<std::string, int64_t>;

// pointwise, row-reduction, gemm, gemm-cpu (a gemm scheduled for Machine::Cpu), conv, pool, transpose (data
// movement through shared tiles), data-movement, attention.
std::string templateName(const Kernel& k);
std::vector<TemplateParam> parameterSpace(const Kernel& k);
TemplateParams defaultParams(const Kernel& k);
// Applies the kernel's template with `params` (missing ones take their defaults; unknown names are an Error).
void applyTemplate(TracedSchedule& s, const TemplateParams& params);
// Applies the template with its defaults to `k` and returns the trace.
Trace applyDefaultSchedule(Kernel& k);
// The trace of the group's template applied with `params` to a fresh lowering of the group, exactly as a saved
// schedule replays (so a parameter edit is a schedule override like a tuned one). Throws ScheduleError (naming
// the parameter or loop) or Error when the template refuses the combination.
Trace traceWithParams(const Graph& graph, const KernelSpec& spec, const TemplateParams& params);
// The same by the template of the spec's machine when it has every parameter named, else by the other machine's
// when that one has them (`--param k0.tile_m=4` names the gemm's CPU form); the first machine's error otherwise.
Trace traceOnEitherMachine(const Graph& graph, const KernelSpec& spec, const TemplateParams& params);

}  // namespace tessera::kernel
