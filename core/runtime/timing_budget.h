#pragma once
// A time budget for timing one kernel (cpu_timing.h, cuda_timing.h): a kernel whose warm-up and timed calls would
// together take longer than the budget gets fewer of them, so a slow kernel costs about the budget, not
// (warmup + reps) times its run. Header-only: both timing libraries use it and depend on nothing of each other.
#include <algorithm>
#include <cmath>

namespace tessera::runtime {

struct TimedCalls {
  int warmup = 0;  // warm-up calls still to make
  int reps = 1;    // timed calls
};

// After one warm-up call of `firstMs`: the calls left of `warmupLeft` + `reps` that fit `budgetMs` (<= 0: all of
// them), timed calls first and always at least one.
inline TimedCalls callsWithin(double budgetMs, double firstMs, int warmupLeft, int reps) {
  if (budgetMs <= 0 || firstMs <= 0) return {warmupLeft, reps};
  double fit = std::floor(budgetMs / firstMs) - 1;  // the first call is spent
  int calls = fit < 1 ? 1 : fit > double(warmupLeft + reps) ? warmupLeft + reps : int(fit);
  int timed = std::clamp(calls, 1, reps);
  return {std::min(warmupLeft, calls - std::min(calls, timed)), timed};
}

}  // namespace tessera::runtime
