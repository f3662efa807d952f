#pragma once
// What a worker does for one client, without the network: the client's kernels and the local backend that
// builds and runs them (cpu or cuda, runtime/execute/backend.h). The server (worker_server.h) calls it on a job
// thread, one request at a time per client; each client has its own backend (and so its own cpu worker
// process), so clients' jobs never share memory.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/remote/protocol.h"
#include "ir/cancel.h"
#include "runtime/execute/executor.h"

namespace tessera::remote {

struct WorkerLimits {
  uint64_t maxRequestBytes = uint64_t(1) << 30;  // one request's bytes (the inputs of a run)
  uint64_t maxJobBytes = uint64_t(4) << 30;      // one run's buffers, inputs and outputs together
  double jobTimeoutS = 600;                      // one build or run
};

class ClientJobs {
 public:
  ClientJobs(execute::BackendKind kind, std::string arch, WorkerLimits limits);
  ~ClientJobs();
  // A build or run request: its reply (an error reply for a bad request or a failure). Throws Cancelled when
  // `cancel` fires (the client left, or the job went over its time).
  Message handle(const Message& request, const CancelToken& cancel);
  // Why the backend, which could run kernels when it was built, can no longer (a GPU fault CUDA does not
  // recover from); "" while it can. Asked on the job's thread after handle.
  std::string lostDevice() const;

 private:
  Message build(const Message& request);
  Message run(const Message& request);
  Message runWhole(const Message& request);
  void checkReps(const Message& request) const;

  execute::BackendKind kind_;
  std::string arch_;
  WorkerLimits limits_;
  CancelToken cancel_;  // the job in flight's
  std::unique_ptr<execute::detail::KernelBackend> backend_;
  bool couldRun_ = false;  // backend_ could run kernels when it was made
  std::vector<std::optional<codegen::GeneratedKernel>> kernels_;
};

}  // namespace tessera::remote
