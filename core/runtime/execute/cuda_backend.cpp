// The `cuda` backend: all kernels of a model in one NVRTC program (cubin for the device, or sm_90 without one);
// without a GPU it still compiles and says why it cannot run.
#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_objects.h"
#include "runtime/cuda/cuda_timing.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/backend.h"

namespace tessera::execute::detail {
namespace {

class CudaBackend : public KernelBackend {
 public:
  explicit CudaBackend(std::string arch) : arch_(std::move(arch)) {
    avail_ = cuda::cudaAvailability();
    if (avail_.available) context_ = std::make_unique<cuda::CudaContext>(0);
    if (arch_.empty()) arch_ = avail_.available ? context_->device().arch() : "sm_90";
  }
  std::string device() const override {
    return avail_.available ? context_->device().name + " (" + arch_ + ")" : "no GPU (compiling for " + arch_ + ")";
  }
  std::string cannotRun() const override { return avail_.available ? "" : "CUDA cannot run here: " + avail_.reason; }

  std::vector<std::string> build(const std::vector<const codegen::GeneratedKernel*>& kernels) override {
    kernels_ = kernels;
    std::vector<std::string> errors(kernels.size());
    functions_.assign(kernels.size(), nullptr);
    std::vector<codegen::GeneratedKernel> all;
    for (auto* k : kernels)
      if (k) all.push_back(*k);
    cuda::NvrtcCompiler nvrtc;
    cuda::NvrtcResult r = nvrtc.compile(codegen::combineSources(all), "model.cu", {}, arch_);
    if (r.ok) {
      load(r, kernels, {}, errors);
      return errors;
    }
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (!kernels[i]) continue;
      cuda::NvrtcResult one = nvrtc.compile(kernels[i]->source, kernels[i]->entry + ".cu", {}, arch_);
      if (!one.ok) errors[i] = one.error;
      else load(one, kernels, {i}, errors);
    }
    return errors;
  }

  double run(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) override {
    if (!avail_.available) fail(cannotRun());
    std::vector<cuda::DeviceBuffer> buffers;
    std::vector<cuda::DevicePtr> ptrs;
    for (const auto& p : params) {
      buffers.emplace_back(std::max<size_t>(p.bytes, 1));
      if (!p.output || p.record) buffers.back().upload(p.host);
      ptrs.push_back(buffers.back().ptr());
    }
    const codegen::GeneratedKernel& g = *kernels_.at(index);
    for (const auto& w : g.scratch) {  // workspaces: every element a phase reads, an earlier phase wrote
      buffers.emplace_back(std::max<size_t>(w.bytes, 1));
      ptrs.push_back(buffers.back().ptr());
    }
    std::vector<void*> args;
    for (auto& p : ptrs) args.push_back(&p);
    int phase = 0;
    if (g.phases > 1) args.push_back(&phase);
    const codegen::LaunchDims& d = g.launch;
    cuda::LaunchConfig cfg{{d.grid[0], d.grid[1], d.grid[2]}, {d.block[0], d.block[1], d.block[2]}, 0};
    cuda::FunctionHandle fn = functions_.at(index);
    cuda::CudaDriver& driver = cuda::CudaDriver::get();
    // One timed run is every phase, launched in order on the stream (the driver copies `phase` at each launch).
    double ms = cuda::medianKernelMs(
        [&] {
          for (phase = 0; phase < g.phases; ++phase) driver.launch(fn, cfg, args.data());
        },
        warmup, reps);
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].output) buffers[i].download(params[i].host);
    return ms;
  }

 private:
  // Loads the module when a GPU is here; `only` limits which kernels it serves (empty = all).
  void load(const cuda::NvrtcResult& r, const std::vector<const codegen::GeneratedKernel*>& kernels,
            const std::vector<size_t>& only, std::vector<std::string>& errors) {
    if (!avail_.available) return;
    try {
      modules_.emplace_back(r.cubin);
      for (size_t i = 0; i < kernels.size(); ++i) {
        bool mine = only.empty() || std::find(only.begin(), only.end(), i) != only.end();
        if (kernels[i] && mine) functions_[i] = modules_.back().function(kernels[i]->entry);
      }
    } catch (const std::exception& e) {
      for (size_t i : only) errors[i] = e.what();
      if (only.empty())
        for (size_t i = 0; i < kernels.size(); ++i) errors[i] = e.what();
    }
  }

  std::string arch_;
  cuda::Availability avail_;
  std::unique_ptr<cuda::CudaContext> context_;
  std::vector<cuda::Module> modules_;
  std::vector<cuda::FunctionHandle> functions_;
  std::vector<const codegen::GeneratedKernel*> kernels_;
};

}  // namespace

std::unique_ptr<KernelBackend> makeCudaBackend(const std::string& arch) { return std::make_unique<CudaBackend>(arch); }

}  // namespace tessera::execute::detail
