#include "app/remote/own_worker.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "runtime/cpu/process.h"

extern char** environ;

namespace tessera::remote {
namespace {

constexpr const char* kProgramName = "tessera-cli";
constexpr double kStartTimeoutS = 60;  // cuInit and the device query of a cold GPU take seconds

// 48 hexadecimal digits from the system's random source.
std::string freshToken() {
  std::random_device random;
  std::ostringstream out;
  for (int i = 0; i < 6; ++i) out << std::hex << uint32_t(random()) << uint32_t(random());
  std::string token = out.str();
  while (token.size() < 48) token += '0';
  return token;
}

// The file holds the one token; only this user may read it (the worker refuses to trust others' files).
void writeTokenFile(const std::string& path, const std::string& token) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail("GPU worker: cannot write its token file '" + path + "': " + std::strerror(errno));
  const std::string line = "tessera " + token + "\n";
  const bool written = write(fd, line.data(), line.size()) == ssize_t(line.size());
  close(fd);
  if (!written) fail("GPU worker: cannot write its token file '" + path + "'");
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

std::string workerProgram() {
#ifdef TESSERA_CLI_BUILT
  const std::string built = TESSERA_CLI_BUILT;
#else
  const std::string built;
#endif
  return cpu::findCompanionProgram(kProgramName, "TESSERA_CLI", built);
}

OwnWorker::OwnWorker(execute::BackendKind kind, std::string arch) : kind_(kind), arch_(std::move(arch)) {}

OwnWorker::~OwnWorker() {
  stop();
}

OwnWorker::Endpoint OwnWorker::endpoint(bool fresh) {
  std::lock_guard lock(mutex_);
  if (fresh) stop();
  if (!running()) start();
  return endpoint_;
}

std::string OwnWorker::logTail() {
  std::lock_guard lock(mutex_);
  return tail();
}

bool OwnWorker::running() {
  if (!endpoint_.pid) return false;
  int status = 0;
  if (waitpid(endpoint_.pid, &status, WNOHANG) == 0) return true;
  forget();  // it ended (a lost device, a crash): the next endpoint() starts another
  return false;
}

void OwnWorker::start() {
  const std::string program = workerProgram();
  if (program.empty())
    fail(std::string("GPU worker: ") + kProgramName + " is not beside this program and $TESSERA_CLI names none");
  dir_ = std::make_unique<cpu::TempDir>("tessera-gpu-worker-");
  const std::string token = freshToken(), tokens = dir_->file("tokens"), log = dir_->file("log");
  writeTokenFile(tokens, token);
  std::vector<std::string> args = {program, "serve", "--listen", "127.0.0.1:0", "--token-file", tokens, "--private",
                                   "--backend", kind_ == execute::BackendKind::Cuda ? "cuda" : "cpu"};
  if (!arch_.empty()) args.insert(args.end(), {"--arch", arch_});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Its standard input is the lifeline (serve --private): this end stays open as long as this process lives.
  int lifeline[2];
  if (pipe2(lifeline, O_CLOEXEC) != 0) fail(std::string("GPU worker: pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, lifeline[0], 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(lifeline[0]);
  if (err != 0) {
    close(lifeline[1]);
    fail("GPU worker: cannot start '" + program + "': " + std::strerror(err));
  }
  endpoint_ = {"", token, pid};
  lifeline_ = lifeline[1];
  // Its first line names the port it took.
  const std::string said = "tessera-cli serve: listening on ";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStartTimeoutS);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = readFile(log);
    if (size_t at = text.find(said); at != std::string::npos && text.find('\n', at) != std::string::npos) {
      endpoint_.address = text.substr(at + said.size(), text.find('\n', at) - at - said.size());
      return;
    }
    if (!running()) fail("GPU worker: '" + program + " serve' ended before it listened: " + tail());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop();
  fail("GPU worker: '" + program + " serve' did not listen within " + std::to_string(int(kStartTimeoutS)) + " s");
}

void OwnWorker::stop() {
  if (!endpoint_.pid) return;
  kill(endpoint_.pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {  // two seconds to stop, then killed
    if (waitpid(endpoint_.pid, nullptr, WNOHANG) != 0) return forget();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(endpoint_.pid, SIGKILL);
  while (waitpid(endpoint_.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  forget();
}

void OwnWorker::forget() {
  endpoint_ = {};
  if (lifeline_ >= 0) close(lifeline_);
  lifeline_ = -1;
}

std::string OwnWorker::tail() const {
  std::string text = dir_ ? readFile(dir_->file("log")) : "";
  if (text.size() > 400) text = "..." + text.substr(text.size() - 400);
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text.empty() ? "(it printed nothing)" : text;
}

}  // namespace tessera::remote
