// The `cuda` backend: one NVRTC program per distinct kernel (module_source.h), compiled concurrently on a bounded pool (cubin for the
// device, or sm_90 without one) or taken from the module cache; without a GPU it still compiles and says why it
// cannot run. Device buffers live as long as the backend: one per host buffer of the executor's arena, holding
// the value last written or uploaded there, so a value a kernel wrote stays on the device for its readers.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "ir/error.h"
#include "runtime/cache/parallel_jobs.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/cuda_objects.h"
#include "runtime/cuda/cuda_timing.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/backend.h"
#include "runtime/execute/module_source.h"

namespace tessera::execute::detail {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// A device copy of one host buffer, and which value it holds ("" = none known: upload before reading).
struct Resident {
  cuda::DeviceBuffer buffer;
  std::string value;
};

class CudaBackend : public KernelBackend {
 public:
  CudaBackend(std::string arch, modcache::ModuleCache cache) : arch_(std::move(arch)), cache_(std::move(cache)) {
    avail_ = cuda::cudaAvailability();
    try {
      if (avail_.available) context_ = std::make_unique<cuda::CudaContext>(0);
    } catch (const std::exception& e) {  // a device that cannot be opened (busy, lost): say so, never a crash
      avail_ = {false, std::string("the device cannot be used: ") + e.what()};
    }
    if (arch_.empty()) arch_ = avail_.available ? context_->device().arch() : "sm_90";
  }
  // Modules and device buffers are freed in the context they were made in, whichever thread ends the backend.
  ~CudaBackend() override {
    try {
      makeCurrent();
    } catch (const std::exception&) {  // nothing to do about it in a destructor
    }
  }
  uint64_t freeDeviceBytes() const override {
    if (!avail_.available) return 0;
    makeCurrent();
    size_t freeBytes = 0, total = 0;
    cuda::CudaDriver::get().memoryInfo(freeBytes, total);
    return freeBytes;
  }
  std::string device() const override {
    return avail_.available ? context_->device().name + " (" + arch_ + ")" : "no GPU (compiling for " + arch_ + ")";
  }
  // A fault CUDA could not recover from (lostDevice_) leaves nothing this process can run on the device.
  std::string cannotRun() const override {
    return !avail_.available ? "CUDA cannot run here: " + avail_.reason : lostDevice_;
  }

  std::vector<KernelBuild> build(const std::vector<const codegen::GeneratedKernel*>& kernels) override {
    makeCurrent();
    kernels_ = kernels;
    std::vector<KernelBuild> out(kernels.size());
    std::vector<std::vector<char>> cubins(kernels.size());
    std::vector<std::string> sources;
    std::vector<size_t> owners = moduleOwners(kernels, codegen::Target::Cuda, sources);
    cuda::NvrtcCompiler nvrtc;
    std::string options = joined(nvrtc.baseOptions()), toolkit = "NVRTC " + cuda::NvrtcCompiler::version();
    modcache::runJobs(kernels.size(), [&](size_t i) {
      if (owners[i] != i || cancel.cancelled()) return;  // not generated, or another kernel builds its module
      try {
        cubins[i] = cubinOf(nvrtc, {"cubin", sources[i], options, codegen::nvrtcArch(*kernels[i], arch_), toolkit},
                            kernels[i]->entry, out[i]);
      } catch (const std::exception& e) {
        out[i].error = e.what();
      }
    });
    load(cubins, out);
    cubins_ = std::move(cubins);
    if (std::any_of(out.begin(), out.end(), [](const KernelBuild& b) { return b.compileMs > 0; })) cache_.trim();
    shareBuilds(owners, out);
    owners_ = owners;
    shareFunctions();
    return out;
  }

  // A kernel fault poisons the context: it is reset and the modules loaded again, so the kernels after this one
  // (and the next run) get a clean one; the fault fails this kernel, naming it and the driver's error.
  double run(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) override {
    return guardFaults("kernel '" + kernels_.at(index)->kernelId + "'", [&] { return launchTimed(index, params, warmup, reps); });
  }

  WholeRunTimes runWhole(const std::vector<size_t>& order, const std::vector<std::vector<ParamBuffer>>& params,
                         int warmup, int reps) override {
    return guardFaults("the whole run", [&] { return timeWhole(order, params, warmup, reps); });
  }

 private:
  // The driver acts on the context current on the calling thread, and a backend is called from more than one:
  // a remote worker's jobs and the window's runs each come on a thread of their own.
  void makeCurrent() const {
    if (context_) context_->makeCurrent();
  }

