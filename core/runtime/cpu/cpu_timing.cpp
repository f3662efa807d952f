#include "runtime/cpu/cpu_timing.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "ir/error.h"
#include "runtime/timing_budget.h"

namespace tessera::cpu {

namespace {
double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

double medianHostMs(const std::function<void()>& fn, int warmup, int reps, double budgetMs) {
  if (reps < 1 || reps > 100000 || warmup < 0 || warmup > 100000)
    fail("CPU timing: reps must be 1..100000 and warmup 0..100000 (got reps " + std::to_string(reps) +
         ", warmup " + std::to_string(warmup) + ")");
  if (warmup > 0 && budgetMs > 0) {
    auto start = std::chrono::steady_clock::now();
    fn();
    runtime::TimedCalls left = runtime::callsWithin(budgetMs, msSince(start), warmup - 1, reps);
    warmup = left.warmup;
    reps = left.reps;
  }
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(msSince(start));
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

}  // namespace tessera::cpu
