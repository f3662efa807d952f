#pragma once
// Kernels run by a worker on another machine (`tessera-cli serve`, docs/remote.md). RunOptions::remote and
// MeasureOptions::remote name it ("HOST:PORT"); the backend that talks to it comes from the program's connector,
// which holds the network code (app/remote: the core has none). The executor, the tuner's measurements and the
// driver take that backend as any other: the worker builds, runs and times the kernels with its own cpu or cuda
// backend, and this process generates the source, verifies the outputs and keeps the reports.
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "runtime/execute/backend.h"
#include "runtime/execute/executor.h"

namespace tessera::execute {

// What a worker says of itself when a client connects.
struct WorkerInfo {
  std::string address;             // HOST:PORT, as asked
  BackendKind kind = BackendKind::Cpu;  // the worker's backend: the machine the kernels are scheduled for
  std::string device;              // its backend's device ("NVIDIA H200 (sm_90)", "host CPU, 16 threads")
  std::string arch;                // cuda: the architecture it compiles for
  std::string cannotRun;           // its backend's reason it cannot run kernels; "" when it can
  nlohmann::json target;           // its tune::Target (device, toolkit, cost device), read by tune/target.h
  uint64_t maxRequestBytes = 0;    // the largest request it takes
  uint64_t freeDeviceBytes = 0;    // cuda: the device's free memory when this client greeted it; 0: not known
  double latencyMs = -1;           // the greeting's round trip
};

class RemoteConnector {
 public:
  virtual ~RemoteConnector() = default;
  // Connects to `address`, presents the token, and says what the worker runs. Throws Error naming the address
  // and why (unreachable, refused token, not a Tessera worker).
  virtual WorkerInfo describe(const std::string& address) = 0;
  // A backend whose build and run go to the worker at `address` (which must run `kind`).
  virtual std::unique_ptr<detail::KernelBackend> backend(const std::string& address, BackendKind kind) = 0;
  // Local runs of `kind` in a worker process of their own: a backend whose kernels a worker on this machine,
  // started for this program, builds and runs; a kernel that faults there cannot harm this process, and the
  // next backend gets a fresh worker when the last one ended. Null when this program runs `kind` in-process.
  virtual std::unique_ptr<detail::KernelBackend> isolated(BackendKind kind, const std::string& arch) {
    (void)kind, (void)arch;
    return nullptr;
  }
};

// Set once by a program that can reach workers (tessera, tessera-cli: app/remote); null clears it.
void setRemoteConnector(std::shared_ptr<RemoteConnector> connector);
// The program's connector; throws Error when the program has none (built without Qt WebSockets).
std::shared_ptr<RemoteConnector> remoteConnector();

// "remote:HOST:PORT" → "HOST:PORT"; "" for any other backend name. Throws Error for "remote:" without a port.
std::string remoteAddress(const std::string& backendName);

namespace detail {
// The backend RunOptions or MeasureOptions ask for: the worker's at `remote`, else the local cpu or cuda one
// (in a worker process when the program's connector isolates that kind: RemoteConnector::isolated).
std::unique_ptr<KernelBackend> makeKernelBackend(BackendKind kind, const std::string& arch, const std::string& remote,
                                                 modcache::ModuleCache cache);
}  // namespace detail

}  // namespace tessera::execute
