#pragma once
// The compiled-model executor: compiles every kernel of a CompiledModel once for a backend (reference, cpu,
// cuda), then runs them in order on buffers laid out by the memory plan, times each (median of N after
// warm-up), checks each kernel's outputs and every graph output against the reference interpreter, and runs
// the unfused baseline so the gain from fusion is measured. Compiler, NVRTC, driver and kernel errors come
// back as messages; the run goes on with the reference's values in place of a kernel that failed.
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/codegen.h"
#include "ir/cancel.h"
#include "ir/tensor.h"
#include "runtime/execute/compiled_model.h"

namespace tessera::execute {

enum class BackendKind { Reference, Cpu, Cuda };
BackendKind parseBackend(const std::string& name);  // throws Error for an unknown name

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
};

struct KernelReport {
  std::string group, entry;
  std::vector<std::string> nodes;
  double ms = -1;      // median; -1 when it did not run
  double predictedMs = -1;  // the cost model's estimate; -1 when not predicted
  double gbps = 0;     // (bytes of inputs + outputs) / time
  double gflops = 0;   // nodeFlops summed over the group / time
  bool verified = false;
  double maxRelErr = 0;
  double maxAbsErr = 0;  // against the reference (relative errors blow up where a relu leaves 0)
  std::string precision;  // codegen's GeneratedKernel::precision: "tf32", or "" (its dtypes' own); sets the tolerance
  bool cached = false;    // its module came from the module cache (no compiler ran)
  double compileMs = 0;   // the compiler's time for it (0 when cached or not generated)
  std::string status;  // "ok", "mismatch", "unchecked" (RunOptions::verify off), "not compiled", "not run", "failed"
  std::string message; // why, when not ok
};

struct RunReport {
  std::string backend, device;
  bool ran = false;              // kernels ran (false: cuda without a GPU, or nothing compiled)
  std::string cannotRun;         // why not, in a few words
  std::vector<KernelReport> kernels;
  double totalMs = 0;            // sum of the kernels' medians
  double buildMs = 0;            // wall time of generating, compiling (or loading from the cache) and loading
  double baselineTotalMs = -1;   // the unfused baseline's sum; -1 when not run
  bool outputsVerified = false;  // every graph output matched the reference
  std::vector<std::string> messages;  // errors and notes, one line each
  std::vector<Tensor> outputs;   // in graph output order, when ran
  std::unordered_map<std::string, Tensor> values;  // by value name (RunOptions::keepValues): inputs, initializers, kernel outputs
  std::vector<codegen::GeneratedKernel> generated;  // per kernel (empty source when it could not be generated)
  nlohmann::json toJson() const;
};

RunReport executeModel(const CompiledModel& model, BackendKind backend, const RunOptions& options);
// executeModel, then the unfused baseline of the same graph for the total.
RunReport executeWithBaseline(const CompiledModel& model, BackendKind backend, const RunOptions& options);

}  // namespace tessera::execute
