#pragma once
// Timing scheduled variants of a model's kernels (what the tuner measures), through the same code generators
// and backends as executeModel: all variants are built as one unit (one compiler run, or one NVRTC program),
// each runs on the reference interpreter's values of its inputs and is checked against the reference's outputs.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "runtime/execute/executor.h"

namespace tessera::execute {

struct KernelVariant {
  size_t kernel = 0;          // index into CompiledModel::kernels
  kernel::Kernel scheduled;   // the lowered kernel with another schedule applied
};

struct VariantTiming {
  double ms = -1;             // median; -1 when it did not run
  bool pruned = false;        // a single run (see MeasureOptions::pruneFactor)
  bool verified = false;
  double maxRelErr = 0;
  std::string status = "not run";  // ok, mismatch, not compiled, not run, failed, cancelled
  std::string message;
};

struct MeasureOptions {
  int reps = 5, warmup = 1;
  std::string arch;           // CUDA: "" = the device's, or sm_90 without one
  uint64_t seed = 0;          // random inputs
  // > 0: a variant whose first run is slower than this many times the best verified median of the same kernel
  // so far keeps that one time instead of a full median (slow candidates cost one run, not warmup + reps).
  double pruneFactor = 0;
  const std::atomic<bool>* cancel = nullptr;            // checked between variants
  std::function<void(size_t done, size_t total)> progress;  // after each variant
};

struct MeasureReport {
  std::string device;         // the backend's device string
  std::string cannotRun;      // why nothing ran (cuda without a GPU), else empty
  std::vector<VariantTiming> timings;  // one per variant, in order
};

MeasureReport measureVariants(const CompiledModel& model, const std::vector<KernelVariant>& variants,
                              BackendKind backend, const MeasureOptions& options);

}  // namespace tessera::execute
