#pragma once
// tessera-cli: one file per command. Each adds its subcommand to the app; the callback returns the exit
// code through `exitCode` (0 success, 1 test failures, 2 bad usage or bad input).
#include <CLI/CLI.hpp>

#include <string>

#include "runtime/cpu/cpu_threads.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/memory_limit.h"

namespace tessera::cli {

void addInfoCommand(CLI::App& app, int& exitCode);
void addPrintCommand(CLI::App& app, int& exitCode);
void addConvertCommand(CLI::App& app, int& exitCode);
void addRunCommand(CLI::App& app, int& exitCode);
void addConformanceCommand(CLI::App& app, int& exitCode);
void addCompileCommand(CLI::App& app, int& exitCode);
void addSessionCommand(CLI::App& app, int& exitCode);
void addRenderCommand(CLI::App& app, int& exitCode);
void addTuneCommand(CLI::App& app, int& exitCode);
void addCompareCommand(CLI::App& app, int& exitCode);
void addLessonCommand(CLI::App& app, int& exitCode);
void addServeCommand(CLI::App& app, int& exitCode);

// --backend NAME of run, tune and conformance: a local backend, or remote:HOST:PORT, whose worker says which of
// cpu and cuda it runs (its token from $TESSERA_REMOTE_TOKEN; docs/remote.md). Throws Error when the worker
// cannot be reached or refuses the token.
struct BackendChoice {
  execute::BackendKind kind = execute::BackendKind::Cpu;
  std::string remote;  // HOST:PORT, or "" for this machine
};
BackendChoice chooseBackend(const std::string& name);
// Accepts the `local` names and remote:HOST:PORT.
CLI::Validator backendValidator(const std::vector<std::string>& local);

// --tf32 POLICY, shared by run, compile and tune (kernel::Tf32Policy::parse reads the value).
inline CLI::Option* addTf32Option(CLI::App* cmd, std::string& policy) {
  return cmd
      ->add_option("--tf32", policy,
                   "Where f32 products may round to tf32 on the tensor cores: off (exact f32), conv, matmul, all, or "
                   "pytorch (PyTorch's defaults: convolutions only)")
      ->check(CLI::IsMember({"off", "conv", "matmul", "all", "pytorch"}))
      ->capture_default_str();
}

// --memory-limit SIZE, shared by run and tune: a run whose estimate is over it is refused before it starts.
// --threads N: the cpu backend's OpenMP threads (runtime/cpu/cpu_threads.h), set as the option is parsed; 0 (the
// default) leaves them to $OMP_NUM_THREADS, else every hardware thread.
inline CLI::Option* addThreadsOption(CLI::App* cmd) {
  return cmd
      ->add_option_function<int>("--threads", [](int n) { cpu::setCpuThreads(n); },
                                 "cpu backend: OpenMP threads the kernels run with (default: $OMP_NUM_THREADS, else "
                                 "every hardware thread)")
      ->check(CLI::Range(1, 4096));
}

inline CLI::Option* addMemoryLimitOption(CLI::App* cmd, std::string& size) {
  return cmd->add_option("--memory-limit", size,
                         "Refuse a run that would need more host memory than this (16G, 512M, 1.5GiB; the estimate "
                         "counts the kernels' buffers, the reference's values and the baseline); default: no limit");
}

// The limit --memory-limit names ("" = none); a size that is not one is refused naming it.
inline execute::MemoryLimit memoryLimitOption(const std::string& size) {
  execute::MemoryLimit limit;
  if (size.empty()) return limit;
  limit.hostBytes = execute::parseByteSize(size);
  limit.source = "--memory-limit " + size;
  return limit;
}

}  // namespace tessera::cli
