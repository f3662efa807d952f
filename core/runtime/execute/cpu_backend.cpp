// The `cpu` backend: one module per distinct kernel (module_source.h), taken from the module cache or compiled by
// the system compiler, several modules to a compiler run (module_batch.h) and one run per hardware thread at
// once, and run in a worker process (runtime/cpu/cpu_worker.h): a kernel that crashes fails its run and the next
// run gets a new worker.
// The executor's arena lives in the worker's shared region (residentMemory), so a kernel runs on its values in
// place; any other parameter is copied into the region and its outputs back, outside the timing.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "ir/error.h"
#include "runtime/cache/parallel_jobs.h"
#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/cpu_threads.h"
#include "runtime/cpu/cpu_worker.h"
#include "runtime/execute/backend.h"
#include "runtime/execute/module_batch.h"
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
    const int threads = cpu::cpuThreads();
    return "host CPU, " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  }
  std::string cannotRun() const override {
    if (worker_.program().empty())
      return "the cpu backend cannot run kernels here: no tessera-cpu-worker beside this program, and "
             "$TESSERA_CPU_WORKER names none";
    return cpu::CpuCompiler::findCompiler().empty() ? cpu::CpuCompiler::kNoCompiler : "";
  }

  std::vector<KernelBuild> build(const std::vector<const codegen::GeneratedKernel*>& kernels) override {
    std::vector<KernelBuild> out(kernels.size());
    names_.assign(kernels.size(), "");
    std::vector<std::string> sources;
    std::vector<size_t> owners = moduleOwners(kernels, codegen::Target::Cpu, sources);
    owners_ = owners;
    std::vector<std::string> images(kernels.size());
    try {
      worker_.startEarly();  // its start overlaps the compiles; the modules follow when they are built
    } catch (const std::exception&) {  // the first run says why
    }
    cpu::CpuCompiler compiler;
    const CompilerKey& ck = compilerKey(compiler);
    auto keyOf = [&](size_t i) { return modcache::ModuleKey{"cpu-so", sources[i], ck.options, ck.target, ck.toolkit}; };
    std::map<std::string, std::vector<size_t>> missing;  // by prelude: the modules the cache lacks
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (owners[i] != i) continue;  // not generated, or another kernel builds its module
      if (std::optional<std::string> cached = cache_.find(keyOf(i), &out[i].warning)) {
        images[i] = std::move(*cached);
        out[i].cached = true;
        continue;
      }
      std::string prelude = modulePrelude(*kernels[i]);
      if (sources[i].compare(0, prelude.size(), prelude) != 0) prelude.clear();  // a whole unit of its own
      missing[prelude].push_back(i);
    }
    std::vector<std::pair<const std::string*, std::vector<size_t>>> batches;
    for (const auto& [prelude, modules] : missing)
      for (auto& b : formBatches(modules, sources, prelude.size(), modcache::hardwareThreads()))
        batches.emplace_back(&prelude, std::move(b));
    modcache::runJobs(batches.size(), [&](size_t b) {
      if (cancel.cancelled()) return;
      const auto& [prelude, members] = batches[b];
      try {
        buildBatch(compiler, *prelude, members, kernels, sources, out, images);
      } catch (const std::exception& e) {  // e.g. its source could not be written: each member says why
        for (size_t i : members) out[i].error = e.what();
      }
      for (size_t i : members)
        if (out[i].error.empty())
          if (std::string why = cache_.store(keyOf(i), images[i]); !why.empty()) out[i].warning = why;
    });
    shareBuilds(owners, out);
    if (std::any_of(out.begin(), out.end(), [](const KernelBuild& b) { return b.compileMs > 0; })) cache_.trim();
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (kernels[i]) names_[i] = kernels[i]->kernelId;
      if (owners[i] == i && out[i].error.empty() && !images[i].empty())
        worker_.addModule(i, kernels[i]->entry, taggedEntry(sources[i]) + "_call", std::move(images[i]));
    }
    return out;
  }

  std::byte* residentMemory(size_t bytes, size_t keep) override {
    std::byte* base = worker_.pinnedRegion(bytes, keep);
    residentBytes_ = base ? (bytes + 63) / 64 * 64 : 0;
    return base;
  }

  // The worker, its modules and its region outlive a run: a driver's next run keeps them (RunSession).
  bool keptBetweenRuns() const override { return true; }

  double run(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) override {
    size_t slot = owners_.at(index);
    if (slot == kNoModule) fail("kernel '" + names_.at(index) + "' was not generated");
    std::vector<const ParamBuffer*> ps;
    for (const ParamBuffer& p : params) ps.push_back(&p);
    std::vector<uint64_t> offsets = placeInRegion(ps);
    double ms = worker_.run(slot, offsets, warmup, reps, timeBudgetMs_, cancel, names_.at(index));
    copyOutputsBack(ps, offsets, false);  // the kernels after it read them here
    return ms;
  }

  // Every kernel's parameters in the region at once (values the memory plan gives one buffer share a place, as
  // they do in the arena); the worker calls the kernels in order, timed as one, and the outputs to download come
  // back.
  WholeRunTimes runWhole(const std::vector<size_t>& order, const std::vector<std::vector<ParamBuffer>>& params,
                         int warmup, int reps) override {
    std::vector<const ParamBuffer*> ps;
    for (const auto& kernelParams : params)
      for (const ParamBuffer& p : kernelParams) ps.push_back(&p);
    std::vector<uint64_t> offsets = placeInRegion(ps);
    std::vector<cpu::worker::RunStep> steps;
    size_t at = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      size_t slot = owners_.at(order[k]);
      if (slot == kNoModule) fail("kernel '" + names_.at(order[k]) + "' was not generated");
      cpu::worker::RunStep step{uint32_t(slot), {}};
      for (size_t i = 0; i < params[k].size(); ++i) step.offsets.push_back(offsets[at++]);
      steps.push_back(std::move(step));
    }
    double budget = timeBudgetMs_ * double(std::max<size_t>(order.size(), 1));
    WholeRunTimes t{worker_.run(steps, warmup, reps, budget, cancel, "the whole run"), -1, ""};
    copyOutputsBack(ps, offsets, true);
    return t;
  }

 private:
  // The modules `members` (each source starting with `prelude`) built by one compiler run, its time shared
  // evenly among them. When the unit does not compile, each is built alone so that the error is its own.
  void buildBatch(const cpu::CpuCompiler& compiler, const std::string& prelude, const std::vector<size_t>& members,
                  const std::vector<const codegen::GeneratedKernel*>& kernels, const std::vector<std::string>& sources,
                  std::vector<KernelBuild>& out, std::vector<std::string>& images) {
    std::vector<const std::string*> units;
    for (size_t i : members) units.push_back(&sources[i]);
    const std::string& first = kernels[members[0]]->entry;
    std::string name = members.size() == 1 ? first : first + "_and_" + std::to_string(members.size() - 1) + "_more";
    cpu::CpuBuild built = compiler.build(batchSource(prelude, units), name, 300, cancel.flag());
    if (!built.ok && !built.stopped && members.size() > 1) {
      for (size_t i : members) buildBatch(compiler, prelude, {i}, kernels, sources, out, images);
      return;
    }
    for (size_t i : members) {
      out[i].compileMs = built.compileMs / double(members.size());
      if (!built.ok) {
        out[i].error = built.error;
        continue;
      }
      try {
        built.library->symbol(taggedEntry(sources[i]) + "_call");
        images[i] = built.image;
      } catch (const std::exception& e) {
        out[i].error = e.what();
      }
    }
  }

  bool resident(const ParamBuffer& p) const {
    const std::byte* base = worker_.regionStart();
    auto* at = static_cast<const std::byte*>(p.host);
    return residentBytes_ && at >= base && at + p.bytes <= base + residentBytes_;
  }

  // Each parameter's offset in the shared region: where it lies for one in the resident memory (the arena), else
  // a place after it (64-byte aligned, one per host address, as large as the largest parameter there) holding a
  // copy of it.
  std::vector<uint64_t> placeInRegion(const std::vector<const ParamBuffer*>& params) {
    std::map<void*, size_t> copied;  // by host address: the most bytes any parameter there takes
    for (const ParamBuffer* p : params)
      if (!resident(*p)) copied[p->host] = std::max(copied[p->host], std::max<size_t>(p->bytes, 1));
    std::map<void*, uint64_t> copyAt;
    size_t end = residentBytes_;
    for (const auto& [host, bytes] : copied) copyAt[host] = end, end += (bytes + 63) / 64 * 64;
    std::byte* base = worker_.region(end);
    for (const auto& [host, bytes] : copied)  // outputs too: the kernel sees what it saw in this process
      std::memcpy(base + copyAt[host], host, bytes);
    std::vector<uint64_t> offsets;
    for (const ParamBuffer* p : params)
      offsets.push_back(resident(*p) ? uint64_t(static_cast<std::byte*>(p->host) - base) : copyAt[p->host]);
    return offsets;
  }

  // The outputs that are copies (those marked `download`, or all of them), back where the caller holds them.
  void copyOutputsBack(const std::vector<const ParamBuffer*>& params, const std::vector<uint64_t>& offsets,
                       bool onlyDownloads) {
    std::byte* base = worker_.region(0);
    for (size_t i = 0; i < params.size(); ++i)
      if (const ParamBuffer& p = *params[i]; p.output && (p.download || !onlyDownloads) && p.bytes && !resident(p))
        std::memcpy(p.host, base + offsets[i], p.bytes);
  }

  modcache::ModuleCache cache_;
  std::vector<size_t> owners_;      // the kernel whose module each kernel runs (its worker slot)
  std::vector<std::string> names_;  // kernel ids, for messages
  size_t residentBytes_ = 0;       // the start of the region the executor's arena lives in (residentMemory)
  cpu::CpuWorker worker_;
};

}  // namespace

std::unique_ptr<KernelBackend> makeCpuBackend(modcache::ModuleCache cache) {
  return std::make_unique<CpuBackend>(std::move(cache));
}

}  // namespace tessera::execute::detail
