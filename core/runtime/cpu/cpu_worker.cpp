#include "runtime/cpu/cpu_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "ir/error.h"
#include "runtime/cpu/cpu_threads.h"
#include "runtime/cpu/process.h"
#include "runtime/cpu/worker_protocol.h"

extern char** environ;

namespace tessera::cpu {

namespace {

constexpr const char* kWorkerName = "tessera-cpu-worker";

std::string errnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// `fd` moved above the descriptors the worker inherits, so that dup2 onto them always clears close-on-exec.
int aboveInherited(int fd) {
  if (fd > worker::kSocketFd) return fd;
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  if (high < 0) fail(errnoText("cpu worker: cannot move a descriptor"));
  return high;
}

// "signal 11 (segmentation fault)"
std::string signalText(int sig) {
  std::string name = strsignal(sig) ? strsignal(sig) : "unknown signal";
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  return "signal " + std::to_string(sig) + " (" + name + ")";
}

}  // namespace

std::string cpuWorkerProgram() {
#ifdef TESSERA_CPU_WORKER_BUILT
  const std::string built = TESSERA_CPU_WORKER_BUILT;
#else
  const std::string built;
#endif
  return findCompanionProgram(kWorkerName, "TESSERA_CPU_WORKER", built);
}

CpuWorker::CpuWorker(std::string program) : program_(std::move(program)) {}

CpuWorker::~CpuWorker() {
  stop();
  unmapRegion();
  if (regionFd_ >= 0) close(regionFd_);
}

void CpuWorker::addModule(size_t slot, const std::string& name, const std::string& symbol, std::string image) {
  if (modules_.size() <= slot) modules_.resize(slot + 1);
  Module& held = modules_[slot];
  if (pid_ && held.loadError.empty() && held.symbol == symbol && held.image == image) {
    held.name = name;
    return;
  }
  held = {name, symbol, std::move(image), ""};
  if (pid_) load(slot, CancelToken());
}

// Address space only (no memory behind it until the file is mapped over it): the largest from 1 TiB down to
// 1 GiB that the process's limits allow; none when even that fails (the region then moves as it grows).
void CpuWorker::reserveAddresses() {
  for (size_t bytes = size_t(1) << 40; bytes >= (size_t(1) << 30); bytes /= 2) {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) continue;
    region_ = static_cast<std::byte*>(p);
    reservedBytes_ = bytes;
    return;
  }
}

void CpuWorker::unmapRegion() {
  if (region_) munmap(region_, std::max(regionBytes_, reservedBytes_));
  region_ = nullptr;
  regionBytes_ = reservedBytes_ = 0;
}

std::byte* CpuWorker::region(size_t bytes) {
  if (regionFd_ < 0) {
    regionFd_ = memfd_create("tessera-cpu-buffers", MFD_CLOEXEC);
    if (regionFd_ < 0) fail(errnoText("cpu worker: cannot create shared memory"));
    regionFd_ = aboveInherited(regionFd_);
    reserveAddresses();
  }
  if (bytes <= regionBytes_ && region_) return region_;
  size_t grown = std::max<size_t>({bytes, 2 * regionBytes_, size_t(1) << 20});
  if (grown > reservedBytes_ && pinned_)
    grown = bytes <= reservedBytes_ ? reservedBytes_ : 0;
  if (grown == 0)
    fail("cpu worker: the shared region cannot grow to " + std::to_string(bytes) + " bytes without moving the run's values (" +
         std::to_string(reservedBytes_) + " bytes of address space were reserved for it)");
  if (ftruncate(regionFd_, off_t(grown)) != 0)
    fail(errnoText("cpu worker: cannot grow shared memory to " + std::to_string(grown) + " bytes"));
  if (grown <= reservedBytes_) {  // more of the file over the reservation, at the same address
    if (mmap(region_, grown, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, regionFd_, 0) == MAP_FAILED)
      fail(errnoText("cpu worker: cannot map shared memory"));
  } else {  // past the reservation: the region moves
    unmapRegion();
    void* p = mmap(nullptr, grown, PROT_READ | PROT_WRITE, MAP_SHARED, regionFd_, 0);
    if (p == MAP_FAILED) fail(errnoText("cpu worker: cannot map shared memory"));
    region_ = static_cast<std::byte*>(p);
  }
  regionBytes_ = grown;
  return region_;
}

