#pragma once
// Overhanging tiles: a tile that does not divide its loop is guarded (`i_o * f + i_i < extent`). Where the
// guarded work only computes on registers, the overhang can be computed and thrown away instead: the guard's
// body runs for every iteration, and only the stores to memory stay guarded. Both generators and the
// `overcompute` schedule primitive (docs/kernel-ir.md) ask the same question here. Inside a reduction the
// guard kept register tiling from the compilers: a 6304 x 2304 x 768 f32 gemm in 128-row tiles on the H200
// ran 11.3 ms guarded against 1.13 for 6272 rows.
#include "kernel/kernel_ir.h"

namespace tessera::kernel {

// What the dropped body may read besides caches (shared or local buffers, whose boxes span their loops'
// whole extents, so an overhanging index still lands inside them).
enum class OverhangReads {
  CachesOnly,                // nothing else
  CachesAndGuardFreeGlobals  // also global buffers at indices that use none of the condition's variables
                             // (each such element is one an iteration the guard keeps reads too)
};

// True when `guard`'s body only leaves out work on registers: its condition uses no reduction loop's variable
// (dropping it would add terms to a sum), it writes registers only, it holds no loop bound to threads or
// lanes (threads the guard kept out would join their work), barriers, copies or allocations, and it reads
// only what `reads` allows.
bool guardOnlySkipsRegisterWork(const Kernel& k, const IfThenStmt& guard, OverhangReads reads);

}  // namespace tessera::kernel
