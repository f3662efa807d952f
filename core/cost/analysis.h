#pragma once
// What a scheduled kernel does, counted from its IR: launch shape (the largest extent bound to each hardware
// index, as the CUDA generator launches it), shared memory and registers per block, and the bytes each memory
// level moves. The figures are schedule-dependent on purpose: a tiling that re-reads operands moves more bytes.
#include <cstdint>

#include "kernel/kernel_ir.h"

namespace tessera::cost {

struct KernelFigures {
  // Launch.
  int64_t blocks = 1;            // grid size (product over blockIdx.*)
  int64_t threadsPerBlock = 1;   // product over threadIdx.* (a warp loop counts 32 lanes per warp)
  int64_t sharedBytesPerBlock = 0;
  int registersPerThread = 0;    // an estimate: base + register buffers + values kept live by unrolling
  int64_t cpuParallelIterations = 1;  // CPU: extent of the OpenMP-parallel loop (1: serial)
  int launches = 1;              // GPU: one per phase its grid barriers separate (a row split over blocks)
  // Work.
  double irFlops = 0;            // floating-point operations counted from the IR (per element executed)
  double vectorFlops = 0;        // CPU: the part in loops a C++ compiler can vectorize (contiguous accesses)
  double tensorFlops = 0;        // GPU: the part in tiles bound to the mma lanes (run on the tensor cores)
  bool tf32 = false;             // the tensor-core tiles take f32 operands as TF32 (template parameter tf32)
  // The share of the device's matrix rate the form's tensor-core tiles reach when every SM has a block (1 for
  // the gemm and conv forms, whose measured rates the device file holds; less for flash attention, whose
  // softmax between the two products holds the tensor pipe back).
  double matrixShare = 1.0;
  // Bytes per level.
  double compulsoryBytes = 0;    // each global input read once, each output written once
  double l2Bytes = 0;            // global reads as blocks fetch them (per-block footprint x blocks) + writes
  double l1Bytes = 0;            // global load/store instructions, in 32-byte sectors (GPU) / cache lines (CPU)
  double sharedBytes = 0;        // shared-memory reads and writes
  double inputBytes = 0;         // global inputs' sizes (the working set the L2 must hold to avoid re-reads)
  // One GPU thread's dependent chain: serial loop iterations that wait on a global load (L1/L2 hit latency),
  // on a shared load only, and barrier / shuffle steps. Sets the time when few warps run per SM.
  double serialGlobalLoads = 0, serialSharedLoads = 0, syncSteps = 0;
};

// `gpu` chooses how accesses coalesce: across the 32 lanes of a warp (GPU) or along the innermost loop (CPU).
KernelFigures analyzeKernel(const kernel::Kernel& k, bool gpu);

}  // namespace tessera::cost
