// tessera-cpu-worker: runs generated CPU kernels for a cpu backend in a process of its own, so a kernel that
// crashes ends this process, not the program that asked (runtime/cpu/cpu_worker.h starts it). It loads the
// modules it is sent, runs and times kernels on buffers in the shared memory region it inherited, and answers
// each request; it ends when its socket closes.
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/error.h"
#include "runtime/cpu/cpu_timing.h"
#include "runtime/cpu/shared_library.h"
#include "runtime/cpu/worker_protocol.h"

// Under AddressSanitizer a kernel's fault must still end this process by its signal, as it does without it, so
// the backend names the signal the same way.
extern "C" const char* __asan_default_options() {
  return "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigill=0:handle_sigfpe=0:detect_leaks=0";
}

namespace tessera::cpu::worker {
namespace {

using Entry = void(void**);

struct Module {
  std::shared_ptr<SharedLibrary> library;
  Entry* entry = nullptr;
  bool sharesRegion = false;  // its loops are worksharing loops of the caller's parallel region
};

// The marker beside a kernel's `<entry>_call` saying its loops share the caller's region: `<entry>_region`
// (codegen's callWrapper).
std::string regionMarker(const std::string& callSymbol) {
  const std::string call = "_call";
  if (callSymbol.size() <= call.size() || callSymbol.compare(callSymbol.size() - call.size(), call.size(), call) != 0) return "";
  return callSymbol.substr(0, callSymbol.size() - call.size()) + "_region";
}

class Server {
 public:
  ~Server() {
    if (region_) munmap(region_, regionBytes_);
  }

  Reply handle(Frame& f) {
    Reply r;
    try {
      auto op = f.get<Op>();
      if (op == Op::Load) load(decodeLoad(f));
      else if (op == Op::Run) r.ms = run(decodeRun(f));
      else fail("cpu worker: unknown request " + std::to_string(uint32_t(op)));
      r.ok = true;
    } catch (const std::exception& e) {
      r.message = e.what();
    }
    return r;
  }

 private:
  void load(const LoadRequest& q) {
    Module m;
    std::shared_ptr<SharedLibrary>& loaded = libraries_[q.image];  // a batch's image serves several slots
    if (!loaded) loaded = SharedLibrary::openImage(q.image, q.name);
    m.library = loaded;
    m.entry = m.library->function<Entry>(q.symbol);
    std::string marker = regionMarker(q.symbol);
    m.sharesRegion = !marker.empty() && m.library->has(marker);
    modules_[q.slot] = std::move(m);
  }

  // One step's entry and its argument array.
  struct Call {
    Entry* entry;
    bool sharesRegion;
    std::vector<void*> args;
  };

  // The calls in order. Consecutive kernels whose loops share a region run in one: the threads start each
  // kernel's loops together and wait for each other at the end of each loop (OpenMP's barrier after a
  // worksharing loop), so a kernel sees its producers' writes without a fork and join of its own. The others
  // open their own regions.
  static void runCalls(std::vector<Call>& calls) {
    for (size_t i = 0; i < calls.size();) {
      if (!calls[i].sharesRegion) {
        calls[i].entry(calls[i].args.data());
        ++i;
        continue;
      }
      size_t end = i;
      while (end < calls.size() && calls[end].sharesRegion) ++end;
#pragma omp parallel
      for (size_t k = i; k < end; ++k) calls[k].entry(calls[k].args.data());
      i = end;
    }
  }

  double run(const RunRequest& q) {
    std::byte* base = map(q.regionBytes);
    std::vector<Call> calls;
    for (const RunStep& step : q.steps) {
      auto it = modules_.find(step.slot);
      if (it == modules_.end()) fail("cpu worker: no module " + std::to_string(step.slot) + " was loaded");
      Call c{it->second.entry, it->second.sharesRegion, {}};
      for (uint64_t o : step.offsets) {
        if (o > q.regionBytes) fail("cpu worker: a parameter at " + std::to_string(o) + " is past the region");
        c.args.push_back(base + o);
      }
      calls.push_back(std::move(c));
    }
    return medianHostMs(
        [&] { runCalls(calls); },
        q.warmup, q.reps, q.budgetMs);
  }

  // The region, mapped again when the backend grew it.
  std::byte* map(uint64_t bytes) {
    if (bytes == regionBytes_ && region_) return region_;
    if (region_) munmap(region_, regionBytes_);
    region_ = nullptr;
    regionBytes_ = 0;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, kRegionFd, 0);
    if (p == MAP_FAILED) fail(std::string("cpu worker: cannot map the shared buffers: ") + std::strerror(errno));
    region_ = static_cast<std::byte*>(p);
    regionBytes_ = bytes;
    return region_;
  }

  std::map<uint32_t, Module> modules_;
  std::map<std::string, std::shared_ptr<SharedLibrary>> libraries_;  // by image: each loaded once
  std::byte* region_ = nullptr;
  uint64_t regionBytes_ = 0;
};

int serve() {
  if (const std::string& why = pinOpenMpRuntime(); !why.empty()) std::fprintf(stderr, "tessera-cpu-worker: %s\n", why.c_str());
  Server server;
  for (;;) {
    std::optional<Frame> request = receiveFrame(kSocketFd);
    if (!request) return 0;  // the backend is gone
    if (!sendFrame(kSocketFd, encode(server.handle(*request)))) return 0;
  }
}

}  // namespace
}  // namespace tessera::cpu::worker

int main(int argc, char** argv) {
  if (argc != 2 || std::strcmp(argv[1], "--serve") != 0) {
    std::fprintf(stderr, "tessera-cpu-worker runs generated CPU kernels for tessera and tessera-cli; it is not run by hand\n");
    return 2;
  }
  try {
    return tessera::cpu::worker::serve();
  } catch (const std::exception& e) {  // a malformed frame: the backend reports the worker's end
    std::fprintf(stderr, "tessera-cpu-worker: %s\n", e.what());
    return 3;
  }
}
