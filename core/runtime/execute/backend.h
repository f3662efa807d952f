#pragma once
// Internal: what a backend does for the executor. Pointers are host pointers; a device backend copies.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "ir/cancel.h"
#include "runtime/cache/module_cache.h"
#include "ir/graph.h"
#include "runtime/execute/run_session.h"

namespace tessera::execute::detail {

struct ParamBuffer {
  void* host;
  size_t bytes;
  bool output;
  // The graph value it holds, when the caller keeps `host` holding it for the backend's life (the executor's
  // arena): a device backend then keeps the value's device copy and uploads it only when its copy is another
  // value's. "" (the measurements' fresh buffers): uploaded every run.
  std::string value;
  // Outputs: false when no one reads `host` after the run (a device backend then leaves the value on the
  // device, for the kernels after it).
  bool download = true;
  // The kernel's error record (index_record.h), an output whose zeroed contents go in too.
  bool record = false;
};

// How one kernel was built.
struct KernelBuild {
  std::string error;      // "" = built (and loaded, where kernels can run)
  bool cached = false;    // the module came from the module cache: no compiler ran for it
  double compileMs = 0;   // the compiler's time (0 for a cache hit)
  std::string warning;    // a damaged cache entry that was compiled again, or a store that failed
};

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  virtual std::string device() const = 0;
  virtual std::string cannotRun() const = 0;  // empty when kernels can run here
  // A device backend's free device memory in bytes; 0 for the host (or when it cannot be asked).
  virtual uint64_t freeDeviceBytes() const { return 0; }
  // Compiles the kernels (null entries: not generated), one module each, concurrently on a bounded pool, each
  // looked up in the module cache first; one KernelBuild per kernel.
  virtual std::vector<KernelBuild> build(const std::vector<const codegen::GeneratedKernel*>& kernels) = 0;
  // `bytes` of zeroed host memory the kernels run on where it lies (the cpu worker's shared region), for the
  // executor's arena, or null (the default): run() and runWhole() copy every parameter in and out. Parameters
  // inside it are used in place, so a run moves none of the arena's bytes. Asked before a run's kernels (a kept
  // backend again for the next run: the same memory, as long as it is large enough).
  // `keep`: the first `keep` bytes (a constant zone an earlier run of the same model left there) are kept as
  // they are and only the rest is zeroed.
  virtual std::byte* residentMemory(size_t bytes, size_t keep = 0) {
    (void)bytes;
    (void)keep;
    return nullptr;
  }
  // Whether a RunSession may keep this backend for the driver's next run (build() called again with that run's
  // kernels, residentMemory() asked again). false: a fresh backend each run.
  virtual bool keptBetweenRuns() const { return false; }
  // Runs kernel `index` on its parameters (inputs then outputs, host memory): the median ms. Throws on failure.
  virtual double run(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) = 0;

  // The whole run as one: the kernels `order` (with their parameters as run() takes them, named values only)
  // back to back, each after the one before, every one of them run() first so their inputs are in place. The
  // median ms of the whole with each kernel launched from the host, and as one CUDA graph where the backend has
  // graphs (else -1); the outputs marked `download` come back from the last pass. A backend that cannot time a
  // whole run returns launchedMs -1 and says why in `note`.
  struct WholeRunTimes {
    double launchedMs = -1, graphMs = -1;
    std::string note;
  };
  virtual WholeRunTimes runWhole(const std::vector<size_t>& order, const std::vector<std::vector<ParamBuffer>>& params,
                                 int warmup, int reps) = 0;

  // Asked by build (before each module; a compiler process is killed) and before every timed call of run
  // (which then throws Cancelled).
  CancelToken cancel;
  // > 0: one run() takes about this long at most when its kernel is slow (fewer warm-ups and reps, at least one
  // of each; runtime/timing_budget.h). 0: every warm-up and rep.
  void setTimeBudget(double ms) { timeBudgetMs_ = ms; }

 protected:
  double timeBudgetMs_ = 0;
};

std::unique_ptr<KernelBackend> makeCpuBackend(modcache::ModuleCache cache);
std::unique_ptr<KernelBackend> makeCudaBackend(const std::string& arch, modcache::ModuleCache cache);

}  // namespace tessera::execute::detail

namespace tessera::execute {

// A RunSession's slot: the backend, and whose constants its resident memory holds from the last clean run.
struct RunSession::Kept {
  std::unique_ptr<detail::KernelBackend> backend;  // null for one that is not kept (cuda)
  std::shared_ptr<const Graph> graph;  // null: no constants are kept
  std::string zoneSignature;           // ConstantZone::signature of that run
  std::set<std::string> zoneValues;    // the zone's values it placed (Arena::zoneValues)
  const std::byte* block = nullptr;    // where its arena lay
};

}  // namespace tessera::execute
