#include "runtime/cpu/cpu_timing.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "ir/error.h"

namespace tessera::cpu {

double medianHostMs(const std::function<void()>& fn, int warmup, int reps) {
  if (reps < 1 || reps > 100000 || warmup < 0 || warmup > 100000)
    fail("CPU timing: reps must be 1..100000 and warmup 0..100000 (got reps " + std::to_string(reps) +
         ", warmup " + std::to_string(warmup) + ")");
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

}  // namespace tessera::cpu
