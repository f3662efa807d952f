#pragma once
// Running a program directly (posix_spawn, no shell) with its output captured, a time limit and cancellation.
#include <atomic>
#include <string>
#include <vector>

namespace tessera::cpu {

struct ProcessResult {
  bool started = false;   // false: `output` says why it could not start
  int exitCode = -1;      // when it exited normally
  int signal = 0;         // when a signal ended it
  bool timedOut = false;  // killed after the time limit
  bool cancelled = false; // killed because *cancel became true
  std::string output;     // stdout and stderr, interleaved as written
  bool succeeded() const { return started && exitCode == 0 && signal == 0; }
};

// Runs argv[0] (an absolute path) with stdin from /dev/null and stdout+stderr written to `outputFile`, which is
// read back (at most 1 MiB) into the result. Kills the program after `timeoutSeconds` or when *cancel turns true.
ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& outputFile,
                         double timeoutSeconds = 300, const std::atomic<bool>* cancel = nullptr);

// The first executable named `name` in $PATH, or "" when there is none.
std::string findOnPath(const std::string& name);

// A program Tessera starts itself (the cpu worker, the window's GPU worker): the one $envVar names (when it is
// executable), else `name` beside this program, else `built` (where this build made it); "" when none is.
std::string findCompanionProgram(const std::string& name, const char* envVar, const std::string& built);

}  // namespace tessera::cpu
