// The `cpu` backend: one shared object per distinct kernel (module_source.h), compiled by the system compiler
// concurrently (one compiler process per hardware thread) or taken from the module cache, loaded once.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/cache/parallel_jobs.h"
#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/cpu_timing.h"
#include "runtime/execute/backend.h"
#include "runtime/execute/module_source.h"

namespace tessera::execute::detail {
namespace {

// What decides the shared object's bytes besides the source. The compiler runs twice for its identity: once
// per process, compiler and flags.
struct CompilerKey {
  std::string options, target, toolkit;
};

const CompilerKey& compilerKey(const cpu::CpuCompiler& compiler) {
  static std::mutex mutex;
  static std::map<std::string, CompilerKey> known;  // by path and flags
  std::string flags;
  for (const auto& f : compiler.flags()) flags += (flags.empty() ? "" : " ") + f;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(compiler.compilerPath() + " " + flags);
  if (it != known.end()) return it->second;
  cpu::CompilerIdentity id = compiler.identity();
  CompilerKey key{id.flags, id.target + " | " + cpu::hostCpuIdentity(), id.path + " | " + id.version};
  return known.emplace(compiler.compilerPath() + " " + flags, std::move(key)).first->second;
}

class CpuBackend : public KernelBackend {
 public:
  explicit CpuBackend(modcache::ModuleCache cache) : cache_(std::move(cache)) {}
  std::string device() const override {
    return "host CPU, " + std::to_string(std::thread::hardware_concurrency()) + " threads";
  }
  std::string cannotRun() const override { return ""; }

  std::vector<KernelBuild> build(const std::vector<const codegen::GeneratedKernel*>& kernels) override {
    std::vector<KernelBuild> out(kernels.size());
    libs_.assign(kernels.size(), nullptr);
    fns_.assign(kernels.size(), nullptr);
    std::vector<std::string> sources;
    std::vector<size_t> owners = moduleOwners(kernels, sources);
    cpu::CpuCompiler compiler;
    const CompilerKey& ck = compilerKey(compiler);
    modcache::runJobs(kernels.size(), [&](size_t i) {
      if (owners[i] != i || cancel.cancelled()) return;  // not generated, another kernel builds its module, or cancelled
      try {
        buildOne(compiler, {"cpu-so", sources[i], ck.options, ck.target, ck.toolkit}, kernels[i]->entry, i, out[i]);
      } catch (const std::exception& e) {
        out[i].error = e.what();
      }
    });
    shareBuilds(owners, out);
    if (std::any_of(out.begin(), out.end(), [](const KernelBuild& b) { return b.compileMs > 0; })) cache_.trim();
    for (size_t i = 0; i < kernels.size(); ++i)
      if (owners[i] != kNoModule && owners[i] != i) fns_[i] = fns_[owners[i]];
    return out;
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
        warmup, reps, timeBudgetMs_);
  }

 private:
  // Kernel i's module (key.source, called `name`) from the cache, else compiled and stored; a cached object that
  // will not load is compiled again.
  void buildOne(const cpu::CpuCompiler& compiler, const modcache::ModuleKey& key, const std::string& name, size_t i,
                KernelBuild& b) {
    if (std::optional<std::string> image = cache_.find(key, &b.warning)) {
      try {
        libs_[i] = cpu::SharedLibrary::openImage(*image, name);
        b.cached = true;
      } catch (const std::exception& e) {
        b.warning = "module cache entry for " + name + " did not load, compiling again: " + e.what();
      }
    }
    if (!b.cached) {
      cpu::CpuBuild one = compiler.build(key.source, name, 300, cancel.flag());
      b.compileMs = one.compileMs;
      if (!one.ok) {
        b.error = one.error;
        return;
      }
      libs_[i] = one.library;
      if (std::string why = cache_.store(key, one.image); !why.empty()) b.warning = why;
    }
    fns_[i] = libs_[i]->function<void(void**)>(std::string(kModuleEntry) + "_call");
  }

  modcache::ModuleCache cache_;
  std::vector<std::shared_ptr<cpu::SharedLibrary>> libs_;
  std::vector<void (*)(void**)> fns_;
};

}  // namespace

std::unique_ptr<KernelBackend> makeCpuBackend(modcache::ModuleCache cache) {
  return std::make_unique<CpuBackend>(std::move(cache));
}

}  // namespace tessera::execute::detail
