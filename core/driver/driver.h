#pragma once
// The compile driver: one object per model that owns its compile as the named stages of stages.h. Each
// stage's result is computed when first asked, kept, and dropped by what changes it (compile options drop
// every stage; schedules and the tf32 policy drop Kernel and what follows; the backend drops the target and
// Kernel, whose tuned schedules are the target's). The CLI, the window, the tuner and sessions ask it for stages instead of
// stitching compile → kernels → run themselves, so they cannot drift apart.
//
// Results are immutable snapshots (shared_ptr<const …>): a view keeps the one it shows while a newer one is
// made. The driver may be asked from several threads; a stage is computed outside its lock, and a result
// computed for options that changed meanwhile is returned to its caller but not kept.
#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "driver/stages.h"
#include "fusion/compile.h"
#include "ir/cancel.h"
#include "runtime/execute/compiled_model.h"
#include "runtime/execute/executor.h"
#include "tune/target.h"
#include "tune/tuner.h"

namespace tessera::driver {

struct DriverOptions {
  CompileOptions compile;          // pipeline, pass toggles, fuel, overrides (its `cancel` is not used)
  execute::ScheduleSet schedules;  // the user's (saved, edited, tuned in the window): they win over the cache
  bool useTuned = true;            // the tuning cache's schedules for the target's device
  kernel::Tf32Policy tf32;         // where f32 products may round to tf32 (off: exact f32 everywhere)
  execute::BackendKind backend = execute::BackendKind::Cpu;
  std::string arch;      // cuda: "" = the device's, or sm_90 without one
  std::string cacheDir;  // the tuning cache; "" = tune::defaultCacheDir()
  // "HOST:PORT": the backend's kernels run on the worker there (runtime/execute/remote.h), whose backend is
  // `backend`; its device is the target. "": here.
  std::string remote;
};

// The Kernel stage: every group lowered and scheduled.
struct KernelStage {
  std::shared_ptr<const CompileResult> compile;  // the compile it was lowered from
  execute::CompiledModel model;
  std::vector<std::string> tunedGroups;  // kernels whose schedule came from the tuning cache
  std::vector<std::string> notes;        // cache warnings and the tuned kernels, one line each
};

// The Cuda and Cpp stages: one generated kernel per lowered kernel (same order).
struct SourceStage {
  std::shared_ptr<const KernelStage> kernels;
  codegen::Target target;
  std::vector<codegen::GeneratedKernel> generated;  // empty source where `errors` says why
  std::vector<std::string> errors;                  // "" = generated
};

// The Ptx stage: NVRTC's output per kernel.
struct PtxStage {
  std::shared_ptr<const SourceStage> source;
  std::vector<std::string> ptx, errors;  // per kernel; "" error = compiled
  std::vector<double> compileMs;
};

struct RunRequest {
  int reps = 10, warmup = 2;
  std::vector<Tensor> inputs;  // graph input order; empty = random from `seed`
  uint64_t seed = 0;
  bool verify = true;    // against the reference interpreter
  bool baseline = true;  // also time the unfused graph
  bool moduleCache = true;  // the compiled-module cache (runtime/cache): false compiles every kernel
  double kernelBudgetMs = 0;  // RunOptions::kernelBudgetMs: > 0 caps a slow kernel's warm-ups and reps
  bool keepValues = false;    // RunOptions::keepValues: the report keeps every value the kernels read or wrote
  execute::MemoryLimit memoryLimit;  // a run over it is refused before it starts (runtime/execute/memory_limit.h)
};

// The Run stage.
struct RunStage {
  std::shared_ptr<const KernelStage> kernels;  // what ran
  execute::RunReport report;  // its messages include the kernel stage's notes and stale schedules
};

using Progress = std::function<void(size_t done, size_t total)>;

class Driver {
 public:
  explicit Driver(std::shared_ptr<const Graph> model, DriverOptions options = {});

  std::shared_ptr<const Graph> model() const { return model_; }
  DriverOptions options() const;

  // --- what changes a stage ---
  void setCompileOptions(CompileOptions compile);  // every stage
  void setSchedules(execute::ScheduleSet schedules);  // Kernel and after
  // The target, Kernel and after; `remote` as DriverOptions::remote.
  void setBackend(execute::BackendKind backend, std::string arch = {}, std::string remote = {});
  void setUseTuned(bool useTuned);  // Kernel and after
  void setTf32(kernel::Tf32Policy tf32);  // Kernel and after