  // Runs `body` in this backend's context; a fault there fails `what`, after the context is reset (or, where CUDA
  // cannot recover in this process, after the device is marked lost).
  template <class Body>
  auto guardFaults(const std::string& what, Body body) -> decltype(body()) {
    try {
      makeCurrent();
      return body();
    } catch (const cuda::CudaFault& f) {
      const std::string fault = what + " faulted on the GPU: " + f.errorName() + " (" + f.what() + ")";
      try {
        resetContext();
      } catch (const std::exception& e) {
        // The real driver keeps an illegal address or a launch failure sticky for the whole process (on the
        // H200 the retain after the reset failed with the same error): nothing in this process can run there.
        const std::string why = fault + "; CUDA cannot recover from this fault in the same process (" + e.what() + ")";
        lostDevice_ = why + ": GPU runs fail until Tessera is started again";
        fail(why);
      }
      fail(fault + "; the context was reset and its modules loaded again");
    }
  }

  // The TMA's tensor maps over the kernel's sources, at this run's device addresses.
  struct alignas(64) TensorMapBits {
    unsigned long long bits[16];
  };
  static std::vector<TensorMapBits> tensorMaps(const codegen::GeneratedKernel& g, const std::vector<cuda::DevicePtr>& ptrs) {
    std::vector<TensorMapBits> out(g.tensorMaps.size());
    for (size_t i = 0; i < out.size(); ++i) {
      const codegen::GeneratedKernel::TensorMap& m = g.tensorMaps[i];
      cuda::CudaDriver::get().encodeTensorMap(out[i].bits, m.bf16, ptrs.at(m.param), m.dims, m.box);
    }
    return out;
  }

  // One kernel's launch, ready to repeat: its device pointers and tensor maps and the argument array pointing at
  // them (so it stays where it was made). One launch is every phase in order (the driver copies `phase` each time).
  struct PreparedLaunch {
    cuda::FunctionHandle fn = nullptr;
    cuda::LaunchConfig cfg;
    int phases = 1, phase = 0;
    std::vector<cuda::DevicePtr> ptrs;
    std::vector<TensorMapBits> maps;
    std::vector<void*> args;
    PreparedLaunch() = default;
    PreparedLaunch(const PreparedLaunch&) = delete;
    void launch(cuda::StreamHandle stream) {
      for (phase = 0; phase < phases; ++phase) cuda::CudaDriver::get().launch(fn, cfg, args.data(), stream);
    }
  };

  void checkRunnable(const std::vector<ParamBuffer>& params) const {
    if (!avail_.available) fail(cannotRun());
    if (!lostDevice_.empty()) fail(lostDevice_);
    for (const auto& p : params)
      if (!p.output && lost_.count(p.value))
        fail("input '" + p.value + "' was only on the device and went with the context a faulted kernel reset");
  }

  // Kernel `index`'s launch on the device pointers `ptrs` (one per parameter).
  void prepare(size_t index, std::vector<cuda::DevicePtr> ptrs, PreparedLaunch& l) {
    const codegen::GeneratedKernel& g = *kernels_.at(index);
    l.ptrs = std::move(ptrs);
    for (cuda::DevicePtr w : workspaces(index, g)) l.ptrs.push_back(w);
    for (auto& p : l.ptrs) l.args.push_back(&p);
    l.phases = g.phases;
    if (g.phases > 1) l.args.push_back(&l.phase);
    l.maps = tensorMaps(g, l.ptrs);  // after every other parameter, by value
    for (TensorMapBits& m : l.maps) l.args.push_back(m.bits);
    const codegen::LaunchDims& d = g.launch;
    l.cfg = {{d.grid[0], d.grid[1], d.grid[2]}, {d.block[0], d.block[1], d.block[2]}, unsigned(g.dynamicSharedBytes)};
    l.fn = functions_.at(index);
  }

  double launchTimed(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) {
    checkRunnable(params);
    std::vector<cuda::DeviceBuffer> anonymous;  // this run's own buffers (params without a value)
    std::vector<cuda::DevicePtr> ptrs;
    for (const auto& p : params) ptrs.push_back(deviceCopy(p, anonymous));
    PreparedLaunch l;
    prepare(index, std::move(ptrs), l);
    double ms = cuda::medianKernelMs(
        [&] {
          cancel.check();
          l.launch(nullptr);
        },
        warmup, reps, timeBudgetMs_);
    finishOutputs(params, l.ptrs);
    return ms;
  }

