#pragma once
// Code generators: a scheduled Kernel (kernel IR) to readable CUDA C++ (one `extern "C" __global__` function)
// or C++ for the CPU (one `extern "C"` function, OpenMP-parallel outer loops). Identifiers come from the kernel
// IR's generated names; model names (values, node ids) appear only in sanitized comments. Every line of the
// source maps back to the ids of the graph nodes its statement came from (the source map).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernel/kernel_ir.h"

namespace tessera::codegen {

enum class Target { Cuda, Cpu };

inline constexpr size_t kErrorRecordWords = 4;

struct LaunchDims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned threads() const { return block[0] * block[1] * block[2]; }
};

struct GeneratedKernel {
  std::string kernelId;    // Kernel::id
  std::string entry;       // the generated function's name
  std::string source;      // a whole translation unit: prelude + body
  std::string prelude;     // the target's fixed helpers (the same for every kernel of a target)
  std::string body;        // the function itself (and, on the CPU, its `<entry>_call(void** args)` wrapper)
  LaunchDims launch;       // CUDA: grid and block; CPU: unused
  // Source map: lineNodes[n] = node ids of line n+1 (empty for lines that stand for no statement).
  std::vector<std::vector<std::string>> lineNodes;
  std::vector<std::string> params;  // parameter buffer names in order (inputs then outputs)
  // The kernel's index checks (kernel::CheckedIndex). When there are any, the function takes an error record
  // after the outputs (before CUDA's workspaces; on the CPU, args[params.size()]): kErrorRecordWords int64
  // words the caller zeroes, which the first index out of range sets to [check + 1, index, extent, position].
  std::vector<kernel::IndexCheck> indexChecks;
  // CUDA: global workspaces (kernel buffers in global memory that hold no graph value: the partials of a row
  // split over blocks), passed after the outputs, in this order; the backend allocates them. The CPU form
  // allocates its own.
  struct Scratch {
    std::string name;
    size_t bytes = 0;
  };
  std::vector<Scratch> scratch;
  // CUDA: launches in order, the phase number (0 ..) the kernel's last parameter when more than one; each phase
  // sees every write of the phases before it (kernel IR grid barriers).
  int phases = 1;
  // How exactly it computes: "tf32" when products ran on operands rounded to tf32 (CUDA, a schedule with
  // tf32 = 1 on the tensor cores); empty when every operation is exact in its buffers' dtypes.
  std::string precision;
  // CUDA: bytes of dynamic shared memory to launch with (0: the shared arrays are static, at most 48 KiB).
  size_t dynamicSharedBytes = 0;
  // CUDA: uses instructions of an architecture-specific target (wgmma: sm_90a, Hopper only); see nvrtcArch.
  bool archSpecific = false;
  // CUDA: tiles filled by the tensor memory accelerator (TMA, cp.async.bulk.tensor): one tensor map per source,
  // passed by value after every other parameter, in this order. The backend encodes each (cuTensorMapEncodeTiled)
  // over the source parameter's device address: row-major dims and a box of `box` elements, 128-byte swizzled.
  struct TensorMap {
    size_t param = 0;            // index into params: the global buffer the tiles come from
    std::vector<uint64_t> dims;  // innermost first (TMA's order)
    std::vector<uint32_t> box;   // innermost first
    int elementBytes = 2;
    bool bf16 = true;            // else f16
  };
  std::vector<TensorMap> tensorMaps;
};

// The architecture NVRTC compiles `g` for on a device of `deviceArch` ("sm_90"): its architecture-specific
// variant ("sm_90a") when the kernel needs one. Throws Error naming the kernel when the device has none
// (wgmma exists on sm_90 alone).
std::string nvrtcArch(const GeneratedKernel& g, const std::string& deviceArch);

// Throws tessera::Error naming the kernel and the statement it cannot generate.
// Whether generated code (either target) can hold values of `t`: float4 it cannot yet (a storage type of the
// reference semantics, ir/dtype.h); a group with such values runs on the host. The float8 types are bytes it
// decodes and encodes, the 4- and 2-bit integers bytes it wraps to their width.
bool hasGeneratedForm(DType t);

GeneratedKernel generateCuda(const kernel::Kernel& k);
GeneratedKernel generateCpp(const kernel::Kernel& k);
inline GeneratedKernel generate(const kernel::Kernel& k, Target t) {
  return t == Target::Cuda ? generateCuda(k) : generateCpp(k);
}

// Text safe inside a comment: keeps [A-Za-z0-9_.-/ ], drops the rest (so no "*/" or newline gets through).
std::string sanitizeComment(const std::string& text);
// A C identifier made from generated text: other characters become '_', a leading digit gets a prefix.
std::string identifier(const std::string& text);
// The name of the generated function for a kernel id.
std::string entryName(const std::string& kernelId);

}  // namespace tessera::codegen

namespace tessera::codegen {
// One translation unit holding several kernels of one target: one prelude (the fullest), then every body.
std::string combineSources(const std::vector<GeneratedKernel>& kernels);
}  // namespace tessera::codegen
