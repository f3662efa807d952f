#include "driver/driver.h"

#include "ir/error.h"
#include "runtime/execute/from_fusion.h"

namespace tessera::driver {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

Driver::Driver(std::shared_ptr<const Graph> model, DriverOptions options)
    : model_(std::move(model)), options_(std::move(options)) {
  if (!model_) fail("driver: no model");
  options_.compile.cancel = {};
}

DriverOptions Driver::options() const {
  std::lock_guard lock(mutex_);
  return options_;
}

void Driver::dropFrom(Stage stage) {
  ++generation_;
  if (dependsOn(Stage::Fused, stage)) kept_.compiled = nullptr;
  if (dependsOn(Stage::Kernel, stage)) kept_.kernels = {};
  if (dependsOn(Stage::Cuda, stage)) kept_.cuda = nullptr;
  if (dependsOn(Stage::Cpp, stage)) kept_.cpp = nullptr;
  if (dependsOn(Stage::Run, stage)) kept_.run = nullptr;
}

void Driver::setCompileOptions(CompileOptions compile) {
  std::lock_guard lock(mutex_);
  options_.compile = std::move(compile);
  options_.compile.cancel = {};
  dropFrom(Stage::Graph);
}

void Driver::setSchedules(execute::ScheduleSet schedules) {
  std::lock_guard lock(mutex_);
  options_.schedules = std::move(schedules);
  dropFrom(Stage::Kernel);
}

void Driver::setBackend(execute::BackendKind backend, std::string arch, std::string remote) {
  std::lock_guard lock(mutex_);
  if (options_.backend == backend && options_.arch == arch && options_.remote == remote) return;
  if (options_.arch != arch || options_.remote != remote) kept_.targets = {};
  options_.backend = backend;
  options_.arch = std::move(arch);
  options_.remote = std::move(remote);
  dropFrom(Stage::Kernel);
  session_->clear();  // the backend kept for the old one ends
}

void Driver::setUseTuned(bool useTuned) {
  std::lock_guard lock(mutex_);
  if (options_.useTuned == useTuned) return;
  options_.useTuned = useTuned;
  dropFrom(Stage::Kernel);
}

void Driver::setTf32(kernel::Tf32Policy tf32) {
  std::lock_guard lock(mutex_);
  if (options_.tf32 == tf32) return;
  options_.tf32 = tf32;
  dropFrom(Stage::Kernel);
}

std::shared_ptr<const CompileResult> Driver::compiled(const CancelToken& cancel) {
  std::unique_lock lock(mutex_);
  if (kept_.compiled) return kept_.compiled;
  CompileOptions o = options_.compile;
  const uint64_t generation = generation_;
  lock.unlock();
  o.cancel = cancel;
  Graph work = model_->clone();
  cancel.check();  // a large model's clone takes as long as a pass
  auto result = std::make_shared<const CompileResult>(compileGraph(std::move(work), o));
  lock.lock();
  if (generation == generation_) kept_.compiled = result;
  return result;
}

std::shared_ptr<const tune::Target> Driver::target() { return targetOf(options().backend); }

std::shared_ptr<const tune::Target> Driver::targetOf(execute::BackendKind backend) {
  // The reference backend runs no generated kernels: its estimates are for the GPU's.
  const execute::BackendKind device = backend == execute::BackendKind::Reference ? execute::BackendKind::Cuda : backend;
  std::unique_lock lock(mutex_);
  const size_t slot = static_cast<size_t>(device);
  if (kept_.targets[slot]) return kept_.targets[slot];
  // The worker's device is the target of its backend's kind; the other kind's is this machine's.
  tune::TargetOptions o{options_.arch, options_.cacheDir, false, false, device == options_.backend ? options_.remote : ""};
  lock.unlock();
  // Naming the device must not take a second: the cpu's figures are the calibrated ones when `tune` measured
  // them (cached), else its data file's.
  auto t = std::make_shared<const tune::Target>(tune::describeTarget(device, o));
  lock.lock();
  if (!kept_.targets[slot] && o.arch == options_.arch && (o.remote.empty() || o.remote == options_.remote)) kept_.targets[slot] = t;
  return t;
}

std::shared_ptr<const tune::Target> Driver::measuredTarget() {
  std::shared_ptr<const tune::Target> t = target();
  std::unique_lock lock(mutex_);
  if ((t->measured && !t->provisional) || options_.backend != execute::BackendKind::Cpu || !options_.remote.empty()) return t;
  const tune::TargetOptions o{options_.arch, options_.cacheDir, true, false, ""};
  lock.unlock();
  auto measured = std::make_shared<const tune::Target>(tune::describeTarget(execute::BackendKind::Cpu, o));
  lock.lock();
  const size_t slot = static_cast<size_t>(execute::BackendKind::Cpu);
  if (kept_.targets[slot] == t) kept_.targets[slot] = measured;
  return measured;
}

std::shared_ptr<const tune::Target> Driver::measuredTargetAfter(const RunStage& ran, execute::RunReport& report) {
  const std::shared_ptr<const tune::Target> before = target();
  std::shared_ptr<const tune::Target> t = measuredTarget();
  const bool remeasured = t != before && (!before->measured || t->costDevice.toJson() != before->costDevice.toJson());
  if (remeasured && t->measured && ran.kernels)
    execute::predictKernels(ran.kernels->model, tune::costPredictor(t->costDevice), report);
  return t;
}

std::function<double(const Graph&, const kernel::Kernel&)> Driver::predictor() {
  return tune::costPredictor(target()->costDevice);
}

KernelStage Driver::lowerAll(std::shared_ptr<const CompileResult> compile, const DriverOptions& o,
                             kernel::Machine machine, const CancelToken& cancel, const Progress& progress) {
  KernelStage k;
  k.compile = compile;
  const std::vector<kernel::KernelSpec> specs = execute::kernelSpecs(*compile, o.tf32, machine);
  const execute::ScheduleSet* saved = o.schedules.traces.empty() ? nullptr : &o.schedules;
  k.model = execute::compileKernels(compile->graph, specs, saved, cancel, progress);
  // The tuning cache holds the backend's device's schedules: for its machine's kernels only.
  if (!o.useTuned || o.backend == execute::BackendKind::Reference || machine != execute::machineOf(o.backend)) return k;
  std::vector<std::string> warnings;
  execute::ScheduleSet merged = tune::cachedSchedules(k.model, *target(), o.cacheDir, &k.tunedGroups, &warnings);
  k.notes = warnings;
  if (k.tunedGroups.empty()) return k;
  for (const auto& [key, trace] : o.schedules.traces) merged.traces[key] = trace;  // the user's win
  cancel.check();
  k.model = execute::compileKernels(compile->graph, specs, &merged, cancel);
  k.notes.push_back("tuned schedules from the cache for kernels " + joined(k.tunedGroups) + " (--no-tuned to ignore)");
  return k;
}

std::shared_ptr<const KernelStage> Driver::kernels(const CancelToken& cancel, const Progress& progress) {
  return kernelsFor(kernel::Machine::Gpu, cancel, progress);
}

std::shared_ptr<const KernelStage> Driver::kernelsFor(kernel::Machine machine, const CancelToken& cancel,
                                                      const Progress& progress) {
  std::unique_lock lock(mutex_);
  auto& kept = kept_.kernels[size_t(machine)];
  if (kept) return kept;
  const DriverOptions o = options_;
  const uint64_t generation = generation_;
  lock.unlock();
  std::shared_ptr<const CompileResult> compile = compiled(cancel);
  if (!compile->error.empty()) fail("compile: " + compile->error);
  auto result = std::make_shared<const KernelStage>(lowerAll(compile, o, machine, cancel, progress));
  lock.lock();
  if (generation == generation_) kept_.kernels[size_t(machine)] = result;
  return result;
}

}  // namespace tessera::driver