  // Each kernel reads the resident copies the kernels before it write (every one ran once already, so each value
  // has its buffer); a parameter without a value gets a zeroed buffer of this run's own.
  WholeRunTimes timeWhole(const std::vector<size_t>& order, const std::vector<std::vector<ParamBuffer>>& params,
                          int warmup, int reps) {
    std::vector<cuda::DeviceBuffer> anonymous;
    std::vector<std::unique_ptr<PreparedLaunch>> launches;
    for (size_t k = 0; k < order.size(); ++k) {
      checkRunnable(params[k]);
      std::vector<cuda::DevicePtr> ptrs;
      for (const auto& p : params[k]) ptrs.push_back(residentCopy(p, anonymous));
      launches.push_back(std::make_unique<PreparedLaunch>());
      prepare(order[k], std::move(ptrs), *launches.back());
    }
    auto launchAll = [&](cuda::StreamHandle stream) {
      for (auto& l : launches) l->launch(stream);
    };
    double budget = timeBudgetMs_ * double(std::max<size_t>(order.size(), 1));
    WholeRunTimes t;
    t.launchedMs = cuda::medianKernelMs(
        [&] {
          cancel.check();
          launchAll(nullptr);
        },
        warmup, reps, budget);
    cancel.check();
    t.graphMs = cuda::medianGraphMs(launchAll, warmup, reps, budget);
    for (size_t k = 0; k < order.size(); ++k)  // what the graph's last launch left
      for (size_t i = 0; i < params[k].size(); ++i)
        if (const ParamBuffer& p = params[k][i]; p.output && p.download && p.bytes)
          cuda::CudaDriver::get().copyToHost(p.host, launches[k]->ptrs[i], p.bytes);
    return t;
  }

  // A value's resident buffer as the kernels left it (the whole run writes each before reading it again).
  cuda::DevicePtr residentCopy(const ParamBuffer& p, std::vector<cuda::DeviceBuffer>& anonymous) {
    if (p.value.empty()) {
      anonymous.emplace_back(std::max<size_t>(p.bytes, 1));
      anonymous.back().zero();
      return anonymous.back().ptr();
    }
    auto it = resident_.find(p.host);
    if (it == resident_.end() || it->second.buffer.bytes() < p.bytes)
      fail("value '" + p.value + "' has no device buffer: its kernel did not run");
    return it->second.buffer.ptr();
  }

  // Everything made in the faulted context goes (its handles are dead; their frees fail quietly), the primary
  // context is reset and retained again, and every module is loaded again from its cubin. Values that lived only
  // on the device are lost: a later kernel reading one fails saying so.
  void resetContext() {
    for (const auto& [host, r] : resident_)
      if (!r.value.empty() && !onHost_.count(r.value)) lost_.insert(r.value);
    resident_.clear();
    scratch_.clear();
    modules_.clear();
    context_.reset();
    cuda::CudaDriver::get().resetPrimaryContext(0);
    context_ = std::make_unique<cuda::CudaContext>(0);
    std::vector<KernelBuild> builds(cubins_.size());
    load(cubins_, builds);
    shareFunctions();
  }

  // Kernels whose module another kernel built call that kernel's function.
  void shareFunctions() {
    for (size_t i = 0; i < owners_.size(); ++i)
      if (owners_[i] != kNoModule && owners_[i] != i) functions_[i] = functions_[owners_[i]];
  }

  // The cubin of key.source (called `name` in messages) from the cache, else from NVRTC and stored.
  std::vector<char> cubinOf(const cuda::NvrtcCompiler& nvrtc, const modcache::ModuleKey& key, const std::string& name,
                            KernelBuild& b) {
    if (std::optional<std::string> image = cache_.find(key, &b.warning)) {
      b.cached = true;
      return std::vector<char>(image->begin(), image->end());
    }
    cuda::NvrtcResult r = nvrtc.compile(key.source, name + ".cu", {}, key.target);
    b.compileMs = r.compileMs;
    if (!r.ok) {
      b.error = r.error;
      return {};
    }
    if (std::string why = cache_.store(key, std::string_view(r.cubin.data(), r.cubin.size())); !why.empty())
      b.warning = why;
    return std::move(r.cubin);
  }

