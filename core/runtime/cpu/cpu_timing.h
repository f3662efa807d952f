#pragma once
// Timing host code with steady_clock.
#include <functional>

namespace tessera::cpu {

// Calls `fn` `warmup` times, then times each of `reps` calls; returns the median in milliseconds.
// reps must be 1..100000 and warmup 0..100000. budgetMs > 0 (and warmup >= 1): the first warm-up call's time
// bounds the rest to about budgetMs in all (runtime/timing_budget.h), at least one timed call.
double medianHostMs(const std::function<void()>& fn, int warmup, int reps, double budgetMs = 0);

}  // namespace tessera::cpu
