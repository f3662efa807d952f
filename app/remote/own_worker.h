#pragma once
// A worker process of this program's own: `tessera-cli serve --private` on a free loopback port, with a token
// made for it, so that GPU kernels run outside the window. CUDA keeps an illegal address or a launch failure for
// the whole process; in the worker, such a fault ends that process (serve --private exits when its device is
// lost, and when its standard input, a pipe this program holds, ends) and the next run starts a fresh one (docs/backends.md,
// "GPU faults").
#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>

#include "runtime/cpu/temp_dir.h"
#include "runtime/execute/executor.h"

namespace tessera::remote {

// The program a worker runs: $TESSERA_CLI, else tessera-cli beside this program, else the one this build made;
// "" when there is none.
std::string workerProgram();

class OwnWorker {
 public:
  OwnWorker(execute::BackendKind kind, std::string arch);
  ~OwnWorker();  // stops the process
  OwnWorker(const OwnWorker&) = delete;
  OwnWorker& operator=(const OwnWorker&) = delete;

  struct Endpoint {
    std::string address, token;
    pid_t pid = 0;
  };
  // A running worker, started when there is none or the last one ended; `fresh`: a new one in any case (the last
  // one could not be reached: it may be ending after a lost device, or have crashed). Throws Error naming the
  // program and why it did not start (the last lines of its log).
  Endpoint endpoint(bool fresh = false);
  // The last 400 characters of the current (or last) worker's log, on one line.
  std::string logTail();

 private:
  void start();
  bool running();
  void stop();
  void forget();  // the process ended: its endpoint and lifeline go
  std::string tail() const;

  execute::BackendKind kind_;
  std::string arch_;
  std::mutex mutex_;
  std::unique_ptr<cpu::TempDir> dir_;  // the token file and the log, private to this user
  Endpoint endpoint_;
  int lifeline_ = -1;  // the write end of the worker's standard input
};

}  // namespace tessera::remote
