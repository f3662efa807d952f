#pragma once
// The candidates of one kernel: every combination of its template's parameters (parameterSpace, so parameters
// a template gains are picked up), applied to the lowered kernel; combinations the primitives refuse, that
// schedule the same loops as an earlier one, or that cannot launch on the device are dropped; the rest are
// ranked by the cost model. Spaces larger than `maxCombinations` are sampled evenly (the defaults always in).
// Parameters that change the kernel's precision (TemplateParam::changesPrecision: gemm's tf32) stay at their
// defaults.
#include "ir/cancel.h"
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "kernel/templates/templates.h"

namespace tessera::tune {

struct Candidate {
  kernel::TemplateParams params;
  cost::Estimate estimate;
  bool isDefault = false;
};

struct CandidateSet {
  std::vector<Candidate> ranked;  // fastest predicted first
  size_t combinations = 0;        // the size of the parameter space
  size_t tried = 0;               // combinations applied (all, or the sample)
  size_t refused = 0;             // the primitives refused them
  size_t duplicates = 0;          // same schedule as an earlier combination
  size_t infeasible = 0;          // cannot launch on the device
};

// `lowered` is the kernel before scheduling; `flops` as for cost::predict. Stops early (with what it has)
// when `cancel` becomes true.
CandidateSet rankCandidates(const kernel::Kernel& lowered, const cost::Device& device, double flops,
                            size_t maxCombinations = 4096, const CancelToken& cancel = {});

// The kernel with the template applied with `params`, and its trace.
kernel::Kernel scheduleWith(const kernel::Kernel& lowered, const kernel::TemplateParams& params, kernel::Trace* trace);

// A hash of the kernel before scheduling, blind to the model's names (group id, node ids, value names), so
// the same kernel in another model has the same signature.
std::string kernelSignature(const kernel::Kernel& lowered);

}  // namespace tessera::tune
