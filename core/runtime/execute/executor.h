#pragma once
// The compiled-model executor: compiles every kernel of a CompiledModel once for a backend (reference, cpu,
// cuda), then runs them in order on buffers laid out by the memory plan, times each (median of N after
// warm-up), then times the whole run as one (kernels back to back, and as one CUDA graph on cuda), checks each
// kernel's outputs and every graph output against the reference interpreter, and runs the unfused baseline so
// the gain from fusion is measured. Compiler, NVRTC, driver and kernel errors come
// back as messages; the run goes on with the reference's values in place of a kernel that failed.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/codegen.h"
#include "ir/cancel.h"
#include "ir/tensor.h"
#include "runtime/execute/compiled_model.h"
#include "runtime/execute/run_session.h"
#include "runtime/execute/run_report.h"

namespace tessera::execute {

enum class BackendKind { Reference, Cpu, Cuda };
BackendKind parseBackend(const std::string& name);  // throws Error for an unknown name
// The machine a backend's kernels are scheduled for: cpu for the cpu backend, the GPU's otherwise (the
// reference runs no generated kernels; its kernel IR is shown as the GPU's).
inline kernel::Machine machineOf(BackendKind b) { return b == BackendKind::Cpu ? kernel::Machine::Cpu : kernel::Machine::Gpu; }

// The most memory a run may need; a run that would need more is refused before it starts (memory_limit.h).
struct MemoryLimit {
  uint64_t hostBytes = 0;  // 0: no limit
  std::string source;      // where it was set, for the message: "setting 'memory/hostLimit'", "--memory-limit"
  // cuda: also refuse a run whose device buffers would not fit in the device's free memory.
  bool checkDevice = true;
};

struct RunOptions {
  int reps = 10, warmup = 2;
  std::string arch;            // CUDA: "" = the device's, or sm_90 without one
  std::vector<Tensor> inputs;  // in graph input order; empty = randomInputs(graph, seed)
  uint64_t seed = 0;
  // When set, fills KernelReport::predictedMs (the cost model's estimate; tune::costPredictor in tune/target.h).
  std::function<double(const Graph&, const kernel::Kernel&)> predictMs;
  // false: no reference interpreter (for sizes it takes minutes on, e.g. benchmarks that check the outputs
  // themselves): kernels that ran report "unchecked", outputsVerified stays false, and a kernel that fails
  // leaves its outputs unwritten.
  bool verify = true;
  // Fill RunReport::values with every value the kernels read or wrote (for the tuner's measurements: the inputs
  // each kernel saw and what the model's own kernels made of them).
  bool keepValues = false;
  // Time the whole run as one after the kernels (RunReport::wholeMs, graphMs); false where only the values are
  // wanted (the tuner's run of the model's own kernels).
  bool timeWhole = true;
  // The compiled-module cache (runtime/cache/module_cache.h): false = compile every kernel; moduleCacheDir ""
  // = <defaultCacheDir()>/modules (off when $TESSERA_MODULE_CACHE is 0 or off).
  bool moduleCache = true;
  std::string moduleCacheDir;
  // Asked while building, by the reference interpreter, before each kernel and each timed repetition: a
  // cancelled run throws Cancelled (a result half made is not a result).
  CancelToken cancel;
  // > 0: a kernel whose warm-up and reps would take longer than this many ms gets fewer of them (at least one
  // warm-up and one timed run), so a slow model's run costs about kernels x budget; 0: always warmup + reps.
  double kernelBudgetMs = 0;
  MemoryLimit memoryLimit;
  // "HOST:PORT": the kernels are built, run and timed by the worker there (remote.h), whose backend must be
  // `backend`; this process generates, verifies and reports as for a local run. "": here.
  std::string remote;
  // The driver's RunSession (run_session.h): a backend that can be kept is taken from its slot `sessionSlot`
  // and put back after the run, with the model's constants left in its memory. Null: a fresh backend.
  std::shared_ptr<RunSession> session;
  std::string sessionSlot = "model";
};

RunReport executeModel(const CompiledModel& model, BackendKind backend, const RunOptions& options);
// executeModel, then the unfused baseline of the same graph for the total (addBaseline), unless the run stopped.
RunReport executeWithBaseline(const CompiledModel& model, BackendKind backend, const RunOptions& options);
// The unfused baseline of `model`'s graph alone: one kernel per node under the model's precision policy, so the
// fusion's gain is like for like, in its own session slot (options.sessionSlot + " baseline"). The window runs
// it after showing the model's run.
RunReport executeBaseline(const CompiledModel& model, BackendKind backend, const RunOptions& options);
// `run` given the baseline's total (when it ran) and its messages, each as "baseline: ...".
void addBaseline(RunReport& run, const RunReport& baseline);
// Each generated kernel's KernelReport::predictedMs from `predictMs` (RunOptions::predictMs fills them so when a
// run starts; the window fills them again once the cpu's figures are measured, after its first run).
void predictKernels(const CompiledModel& model, const std::function<double(const Graph&, const kernel::Kernel&)>& predictMs,
                    RunReport& run);
// The note of a run checked against the reference a run of the same graph and inputs left (RunSession): a repeat,
// or new schedules. The unfused baseline always is, so addBaseline leaves the note out of the run's messages.
inline constexpr const char* kKeptReferenceNote = "reference: the last run's values (the same graph and inputs)";

}  // namespace tessera::execute
