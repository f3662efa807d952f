// The stages after Kernel: generated source, PTX, runs and tuning.
#include "driver/driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/from_fusion.h"

namespace tessera::driver {

std::shared_ptr<const SourceStage> Driver::source(codegen::Target target, const CancelToken& cancel) {
  std::unique_lock lock(mutex_);
  auto& kept = target == codegen::Target::Cuda ? kept_.cuda : kept_.cpp;
  if (kept) return kept;
  const uint64_t generation = generation_;
  lock.unlock();
  auto s = std::make_shared<SourceStage>();
  s->kernels = kernelsFor(target == codegen::Target::Cuda ? kernel::Machine::Gpu : kernel::Machine::Cpu, cancel);
  s->target = target;
  for (const execute::CompiledKernel& ck : s->kernels->model.kernels) {
    cancel.check();
    s->generated.emplace_back();
    s->errors.emplace_back(ck.onHost() ? ck.placement.describe() : "");
    if (ck.onHost()) continue;
    try {
      s->generated.back() = codegen::generate(ck.kernel, target);
    } catch (const std::exception& e) {
      s->errors.back() = e.what();
    }
  }
  lock.lock();
  auto& keep = target == codegen::Target::Cuda ? kept_.cuda : kept_.cpp;
  if (generation == generation_) keep = s;
  return s;
}

std::shared_ptr<const PtxStage> Driver::ptx(const std::string& arch, const std::vector<std::string>& nvrtcOptions,
                                            const CancelToken& cancel,
                                            const std::function<void(const PtxStage&, size_t)>& soFar) {
  auto p = std::make_shared<PtxStage>();
  p->source = source(codegen::Target::Cuda, cancel);
  const size_t n = p->source->generated.size();
  p->ptx.resize(n);
  p->errors = p->source->errors;
  p->compileMs.assign(n, 0);
  const cuda::NvrtcCompiler nvrtc;
  for (size_t i = 0; i < n; ++i) {
    cancel.check();
    const codegen::GeneratedKernel& g = p->source->generated[i];
    if (p->errors[i].empty()) {
      try {
        cuda::NvrtcResult r = nvrtc.compile(g.source, g.entry + ".cu", nvrtcOptions, codegen::nvrtcArch(g, arch.empty() ? "sm_90" : arch));
        p->ptx[i] = r.ptx;
        p->errors[i] = r.ok ? "" : r.error;
        p->compileMs[i] = r.compileMs;
      } catch (const Error& e) {
        p->errors[i] = e.what();
      }
    }
    if (soFar) soFar(*p, i + 1);
  }
  return p;
}

std::shared_ptr<const RunStage> Driver::run(const RunRequest& request, const CancelToken& cancel) {
  std::unique_lock lock(mutex_);
  const execute::BackendKind backend = options_.backend;
  const std::string arch = options_.arch, remote = options_.remote;
  const uint64_t generation = generation_;
  lock.unlock();
  auto r = std::make_shared<RunStage>();
  r->kernels = kernelsFor(execute::machineOf(backend), cancel);
  execute::RunOptions o;
  o.reps = request.reps;
  o.warmup = request.warmup;
  o.arch = arch;
  o.remote = remote;
  o.inputs = request.inputs;
  o.seed = request.seed;
  o.verify = request.verify;
  o.moduleCache = request.moduleCache;
  o.kernelBudgetMs = request.kernelBudgetMs;
  o.keepValues = request.keepValues;
  o.memoryLimit = request.memoryLimit;
  o.cancel = cancel;
  o.session = session_;  // a repeat keeps the cpu worker and the model's constants in its memory
  if (backend != execute::BackendKind::Reference) o.predictMs = predictor();
  const execute::CompiledModel& m = r->kernels->model;
  r->report = request.baseline ? execute::executeWithBaseline(m, backend, o) : execute::executeModel(m, backend, o);
  for (const auto& s : m.staleSchedules) r->report.messages.push_back("stale schedule: " + s);
  for (const auto& n : r->kernels->notes) r->report.messages.push_back(n);
  lock.lock();
  if (generation == generation_ && request.keepValues) {
    // The values go to the caller only: the kept stage would hold every tensor past the caller's budget.
    auto kept = std::make_shared<RunStage>(*r);
    kept->report.values.clear();
    kept_.run = kept;
  } else if (generation == generation_) {
    kept_.run = r;
  }
  return r;
}

std::shared_ptr<const RunStage> Driver::lastRun() const {
  std::lock_guard lock(mutex_);
  return kept_.run;
}

tune::TuneReport Driver::tune(tune::TuneOptions options) {
  const DriverOptions o = this->options();
  if (options.arch.empty()) options.arch = o.arch;
  if (options.cacheDir.empty()) options.cacheDir = o.cacheDir;
  if (options.remote.empty()) options.remote = o.remote;
  // The tuner starts from the template defaults (and measures them), never from what it tuned before.
  return tune::tuneModel(defaultKernels(options.cancel), o.backend, options);
}

execute::CompiledModel Driver::defaultKernels(const CancelToken& cancel) {
  const DriverOptions o = this->options();
  std::shared_ptr<const CompileResult> compile = compiled(cancel);
  if (!compile->error.empty()) fail("compile: " + compile->error);
  return execute::compileKernels(compile->graph, execute::kernelSpecs(*compile, o.tf32, execute::machineOf(o.backend)), nullptr, cancel);
}

}  // namespace tessera::driver
