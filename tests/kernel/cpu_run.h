#pragma once
// The cpu-backend check the kernel tests share: one group compiled (optionally with a saved schedule), generated
// as C++, built, run once on the cpu backend as a kernel and verified against the reference interpreter; and
// agreesEverywhere, that check after the interpreter's and NVRTC's.
#include <memory>
#include <string>

#include "codegen/codegen.h"
#include "kernel/templates/templates.h"
#include "reference_check.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "schedule_check.h"

namespace tessera::kernel::fixtures {

// The run's messages, one after another.
inline std::string messagesOf(const execute::RunReport& run) {
  std::string why;
  for (const std::string& msg : run.messages) why += msg + "; ";
  return why;
}

// One repetition of `m` and of its unfused baseline on `backend`, no warm-up.
inline execute::RunReport runOnceWithBaseline(const execute::CompiledModel& m, execute::BackendKind backend) {
  execute::RunOptions o;
  o.reps = 1;
  o.warmup = 0;
  return execute::executeWithBaseline(m, backend, o);
}

// "" when the kernel ran and its outputs were verified, else the run's messages.
inline std::string cpuRunFails(const Case& c, const execute::ScheduleSet* saved = nullptr) {
  auto graph = std::make_shared<const Graph>(c.graph.clone());
  execute::CompiledModel m = execute::compileKernels(graph, {c.spec}, saved);
  execute::RunOptions o;
  o.reps = 1;
  o.warmup = 0;
  execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cpu, o);
  std::string why = messagesOf(run);
  bool ok = run.kernels.size() == 1 && run.kernels[0].status == execute::KernelStatus::Ok && run.outputsVerified;
  if (ok && !run.kernels[0].host.empty()) return "ran on the host, not as a kernel: " + run.kernels[0].host;
  return ok ? "" : why.empty() ? "not verified" : why;
}

// "" when the group lowers to a kernel of `kind`, which (as lowered and default-scheduled) the kernel interpreter
// runs in agreement with the reference, whose CUDA NVRTC compiles for sm_90 (no GPU needed), and which the cpu
// backend runs as a kernel, verified; else what failed.
inline std::string agreesEverywhere(const Case& c, const std::string& kind, uint64_t seed) {
  ReferenceOptions opt;
  opt.keepAll = true;
  ReferenceResult ref = runReference(c.graph, randomInputs(c.graph, seed), opt);
  Kernel plain = lowerToLoops(c.graph, c.spec);
  if (plain.kind != kind) return "kind " + plain.kind + ", not " + kind;
  if (std::string why = agreesWithReference(c.graph, plain, ref); !why.empty()) return "lowered: " + why;
  Kernel scheduled = lowerToLoops(c.graph, c.spec);
  applyDefaultSchedule(scheduled);
  if (std::string why = agreesWithReference(c.graph, scheduled, ref); !why.empty()) return "scheduled: " + why;
  cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(codegen::generateCuda(scheduled).source, c.spec.id + ".cu", {}, "sm_90");
  if (!r.ok) return "NVRTC: " + r.error;
  if (std::string why = cpuRunFails(c); !why.empty()) return "cpu backend: " + why;
  return "";
}

}  // namespace tessera::kernel::fixtures
