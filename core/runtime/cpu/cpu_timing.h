#pragma once
// Timing host code with steady_clock.
#include <functional>

namespace tessera::cpu {

// Calls `fn` `warmup` times, then times each of `reps` calls; returns the median in milliseconds.
// reps must be 1..100000 and warmup 0..100000.
double medianHostMs(const std::function<void()>& fn, int warmup, int reps);

}  // namespace tessera::cpu
