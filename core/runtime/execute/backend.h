#pragma once
// Internal: what a backend does for the executor. Pointers are host pointers; a device backend copies.
#include <memory>
#include <string>
#include <vector>

#include "codegen/codegen.h"

namespace tessera::execute::detail {

struct ParamBuffer {
  void* host;
  size_t bytes;
  bool output;
  // The kernel's error record (index_record.h), an output whose zeroed contents go in too.
  bool record = false;
};

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  virtual std::string device() const = 0;
  virtual std::string cannotRun() const = 0;  // empty when kernels can run here
  // Compiles the kernels (null entries: not generated); returns one error per kernel ("" = ok).
  virtual std::vector<std::string> build(const std::vector<const codegen::GeneratedKernel*>& kernels) = 0;
  // Runs kernel `index` on its parameters (inputs then outputs, host memory): the median ms. Throws on failure.
  virtual double run(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) = 0;
};

std::unique_ptr<KernelBackend> makeCpuBackend();
std::unique_ptr<KernelBackend> makeCudaBackend(const std::string& arch);

}  // namespace tessera::execute::detail
