#pragma once
// The launch shape a scheduled kernel implies: for each hardware index, the largest extent of a loop bound to
// it (loops bound to the same index in sibling nests share it, the shorter ones guarded). Warps add 32 lanes
// each to threadIdx.x; the mma lane tags stand for the 32 lanes of one warp. The CUDA generator launches this
// shape and the cost model counts with it: one rule, here.
#include <cstdint>
#include <string>

#include "kernel/kernel_ir.h"

namespace tessera::kernel {

struct LaunchShape {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
  int64_t threads() const { return block[0] * block[1] * block[2]; }
};

LaunchShape launchShape(const Kernel& k);
// The launches a run of the kernel takes on the GPU: one per phase its grid barriers separate (1 without any).
int launchCount(const Kernel& k);

// The copies of `buffer` a block holds: the stages of the pipelined loop whose body copies into it
// asynchronously (docs/kernel-ir.md, Pipelines: one copy per stage), else 1.
int64_t bufferCopies(const Kernel& k, const std::string& buffer);
// The shared memory one block allocates: each shared buffer times its copies, in bytes.
int64_t sharedBytesPerBlock(const Kernel& k);
// A block's shared memory: static arrays stop at 48 KiB; above that the generated kernel takes its arrays from
// dynamic shared memory (codegen.h, dynamicSharedBytes), up to the 227 KiB a block may opt in to on sm_90.
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;
inline constexpr int64_t kSharedBytesLimit = 227 * 1024;
std::string sharedLimitText();  // "227 KiB", for refusals

}  // namespace tessera::kernel
