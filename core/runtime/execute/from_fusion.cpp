#include "runtime/execute/from_fusion.h"

#include "ir/error.h"

namespace tessera::execute {

std::vector<kernel::KernelSpec> kernelSpecs(const CompileResult& r, kernel::Tf32Policy tf32, kernel::Machine machine) {
  if (!r.fusion || !r.graph) fail("compile: no fused groups (" + (r.error.empty() ? "fusion did not run" : r.error) + ")");
  std::vector<kernel::KernelSpec> specs;
  for (const FusedGroup& grp : r.fusion->groups) {
    kernel::KernelSpec s{grp.id, std::string(groupKindName(grp.kind)), {}, tf32, machine};
    for (const GroupNode& n : grp.nodes) s.nodeIds.push_back(n.id);
    specs.push_back(std::move(s));
  }
  return specs;
}

CompiledModel compileKernels(const CompileResult& r, const ScheduleSet* saved) {
  return compileKernels(r.graph, kernelSpecs(r), saved);
}

}  // namespace tessera::execute
