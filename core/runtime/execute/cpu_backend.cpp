// The `cpu` backend: all kernels of a model in one C++ translation unit (one compiler run), loaded once.
#include <thread>

#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/cpu_timing.h"
#include "runtime/execute/backend.h"

namespace tessera::execute::detail {
namespace {

class CpuBackend : public KernelBackend {
 public:
  std::string device() const override {
    return "host CPU, " + std::to_string(std::thread::hardware_concurrency()) + " threads";
  }
  std::string cannotRun() const override { return ""; }

  std::vector<std::string> build(const std::vector<const codegen::GeneratedKernel*>& kernels) override {
    std::vector<std::string> errors(kernels.size());
    fns_.assign(kernels.size(), nullptr);
    std::vector<codegen::GeneratedKernel> all;
    for (auto* k : kernels)
      if (k) all.push_back(*k);
    cpu::CpuCompiler compiler;
    cpu::CpuBuild b = compiler.build(codegen::combineSources(all), "model", 300, cancel.flag());
    if (b.ok) {
      lib_ = b.library;
      for (size_t i = 0; i < kernels.size(); ++i)
        if (kernels[i]) fns_[i] = lib_->function<void(void**)>(kernels[i]->entry + "_call");
      return errors;
    }
    // One kernel broke the build: compile each alone to say which.
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (!kernels[i]) continue;
      cancel.check();
      cpu::CpuBuild one = compiler.build(kernels[i]->source, kernels[i]->entry);
      if (!one.ok) {
        errors[i] = one.error;
        continue;
      }
      libs_.push_back(one.library);
      fns_[i] = one.library->function<void(void**)>(kernels[i]->entry + "_call");
    }
    return errors;
  }

  double run(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) override {
    std::vector<void*> args;
    for (const auto& p : params) args.push_back(p.host);
    auto fn = fns_.at(index);
    return cpu::medianHostMs(
        [&] {
          cancel.check();
          fn(args.data());
        },
        warmup, reps);
  }

 private:
  std::shared_ptr<cpu::SharedLibrary> lib_;
  std::vector<std::shared_ptr<cpu::SharedLibrary>> libs_;
  std::vector<void (*)(void**)> fns_;
};

}  // namespace

std::unique_ptr<KernelBackend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

}  // namespace tessera::execute::detail
