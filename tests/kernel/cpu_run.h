#pragma once
// The cpu-backend check the kernel tests share: one group compiled (optionally with a saved schedule), generated
// as C++, built, run once on the cpu backend and verified against the reference interpreter.
#include <memory>
#include <string>

#include "runtime/execute/executor.h"
#include "schedule_check.h"

namespace tessera::kernel::fixtures {

// "" when the kernel ran and its outputs were verified, else the run's messages.
inline std::string cpuRunFails(const Case& c, const execute::ScheduleSet* saved = nullptr) {
  auto graph = std::make_shared<const Graph>(c.graph.clone());
  execute::CompiledModel m = execute::compileKernels(graph, {c.spec}, saved);
  execute::RunOptions o;
  o.reps = 1;
  o.warmup = 0;
  execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cpu, o);
  std::string why;
  for (const std::string& msg : run.messages) why += msg + "; ";
  bool ok = run.kernels.size() == 1 && run.kernels[0].status == execute::KernelStatus::Ok && run.outputsVerified;
  return ok ? "" : why.empty() ? "not verified" : why;
}

}  // namespace tessera::kernel::fixtures
