#include "runtime/cpu/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace tessera::cpu {

namespace {

constexpr std::size_t kMaxOutput = 1 << 20;

std::string readBounded(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(kMaxOutput, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// Waits for `pid`, polling so that the time limit and cancellation are noticed; kills it when either hits.
void waitFor(pid_t pid, double timeoutSeconds, const std::atomic<bool>* cancel, ProcessResult& r) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  int status = 0;
  for (;;) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) return;  // reaped elsewhere: nothing more to learn
    bool late = std::chrono::steady_clock::now() > deadline;
    bool stop = cancel && cancel->load();
    if (late || stop) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.timedOut = late;
      r.cancelled = stop && !late;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

}  // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, const std::string& outputFile,
                         double timeoutSeconds, const std::atomic<bool>* cancel) {
  ProcessResult r;
  if (argv.empty()) {
    r.output = "no program to run";
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, outputFile.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) {
    r.output = "cannot start '" + argv[0] + "': " + std::strerror(err);
    return r;
  }
  r.started = true;
  waitFor(pid, timeoutSeconds, cancel, r);
  r.output = readBounded(outputFile);
  return r;
}

std::string findCompanionProgram(const std::string& name, const char* envVar, const std::string& built) {
  auto executable = [](const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; };
  if (const char* told = std::getenv(envVar); told && *told) return executable(told) ? told : "";
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && executable((self.parent_path() / name).string())) return (self.parent_path() / name).string();
  return executable(built) ? built : "";
}

std::string findOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace tessera::cpu