std::byte* CpuWorker::pinnedRegion(size_t bytes, size_t keep) {
  region(0);
  if (bytes > reservedBytes_ / 2) return nullptr;
  std::byte* base = region(bytes);
  keep = std::min(keep, bytes);
  // Whatever ran before leaves nothing behind past `keep`: the pages are dropped, and read as zeros again.
  if (fallocate(regionFd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off_t(keep), off_t(bytes - keep)) != 0)
    std::memset(base + keep, 0, bytes - keep);
  pinned_ = true;
  return base;
}

namespace {

// This process's environment, with OMP_NUM_THREADS set to the cpu threads setting when there is one.
std::vector<std::string> workerEnvironment() {
  std::vector<std::string> env;
  const int threads = cpuThreadsSetting();
  for (char** e = environ; *e; ++e)
    if (threads == 0 || std::strncmp(*e, "OMP_NUM_THREADS=", 16) != 0) env.emplace_back(*e);
  if (threads > 0) env.push_back("OMP_NUM_THREADS=" + std::to_string(threads));
  return env;
}

}  // namespace

void CpuWorker::start(const CancelToken& cancel) {
  if (program_.empty())
    fail(std::string("no cpu worker program: ") + kWorkerName +
         " is not beside this program and $TESSERA_CPU_WORKER names none");
  region(1);
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) fail(errnoText("cpu worker: socketpair"));
  socket_ = aboveInherited(fds[0]);
  int theirs = aboveInherited(fds[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, regionFd_, worker::kRegionFd);
  posix_spawn_file_actions_adddup2(&actions, theirs, worker::kSocketFd);
  posix_spawn_file_actions_addclosefrom_np(&actions, worker::kSocketFd + 1);
  char* argv[] = {const_cast<char*>(program_.c_str()), const_cast<char*>("--serve"), nullptr};
  std::vector<std::string> env = workerEnvironment();
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  int err = posix_spawn(&pid_, program_.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(theirs);
  if (err != 0) {
    pid_ = 0;
    close(socket_);
    socket_ = -1;
    fail("cannot start the cpu worker '" + program_ + "': " + std::strerror(err));
  }
  for (size_t slot = 0; slot < modules_.size(); ++slot)
    if (!modules_[slot].image.empty()) load(slot, cancel);
}

void CpuWorker::load(size_t slot, const CancelToken& cancel) {
  Module& m = modules_[slot];
  double unused = 0;
  if (!worker::sendFrame(socket_, worker::encode(worker::LoadRequest{uint32_t(slot), m.name, m.symbol, m.image})))
    fail("module '" + m.name + "': " + endedBy(m.name));
  m.loadError = awaitReply(unused, cancel, m.name);
}

void CpuWorker::stop() {
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
  if (!pid_) return;
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = 0;
}

std::string CpuWorker::endedBy(const std::string& kernel) {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = 0;
  close(socket_);
  socket_ = -1;
  if (WIFSIGNALED(status)) return "kernel '" + kernel + "' crashed the cpu worker: " + signalText(WTERMSIG(status));
  return "kernel '" + kernel + "' ended the cpu worker: exit code " + std::to_string(WEXITSTATUS(status));
}

std::string CpuWorker::awaitReply(double& ms, const CancelToken& cancel, const std::string& kernel) {
  pollfd p{socket_, POLLIN, 0};
  for (;;) {
    int ready = poll(&p, 1, 5);  // the timeout only bounds how late a cancel is seen
    if (ready < 0 && errno != EINTR) fail(errnoText("cpu worker: poll"));
    if (cancel.cancelled()) {
      stop();
      throw Cancelled();
    }
    if (ready > 0) break;
  }
  std::optional<worker::Frame> frame = worker::receiveFrame(socket_);
  if (!frame) fail(endedBy(kernel));
  worker::Reply r = worker::decodeReply(*frame);
  ms = r.ms;
  return r.ok ? "" : r.message;
}

double CpuWorker::run(const std::vector<worker::RunStep>& steps, int warmup, int reps, double budgetMs,
                      const CancelToken& cancel, const std::string& kernel) {
  for (const worker::RunStep& step : steps)
    if (step.slot >= modules_.size() || modules_[step.slot].image.empty())
      fail("kernel '" + kernel + "': no module was built for it");
  cancel.check();
  if (!pid_) start(cancel);
  for (const worker::RunStep& step : steps)
    if (!modules_[step.slot].loadError.empty()) fail(modules_[step.slot].loadError);
  worker::RunRequest q{steps, regionBytes_, warmup, reps, budgetMs};
  if (!worker::sendFrame(socket_, worker::encode(q))) fail(endedBy(kernel));
  double ms = 0;
  if (std::string why = awaitReply(ms, cancel, kernel); !why.empty()) fail(why);
  return ms;
}

}  // namespace tessera::cpu
