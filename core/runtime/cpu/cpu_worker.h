#pragma once
// A worker process that runs generated CPU kernels (worker/main.cpp, `tessera-cpu-worker`), so that a kernel
// that crashes ends the worker, not this program. Started with posix_spawn (never fork: the window is
// multithreaded) on first use; the kernels' buffers lie in a shared memory region (memfd) both map, requests go
// over a Unix socket, and the timing loop runs inside the worker, so times hold no IPC. When the worker dies, the
// run in flight throws an Error naming the kernel and the signal, and the next run starts a new worker that loads
// every module again.
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/cancel.h"
#include "runtime/cpu/worker_protocol.h"

namespace tessera::cpu {

// The worker program: $TESSERA_CPU_WORKER, else tessera-cpu-worker beside this program's executable, else the
// one this build made. "" when none of them exists.
std::string cpuWorkerProgram();

class CpuWorker {
 public:
  explicit CpuWorker(std::string program = cpuWorkerProgram());
  ~CpuWorker();  // kills the worker
  CpuWorker(const CpuWorker&) = delete;
  CpuWorker& operator=(const CpuWorker&) = delete;

  const std::string& program() const { return program_; }
  // Module `slot`: a shared object's bytes whose `symbol` is a `void(void**)` entry, loaded into the worker now
  // (when one runs) and into every worker started later. A load that fails makes run(slot) throw its error.
  // A slot that already holds the same module, loaded, is left as it is (a driver's next run of the model).
  void addModule(size_t slot, const std::string& name, const std::string& symbol, std::string image);

  // Starts the worker now when none runs (a run starts one anyway), so that its start overlaps other work.
  // Throws Error when it cannot start.
  void startEarly() {
    if (!pid_) start(CancelToken());
  }

  // The shared region, at least `bytes` long; earlier contents stay. Its address stays while it grows within the
  // address space reserved for it at its creation (1 TiB, or less under an address-space limit); past that it
  // moves, unless pinned.
  std::byte* region(size_t bytes);
  // The region, at least `bytes` long and its first `bytes` zeroed but the first `keep` (left as they are),
  // pinned: its address never changes again (a growth that would move it throws). Null when `bytes` would take
  // more than half the reserved address space.
  std::byte* pinnedRegion(size_t bytes, size_t keep = 0);
  const std::byte* regionStart() const { return region_; }  // null before the first region()

  // Calls slot's entry with pointers at `offsets` into the region: warm-ups, then the median ms of `reps` calls
  // (cpu_timing.h's rules, `budgetMs` included). `kernel` names it in errors. Throws Error when the worker dies
  // ("kernel 'k' crashed the cpu worker: signal 11 (segmentation fault)") or the kernel cannot run; throws
  // Cancelled (killing the worker) when `cancel` fires while it runs.
  double run(size_t slot, const std::vector<uint64_t>& offsets, int warmup, int reps, double budgetMs,
             const CancelToken& cancel, const std::string& kernel) {
    return run({{uint32_t(slot), offsets}}, warmup, reps, budgetMs, cancel, kernel);
  }
  // The same for several calls in order, timed as one (a whole run); `what` names them in errors.
  double run(const std::vector<worker::RunStep>& steps, int warmup, int reps, double budgetMs, const CancelToken& cancel,
             const std::string& what);

  pid_t pid() const { return pid_; }  // 0 while none runs

 private:
  struct Module {
    std::string name, symbol, image, loadError;
  };
  void start(const CancelToken& cancel);
  void load(size_t slot, const CancelToken& cancel);
  void stop();
  // The reply to the request just sent; while waiting, a cancel kills the worker. Throws Error when it dies.
  std::string awaitReply(double& ms, const CancelToken& cancel, const std::string& kernel);
  std::string endedBy(const std::string& kernel);  // reaps the worker; what ended it

  std::string program_;
  std::vector<Module> modules_;
  void reserveAddresses();
  void unmapRegion();
  int regionFd_ = -1;
  std::byte* region_ = nullptr;
  size_t regionBytes_ = 0;
  size_t reservedBytes_ = 0;  // address space at region_ the region grows into without moving
  bool pinned_ = false;
  int socket_ = -1;
  pid_t pid_ = 0;
};

}  // namespace tessera::cpu