  // Loads each kernel's module when a GPU is here (driver calls stay on the thread whose context is current).
  void load(const std::vector<std::vector<char>>& cubins, std::vector<KernelBuild>& out) {
    modules_.clear();
    modules_.resize(cubins.size());
    functions_.assign(cubins.size(), nullptr);
    if (!avail_.available) return;
    for (size_t i = 0; i < cubins.size(); ++i) {
      if (cubins[i].empty() || !out[i].error.empty()) continue;
      try {
        modules_[i] = cuda::Module(cubins[i]);
        functions_[i] = modules_[i].function(kModuleEntry);
        // Above 48 KiB a function must opt in to its dynamic shared memory (codegen.h, dynamicSharedBytes).
        if (size_t bytes = kernels_[i]->dynamicSharedBytes)
          cuda::CudaDriver::get().setMaxDynamicSharedMemory(functions_[i], int(bytes));
      } catch (const std::exception& e) {
        out[i].error = e.what();
      }
    }
  }

  // The device pointer for one parameter: a named value's resident copy (uploaded only when the copy holds
  // another value), or a buffer of this run's own.
  cuda::DevicePtr deviceCopy(const ParamBuffer& p, std::vector<cuda::DeviceBuffer>& anonymous) {
    size_t bytes = std::max<size_t>(p.bytes, 1);
    if (p.value.empty()) {
      anonymous.emplace_back(bytes);
      if (!p.output || p.record) anonymous.back().upload(p.host);
      return anonymous.back().ptr();
    }
    Resident& r = resident_[p.host];
    if (r.buffer.bytes() < bytes) {
      r.buffer = cuda::DeviceBuffer(bytes);
      r.value.clear();
    }
    if (p.output) {
      r.value.clear();  // until the launches succeed
    } else if (r.value != p.value) {
      if (p.bytes) cuda::CudaDriver::get().copyToDevice(r.buffer.ptr(), p.host, p.bytes);
      r.value = p.value;
      onHost_.insert(p.value);
    }
    return r.buffer.ptr();
  }

  // Kernel `index`'s global workspaces, allocated on its first run (every element a phase reads, an earlier
  // phase wrote, so they need no clearing).
  const std::vector<cuda::DevicePtr>& workspaces(size_t index, const codegen::GeneratedKernel& g) {
    auto [it, fresh] = scratch_.try_emplace(index);
    if (fresh) {
      for (const auto& w : g.scratch) it->second.buffers.emplace_back(std::max<size_t>(w.bytes, 1));
      for (const auto& b : it->second.buffers) it->second.ptrs.push_back(b.ptr());
    }
    return it->second.ptrs;
  }

  // After the launches: outputs the caller reads are copied to the host; named ones stay resident.
  void finishOutputs(const std::vector<ParamBuffer>& params, const std::vector<cuda::DevicePtr>& ptrs) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (!params[i].output) continue;
      bool download = params[i].download || params[i].value.empty();
      if (download && params[i].bytes) cuda::CudaDriver::get().copyToHost(params[i].host, ptrs[i], params[i].bytes);
      if (params[i].value.empty()) continue;
      resident_[params[i].host].value = params[i].value;
      if (download) onHost_.insert(params[i].value);
      else onHost_.erase(params[i].value);
      lost_.erase(params[i].value);
    }
  }

  struct Workspaces {
    std::vector<cuda::DeviceBuffer> buffers;
    std::vector<cuda::DevicePtr> ptrs;
  };

  // Declared before what lives under it, so modules and device memory go first.
  std::string arch_;
  modcache::ModuleCache cache_;
  cuda::Availability avail_;
  std::unique_ptr<cuda::CudaContext> context_;
  std::vector<cuda::Module> modules_;
  std::vector<cuda::FunctionHandle> functions_;
  std::vector<const codegen::GeneratedKernel*> kernels_;
  std::map<void*, Resident> resident_;     // by host address
  std::map<size_t, Workspaces> scratch_;   // by kernel
  std::vector<std::vector<char>> cubins_;  // by kernel, to load again after a reset
  std::vector<size_t> owners_;             // moduleOwners
  std::set<std::string> onHost_;           // values whose latest copy the host holds too
  std::string lostDevice_;  // set when a fault left the device unusable for this process
  std::set<std::string> lost_;             // values a context reset took, held nowhere else
};

}  // namespace

std::unique_ptr<KernelBackend> makeCudaBackend(const std::string& arch, modcache::ModuleCache cache) {
  return std::make_unique<CudaBackend>(arch, std::move(cache));
}

}  // namespace tessera::execute::detail
