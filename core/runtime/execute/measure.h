#pragma once
// Timing scheduled variants of a model's kernels (what the tuner measures), through the same code generators
// and backends as executeModel: each variant is its own module, built concurrently (or found in the module cache).
// Each variant runs on the inputs its kernel gets in one run of the model's own kernels on the backend
// (executeModel), and is checked against the reference interpreter's outputs for the kernel's nodes on those
// inputs, or, for a kernel the reference would take too long on (MeasureOptions::referenceLimit), against the
// model's own kernel's outputs. The whole graph never runs on the reference interpreter: at 4096^3 that took
// minutes per tune.
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

// What a kernel's variants were compared with.
enum class Expected {
  Nothing,    // the kernel had no variants, or its expected outputs could not be made (see the variants' messages)
  Reference,  // the reference interpreter, run on the kernel's nodes alone
  Model,      // the model's own kernel on the same backend: checked against nothing but itself
};
std::string expectedName(Expected e);  // "", "reference", "model"

struct VariantTiming {
  double ms = -1;             // median; -1 when it did not run
  bool pruned = false;        // a single run (see MeasureOptions::pruneFactor)
  bool verified = false;
  double maxRelErr = 0;
  KernelStatus status = KernelStatus::NotRun;  // never Unchecked (variants are always checked)
  std::string message;
};

struct MeasureOptions {
  int reps = 5, warmup = 1;
  std::string arch;           // CUDA: "" = the device's, or sm_90 without one
  std::string remote;         // "HOST:PORT": measured by the worker there (remote.h); "": here
  uint64_t seed = 0;          // random inputs
  // > 0: a variant whose first run is slower than this many times the best verified median of the same kernel
  // so far keeps that one time instead of a full median (slow candidates cost one run, not warmup + reps).
  double pruneFactor = 0;
  // The most work (nodeFlops of the kernel's nodes plus the elements they produce) the reference interpreter is
  // given for one kernel; a larger kernel's variants are compared with the model's own kernel (Expected::Model).
  // The interpreter did ~1.6 GFLOP/s on two cores: a 4096^3 gemm (1.4e11 FLOPs) took 85 s. < 0: no limit.
  double referenceLimit = -1;
  CancelToken cancel;  // between variants and their repetitions: the rest are marked "cancelled"
  std::function<void(size_t done, size_t total)> progress;  // after each variant
};

struct MeasureReport {
  std::string device;         // the backend's device string
  std::string cannotRun;      // why nothing ran (cuda without a GPU), else empty
  std::vector<VariantTiming> timings;  // one per variant, in order
  std::vector<Expected> expected;      // one per model kernel: what its variants were compared with
};

MeasureReport measureVariants(const CompiledModel& model, const std::vector<KernelVariant>& variants,
                              BackendKind backend, const MeasureOptions& options);

}  // namespace tessera::execute
