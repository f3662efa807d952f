#include "runtime/cpu/cpu_threads.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

namespace tessera::cpu {
namespace {
std::atomic<int> setting{0};
}  // namespace

void setCpuThreads(int n) { setting = std::max(0, n); }

int cpuThreadsSetting() { return setting; }

int cpuThreads() {
  if (int n = setting; n > 0) return n;
  if (const char* env = std::getenv("OMP_NUM_THREADS"); env && *env) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace tessera::cpu