  // --- the stages; each throws Cancelled when `cancel` fires ---
  // Graph and Fused: the pass pipeline and fusion. A failing pass is the result's `error`.
  std::shared_ptr<const CompileResult> compiled(const CancelToken& cancel = {});
  // Kernel: throws Error "compile: …" when the compile failed. The kernels as the GPU schedules them: what the
  // Kernel and CUDA levels, the Schedule panel and --param show and edit, whatever the backend.
  std::shared_ptr<const KernelStage> kernels(const CancelToken& cancel = {}, const Progress& progress = {});
  // The kernels as `machine` schedules them (kernel::Machine): the cpu backend runs and tunes the CPU's, and the
  // C++ level shows them. A saved schedule made by the other machine's template is not used (nor stale) here.
  std::shared_ptr<const KernelStage> kernelsFor(kernel::Machine machine, const CancelToken& cancel = {},
                                                const Progress& progress = {});
  // Cuda or Cpp.
  std::shared_ptr<const SourceStage> source(codegen::Target target, const CancelToken& cancel = {});
  // Ptx for `arch` ("" = sm_90), with extra NVRTC options (e.g. -lineinfo); `soFar` after each kernel with
  // the stage as far as it got (the window shows PTX kernel by kernel).
  std::shared_ptr<const PtxStage> ptx(const std::string& arch = {}, const std::vector<std::string>& nvrtcOptions = {},
                                      const CancelToken& cancel = {},
                                      const std::function<void(const PtxStage& soFar, size_t done)>& soFar = {});
  // Run on the backend: kept as the Run stage (the last run) until something earlier changes.
  std::shared_ptr<const RunStage> run(const RunRequest& request, const CancelToken& cancel = {});
  std::shared_ptr<const RunStage> lastRun() const;
  // The unfused baseline of a run made with request.baseline false (execute::executeBaseline), for the same
  // request: the window shows the run first and its baseline when it comes. Its report, to merge with
  // execute::addBaseline (the kept run, when it is `ran`, gets it here); empty when `ran` did not run to its end.
  execute::RunReport baseline(const RunRequest& request, const RunStage& ran, const CancelToken& cancel = {});

  // The device every estimate, tuned schedule and run assumes: the backend's (the GPU's for the reference
  // backend, which runs no generated kernels). The one place this is decided.
  std::shared_ptr<const tune::Target> target();
  // The same for another backend: the Schedule panel's picture is of the CUDA kernel on the GPU whatever runs it.
  std::shared_ptr<const tune::Target> targetOf(execute::BackendKind backend);
  // target(), with the cpu's figures measured on this machine when they were not, or were measured fewer times
  // than a calibration keeps and the last is a minute old (tune::calibrateCpu, about a second, then cached on
  // disk: the best of three), after `ran`: the run panel's roofline is against what this CPU can do, not
  // cpu.json's defaults, and when this changed the figures, `report` (ran's, or a copy) gets each kernel's
  // estimate again from them (the run's were from the defaults, several times off). Other backends and a
  // remote worker's cpu: target() as it is.
  std::shared_ptr<const tune::Target> measuredTargetAfter(const RunStage& ran, execute::RunReport& report);
  // The cost model's estimate of a kernel on target() (-1 when it has none), for RunOptions::predictMs.
  std::function<double(const Graph&, const kernel::Kernel&)> predictor();

  // Tunes the default schedules' kernels on the backend (the cache then holds what it kept). `options.arch`
  // and `cacheDir` default to the driver's.
  tune::TuneReport tune(tune::TuneOptions options);
  // What tune() starts from: every kernel at its template default for the backend's machine (never a schedule
  // tuned before). A distributed tune's other ranks measure variants of it.
  execute::CompiledModel defaultKernels(const CancelToken& cancel = {});

 private:
  // measuredTargetAfter's measurement: the cpu's target measured (or its provisional figures measured again) and kept.
  std::shared_ptr<const tune::Target> measuredTarget();
  // Stage results kept for the options of `generation`.
  struct Kept {
    std::shared_ptr<const CompileResult> compiled;
    std::array<std::shared_ptr<const KernelStage>, 2> kernels;  // by kernel::Machine
    std::shared_ptr<const SourceStage> cuda, cpp;
    std::array<std::shared_ptr<const tune::Target>, 3> targets;  // by BackendKind (arch-dependent)
    std::shared_ptr<const RunStage> run;
  };
  KernelStage lowerAll(std::shared_ptr<const CompileResult> compile, const DriverOptions& o, kernel::Machine machine,
                       const CancelToken& cancel, const Progress& progress);
  void dropFrom(Stage stage);  // under the lock
  execute::RunOptions runOptions(const RunRequest& request, const CancelToken& cancel);  // not under the lock

  std::shared_ptr<const Graph> model_;
  mutable std::mutex mutex_;
  DriverOptions options_;
  Kept kept_;
  uint64_t generation_ = 0;  // bumped by every change: results of older generations are not kept
  // What runs keep for the next one (the cpu worker, the model's constants in its memory): run_session.h.
  std::shared_ptr<execute::RunSession> session_ = std::make_shared<execute::RunSession>();
};

}  // namespace tessera::driver
