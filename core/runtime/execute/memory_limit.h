#pragma once
// What a run needs in memory, known before it starts: the executor's arena (its layout replayed without memory,
// arena.h), the reference interpreter's kept values, the values a tuner keeps, the cpu worker's shared buffers,
// and the unfused baseline's arena when the baseline runs; on the GPU, the device copies and workspaces against
// the device's free memory. A run over a limit is refused with the estimate and the limit.
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "runtime/execute/executor.h"

namespace tessera::execute {

struct HostMemoryEstimate {
  uint64_t arena = 0;      // the larger of the model's arena and (with the baseline) the baseline's
  bool baselineArena = false;  // the baseline's is the larger
  uint64_t reference = 0;  // every value the reference interpreter keeps (verify)
  uint64_t kept = 0;       // RunOptions::keepValues
  uint64_t worker = 0;     // cpu: the worker's shared buffers (every buffer at once, for the whole run)
  uint64_t total() const { return arena + reference + kept + worker; }
  std::string parts() const;  // "arena 30.1 GiB + reference 8.1 GiB"
};

HostMemoryEstimate estimateHostMemory(const CompiledModel& m, BackendKind backend, const RunOptions& o, bool baseline);

// Throws Error "run needs 38.2 GiB of host memory (arena 30.1 GiB + reference 8.1 GiB); the limit is 16.0 GiB
// (setting 'memory/hostLimit')" when o.memoryLimit is set and the estimate is over it.
void checkHostMemory(const CompiledModel& m, BackendKind backend, const RunOptions& o, bool baseline);

// The tuner's run of the model (measure.h: every value kept, checked against the reference) against `limit`.
void checkTuneHostMemory(const CompiledModel& m, BackendKind backend, const MemoryLimit& limit);

// Bytes the cuda backend holds on the device for a run: one copy of every arena buffer and each kernel's workspaces.
uint64_t deviceBytesNeeded(const CompiledModel& m, const std::vector<const codegen::GeneratedKernel*>& kernels);

// "38.2 GiB", "512.0 MiB", "12 bytes".
std::string formatBytes(uint64_t bytes);
// "16G", "16 GiB", "1.5GB", "512M", "64k", "4096": binary units (k, M, G, T; B, iB optional). Throws Error
// naming the text when it is not a size.
uint64_t parseByteSize(const std::string& text);

}  // namespace tessera::execute
