#pragma once
// Compiling CUDA C++ source to PTX and cubin with NVRTC, in process. Needs no GPU: without one the target is
// sm_90. NVRTC rejects -O3 (it optimizes by default) and does not define INFINITY; generated source defines what
// it uses. Compiles on several threads at once are fine: each call owns its own nvrtcProgram.
#include <string>
#include <vector>

namespace tessera::cuda {

struct NvrtcResult {
  bool ok = false;
  std::string programName;
  std::string arch;                // "sm_90"
  std::vector<std::string> options;  // exactly what NVRTC was given
  std::string ptx;                 // kept for display
  std::vector<char> cubin;         // what the driver loads
  std::string log;                 // NVRTC's whole log (warnings too)
  std::string error;               // one line when !ok: "NVRTC could not compile 'k.cu': k.cu(3): error: ..."
  double compileMs = 0;
};

class NvrtcCompiler {
 public:
  // `baseOptions` go before every call's own; by default the toolkit's include folder when it exists
  // (for cuda_fp16.h and friends) and -std=c++17.
  NvrtcCompiler();
  explicit NvrtcCompiler(std::vector<std::string> baseOptions) : baseOptions_(std::move(baseOptions)) {}

  // Compiles `source` for `arch` ("" = defaultArch()). A source error gives ok == false with `error` naming the
  // program and the first error line; failures of NVRTC itself (or a build without CUDA) throw tessera::Error.
  NvrtcResult compile(const std::string& source, const std::string& programName,
                      const std::vector<std::string>& options = {}, const std::string& arch = "") const;

  const std::vector<std::string>& baseOptions() const { return baseOptions_; }

  // Device 0's architecture when a GPU is available, otherwise "sm_90".
  static std::string defaultArch();
  // NVRTC's version, "13.0" (for cache keys); throws when built without CUDA.
  static std::string version();
  // The real architectures NVRTC can target, {"sm_75", ..., "sm_90", ...}.
  static std::vector<std::string> supportedArchs();

 private:
  std::vector<std::string> baseOptions_;
};

}  // namespace tessera::cuda
