#pragma once
// Timing kernels with CUDA events on the default stream: the GPU's own clock, not the host's.
#include <functional>

#include "runtime/cuda/cuda_driver.h"

namespace tessera::cuda {

// Calls `launch` `warmup` times, then `reps` times each between two recorded events, waits for the last one and
// returns the median of the timed launches in milliseconds. reps must be 1..100000, warmup 0..100000. Needs a
// current context; a fault inside a kernel comes back as an Error from the final synchronize. budgetMs > 0 (and
// warmup >= 1): the first warm-up launch is waited for and its time bounds the rest to about budgetMs in all
// (runtime/timing_budget.h), at least one timed launch.
double medianKernelMs(const std::function<void()>& launch, int warmup, int reps, double budgetMs = 0);

// The launches `launchAll` makes on the stream it is given, captured once into a CUDA graph and timed as
// medianKernelMs times a launch (the graph's launches on a stream of its own, after what the default stream holds).
double medianGraphMs(const std::function<void(StreamHandle)>& launchAll, int warmup, int reps, double budgetMs = 0);

// The same for one kernel launched with `config` and `args`.
double medianKernelMs(FunctionHandle function, const LaunchConfig& config, void** args, int warmup, int reps);

}  // namespace tessera::cuda
