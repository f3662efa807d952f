#pragma once
// From the compile driver's result (final graph + fused groups) to a CompiledModel.
#include "fusion/compile.h"
#include "runtime/execute/compiled_model.h"

namespace tessera::execute {

// One KernelSpec per fused group (id, kind name, node ids in order, the tf32 policy, the machine its schedule is
// for); throws Error when fusion did not run.
std::vector<kernel::KernelSpec> kernelSpecs(const CompileResult& result, kernel::Tf32Policy tf32 = {},
                                            kernel::Machine machine = kernel::Machine::Gpu);
CompiledModel compileKernels(const CompileResult& result, const ScheduleSet* saved = nullptr);

}  // namespace tessera::execute
