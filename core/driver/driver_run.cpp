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

execute::RunOptions Driver::runOptions(const RunRequest& request, const CancelToken& cancel) {
  const DriverOptions d = options();
  execute::RunOptions o;
  o.reps = request.reps;
  o.warmup = request.warmup;
  o.arch = d.arch;
  o.remote = d.remote;
  o.inputs = request.inputs;
  o.seed = request.seed;
  o.verify = request.verify;
  o.moduleCache = request.moduleCache;
  o.kernelBudgetMs = request.kernelBudgetMs;
  o.keepValues = request.keepValues;
  o.memoryLimit = request.memoryLimit;
  o.cancel = cancel;
  std::lock_guard lock(mutex_);
  o.session = session_;  // a repeat keeps the cpu worker and the model's constants in its memory
  return o;
}

std::shared_ptr<const RunStage> Driver::run(const RunRequest& request, const CancelToken& cancel) {
  std::unique_lock lock(mutex_);
  const execute::BackendKind backend = options_.backend;
  const uint64_t generation = generation_;
  lock.unlock();
  auto r = std::make_shared<RunStage>();
  r->kernels = kernelsFor(execute::machineOf(backend), cancel);
  execute::RunOptions o = runOptions(request, cancel);
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

execute::RunReport Driver::baseline(const RunRequest& request, const RunStage& ran, const CancelToken& cancel) {
  const execute::BackendKind backend = options().backend;
  if (backend == execute::BackendKind::Reference || !ran.report.ran || !ran.report.stopped.empty()) return {};
  execute::RunReport b = execute::executeBaseline(ran.kernels->model, backend, runOptions(request, cancel));
  std::lock_guard lock(mutex_);
  if (kept_.run && kept_.run->kernels == ran.kernels) {  // the kept run is this one: it gets the baseline too
    auto kept = std::make_shared<RunStage>(*kept_.run);
    execute::addBaseline(kept->report, b);
    kept_.run = kept;
  }
  return b;
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
