#include "ui/run/run_controller.h"

#include <QPointer>
#include <QSettings>
#include <chrono>

#include "tune/target.h"
#include "runtime/cpu/cpu_threads.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/memory_limit.h"
#include "tune/tuner.h"
#include "ui/code/code_controller.h"
#include "ui/code/code_levels.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

BackendInfo probe(execute::BackendKind kind, const QString& name) {
  BackendInfo b{kind, name, {}, {}};
  if (kind == execute::BackendKind::Reference) {
    b.device = QObject::tr("interpreter (no generated code)");
    return b;
  }
  try {
    tune::TargetOptions o;
    o.calibrate = false;  // naming the device must not take a second; a run calibrates when it needs to
    tune::Target t = tune::describeTarget(kind, o);
    b.device = QString::fromStdString(t.costDevice.name.empty() ? t.device : t.costDevice.name);
    b.unavailable = QString::fromStdString(t.cannotRun);
  } catch (const std::exception& e) {
    b.unavailable = QString::fromStdString(e.what());
  }
  return b;
}

DevicePeaks peaksOf(const cost::Device& d) {
  return {QString::fromStdString(d.name), d.dramGBps, d.fp32Gflops,
          QString::fromStdString(d.note.empty() ? "core/cost device data" : d.note), d.l2GBps, double(d.l2Bytes)};
}

// The cpu's peaks measured on this machine (Driver::measuredTargetAfter), once the run and its baseline are done,
// so that the measuring loops have the cores to themselves, and the kernels' estimates made again from them; a
// failure is a message, the roofline left unknown.
void measurePeaks(driver::Driver& d, const driver::RunStage& ran, RunResult& r) {
  try {
    std::shared_ptr<const tune::Target> t = d.measuredTargetAfter(ran, r.report);
    if (!t->measured) return;
    r.peaks = peaksOf(t->costDevice);
    if (!r.report.device.empty()) r.peaks.name = QString::fromStdString(r.report.device);
  } catch (const std::exception& e) {
    r.report.messages.push_back(std::string("roofline: the cpu's peaks could not be measured: ") + e.what());
  }
}

std::map<std::string, std::string> groupKinds(const CompileResult& compile) {
  std::map<std::string, std::string> kinds;
  if (compile.fusion)
    for (const FusedGroup& g : compile.fusion->groups) kinds[g.id] = std::string(groupKindName(g.kind));
  return kinds;
}

// The run's values within `budget` bytes (half for its own, half for the reference's), the reference's for
// the same inputs and names, and the per-node errors; the report's own map is emptied.
std::shared_ptr<const TensorValues> keepValues(driver::Driver& d, execute::RunReport& report, int64_t budget,
                                               const CancelToken& cancel) {
  auto v = std::make_shared<TensorValues>();
  compare::KeptValues kept = compare::keepWithinBudget(report.values, {}, budget / 2);
  report.values.clear();
  for (auto& [name, t] : kept.values) v->run.emplace(name, std::move(t));
  v->dropped = std::move(kept.dropped);
  v->bytes = kept.bytes;
  compare::Values reference = compare::referenceValues(*d.compiled(cancel)->graph, v->run, cancel);
  for (const auto& [name, t] : v->run)
    if (auto it = reference.find(name); it != reference.end()) v->reference.emplace(name, it->second);
  v->nodeErrors = compare::nodeErrors(*d.compiled(cancel)->graph, v->run, v->reference);
  return v;
}

constexpr const char* kHostMemoryLimitKey = "memory/hostLimit";
constexpr const char* kCpuThreadsKey = "cpu/threads";
constexpr double kCpuKernelBudgetMs = 10;  // RunRequest::kernelBudgetMs on the cpu (runOn)

// The host memory limit of runs and tunes (RunController::hostMemoryLimit). A value that is not a size (written
// by hand) fails the run naming it.
execute::MemoryLimit hostMemoryLimitSetting() {
  execute::MemoryLimit limit;
  const QString text = RunController::hostMemoryLimit();
  if (text.isEmpty()) return limit;
  limit.source = "setting 'memory/hostLimit'";
  try {
    limit.hostBytes = execute::parseByteSize(text.toStdString());
  } catch (const std::exception& e) {
    fail(limit.source + ": " + e.what());
  }
  return limit;
}

// What the run panel says of how a run's kernels were timed.
QString timingOf(const driver::RunRequest& q) {
  QString t = QObject::tr("Each kernel's time is the median of %1 timed runs after %2 warm-ups; the whole run's likewise.")
                  .arg(q.reps)
                  .arg(q.warmup);
  if (q.kernelBudgetMs > 0)
    t += QObject::tr(" Within %1 ms a kernel: a kernel whose runs would take longer gets fewer (at least one warm-up "
                     "and one timed run), and the whole run fewer passes.")
             .arg(q.kernelBudgetMs);
  return t;
}

// The run itself, on a worker: the driver's Run stage on its backend; a failure is the result's error.
// `valueBudget` > 0: the values are kept within that many bytes (keepValues). The unfused baseline runs after
// the model's run, which `soFar` gets first (baselinePending), so its times show while the baseline builds.
std::shared_ptr<const RunResult> runOn(driver::Driver& d, const BackendInfo& backend,
                                       std::map<std::string, std::string> kinds, int64_t valueBudget,
                                       const CancelToken& cancel,
                                       const std::function<void(std::shared_ptr<const RunResult>)>& soFar) {
  auto r = std::make_shared<RunResult>();
  r->backend = backend.name;
  r->kinds = std::move(kinds);
  const auto start = std::chrono::steady_clock::now();
  auto wallMs = [start] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  try {
    driver::RunRequest request;
    request.reps = backend.kind == execute::BackendKind::Cuda ? 20 : 5;
    // On the cpu a kernel slower than about 10 ms / 7 calls gets fewer warm-ups and reps (at least one of each),
    // and the whole run fewer passes: light_vgg19's Run pressed again took 2.25 s at 5 reps of every one of its
    // 125 ms of kernels and 0.94 s within the budget, its kernels' total 125.2 and 124.7 ms (docs/backends.md).
    if (backend.kind == execute::BackendKind::Cpu) request.kernelBudgetMs = kCpuKernelBudgetMs;
    r->timing = timingOf(request);
    request.keepValues = valueBudget > 0;
    request.memoryLimit = hostMemoryLimitSetting();
    request.baseline = false;  // below, once the run is shown
    if (backend.kind != execute::BackendKind::Reference) {
      // The cpu's peaks before they are measured (cpu.json's) would put its kernels at several times the
      // roofline: none are shown until the calibration after the baseline.
      if (backend.kind != execute::BackendKind::Cpu || d.target()->measured) r->peaks = peaksOf(d.target()->costDevice);
      r->predicted = true;
    }
    std::shared_ptr<const driver::RunStage> ran = d.run(request, cancel);
    r->report = ran->report;
    if (!r->report.device.empty()) r->peaks.name = QString::fromStdString(r->report.device);
    if (valueBudget > 0 && r->report.ran) r->values = keepValues(d, r->report, valueBudget, cancel);
    if (backend.kind != execute::BackendKind::Reference && r->report.ran && r->report.stopped.empty()) {
      auto shown = std::make_shared<RunResult>(*r);
      shown->baselinePending = true;
      shown->wallMs = wallMs();
      soFar(shown);
      try {
        execute::addBaseline(r->report, d.baseline(request, *ran, cancel));
      } catch (const Cancelled&) {
        throw;
      } catch (const std::exception& e) {  // the run stands without it
        r->report.messages.push_back(std::string("baseline: ") + e.what());
      }
      if (!r->peaks.known()) measurePeaks(d, *ran, *r);
    }
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    r->error = QString::fromStdString(e.what());
  }
  r->wallMs = wallMs();
  return r;
}

// The tune itself, on a worker: what it kept, its report, and a summary line (or why it failed).
TuneOutcome tuneOn(driver::Driver& d, const BackendInfo& b, const JobContext& job) {
  tune::TuneOptions o;
  o.cancel = job.cancel;
  o.progress = [&job](const tune::Progress& p) {
    job.report(QString::fromStdString(tune::tunePhaseName(p.phase) + (p.group.empty() ? "" : " " + p.group)), int(p.done),
               int(p.total));
  };
  TuneOutcome out;
  try {
    if (execute::MemoryLimit limit = hostMemoryLimitSetting(); limit.hostBytes)
      execute::checkTuneHostMemory(d.kernels(job.cancel)->model, b.kind, limit);
    tune::TuneReport report = d.tune(o);
    job.cancel.check();  // a cancelled tune's partial choices are not pushed as schedules
    out.tuned = report.schedules();
    out.report = report.toJson();
    int cached = 0;
    for (const auto& k : report.kernels) cached += k.cacheHit;
    out.summary = QObject::tr("Tuned %1 kernel(s) on %2 (%3 from the cache)").arg(out.tuned.traces.size()).arg(b.name).arg(cached);
    for (const auto& w : report.warnings) out.summary += "\n" + QString::fromStdString(w);
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    out.summary = QObject::tr("Tuning failed: %1").arg(QString::fromStdString(e.what()));
  }
  return out;
}

}  // namespace

QString RunController::hostMemoryLimit() { return QSettings().value(kHostMemoryLimitKey).toString().trimmed(); }

int RunController::cpuThreads() { return std::max(0, QSettings().value(kCpuThreadsKey, 0).toInt()); }

void RunController::setCpuThreads(int n) {
  n = std::max(0, n);
  if (n == 0) QSettings().remove(kCpuThreadsKey);
  else QSettings().setValue(kCpuThreadsKey, n);
  cpu::setCpuThreads(n);
}

QString RunController::setHostMemoryLimit(const QString& size) {
  const QString text = size.trimmed();
  if (text.isEmpty()) {
    QSettings().remove(kHostMemoryLimitKey);
    return {};
  }
  try {
    execute::parseByteSize(text.toStdString());
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  QSettings().setValue(kHostMemoryLimitKey, text);
  return {};
}

std::map<QString, GroupTiming> timeOverlay(const RunResult& run) {
  std::map<QString, GroupTiming> out;
  if (!run.report.ran) return out;
  for (const auto& k : run.report.kernels) {
    GroupTiming t;
    t.ms = k.ms;
    // A kernel of constants runs once at load: it has no share of a run's total.
    t.share = run.report.totalMs > 0 && k.ms > 0 && !k.once ? k.ms / run.report.totalMs : 0;
    t.roofline = rooflineShare(k, run.peaks);
    t.verified = k.verified;
    out[QString::fromStdString(k.group)] = t;
  }
  return out;
}

QString BackendInfo::cannotRunText() const {
  if (unavailable.isEmpty()) return {};
  return unavailable.contains("cannot run") ? unavailable : QObject::tr("%1 cannot run here: %2").arg(name, unavailable);
}

RunController::RunController(SessionController* session)
    : QObject(session), session_(session), runJob_(this), tuneJob_(this), remoteJob_(this) {
  qRegisterMetaType<BackendInfo>();
  cpu::setCpuThreads(cpuThreads());  // the stored setting holds for this session's runs
  connect(session_->code(), &CodeController::kernelsReady, this, &RunController::onKernels);
  connect(session_, &SessionController::compiled, this, &RunController::onCompiled);
  connect(session_, &SessionController::schedulesChanged, this, [this] {
    if (autoRun_) wantRun();
  });
  registerSessionParts();
}

RunController::~RunController() = default;

const std::vector<BackendInfo>& RunController::backends() {
  if (backends_.empty())
    backends_ = {probe(execute::BackendKind::Reference, "reference"), probe(execute::BackendKind::Cpu, "cpu"),
                 probe(execute::BackendKind::Cuda, "cuda")};
  return backends_;
}

const BackendInfo& RunController::backend() { return backends()[chosen_]; }

void RunController::setBackend(const QString& name) {
  const auto& all = backends();
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i].name != name) continue;
    if (!all[i].unavailable.isEmpty()) {
      emit message(all[i].cannotRunText());
      return;
    }
    if (i == chosen_) return;
    chosen_ = i;
    // The tuned schedules and the estimates are the backend's: the driver drops its Kernel stage.
    if (auto d = session_->driver()) {
      d->setBackend(all[i].kind, {}, all[i].remote.toStdString());
      session_->code()->stagesChanged();
    }
    emit backendChanged(all[i]);
    if (autoRun_) wantRun();  // a run on the new backend, to compare with the last
    return;
  }
  emit message(tr("unknown backend '%1' (reference, cpu, cuda)").arg(name));
}

void RunController::setKeepValues(bool keep, int64_t budgetBytes) {
  keepValues_ = keep;
  if (budgetBytes > 0) valueBudget_ = budgetBytes;
  emit message(keep ? tr("runs keep tensor values (up to %1 MB)").arg(double(valueBudget_) / (1 << 20), 0, 'f', 0)
                    : tr("runs keep no tensor values"));
}

void RunController::setTf32(kernel::Tf32Policy tf32) {
  if (tf32 == tf32_) return;
  tf32_ = tf32;
  // The kernels' schedules follow the policy: the driver drops its Kernel stage.
  if (auto d = session_->driver()) {
    d->setTf32(tf32);
    session_->code()->stagesChanged();
  }
  emit tf32Changed(tf32);
  emit message(tr("tf32: %1").arg(QString::fromStdString(tf32.name())));
  if (autoRun_) wantRun();
}

void RunController::onCompiled() {
  if (session_->input() != model_) {  // a newly opened model: nothing to compare with
    model_ = session_->input();
    last_ = previous_ = nullptr;
    lastTune_ = nlohmann::json::object();
    autoRun_ = false;
  }
  emit overlayChanged(currentOverlay());
  if (autoRun_) wantRun();
}

void RunController::wantRun() {
  if (!session_->compile()) return;
  runWanted_ = true;
  session_->code()->requestKernels();
}

void RunController::run() {
  if (!session_->compile()) return emit message(tr("Open a model first"));
  if (!backend().unavailable.isEmpty()) return emit message(backend().cannotRunText());
  autoRun_ = true;
  setBusy(true, tuning_, tr("Lowering for a run on %1").arg(backend().name));
  wantRun();
}

void RunController::tune() {
  QString why;
  if (!canTune(&why)) return emit message(tr("Cannot tune: %1").arg(why));
  tuneWanted_ = true;
  setBusy(running_, true, tr("Lowering for tuning on %1").arg(backend().name));
  session_->code()->requestKernels();
}

bool RunController::canTune(QString* why) {
  QString reason;
  if (!session_->compile()) reason = tr("no model is open");
  else if (backend().kind == execute::BackendKind::Reference) reason = tr("the reference backend runs no generated kernels; choose cpu or cuda");
  else if (!backend().unavailable.isEmpty()) reason = backend().cannotRunText();
  else if (tuning_) reason = tr("a tune is already running");
  if (why) *why = reason;
  return reason.isEmpty();
}

void RunController::cancel() {
  if (!running_ && !tuning_) return;
  runJob_.cancel();
  tuneJob_.cancel();
  settleBaseline();
  runWanted_ = tuneWanted_ = false;
  setBusy(false, false, tr("Cancelled"));
}

void RunController::onKernels(std::shared_ptr<const CodeResult> code) {
  if (!code || code->compile != session_->compile()) return;  // lowered for an older compile
  if (tuneWanted_) {
    tuneWanted_ = false;
    startTune(code);
  } else if (runWanted_) {
    runWanted_ = false;
    startRun(code);
  }
}

void RunController::setBusy(bool running, bool tuning, const QString& what) {
  running_ = running;
  tuning_ = tuning;
  emit busyChanged(running, tuning, what);
}

void RunController::startRun(std::shared_ptr<const CodeResult> code) {
  settleBaseline();
  setBusy(true, tuning_, tr("Running %n kernel(s) on %1", nullptr, int(code->kernels.size())).arg(backend().name));
  emit progress(tr("run"), 0, 0);
  std::shared_ptr<driver::Driver> d = session_->driver();
  std::shared_ptr<const CompileResult> compile = code->compile;
  const int64_t budget = keepValues_ ? valueBudget_ : 0;
  runJob_.start([this, d, b = backend(), kinds = groupKinds(*compile), budget, compile](const JobContext& job) {
                  return runOn(*d, b, kinds, budget, job.cancel, [this, &job, compile](std::shared_ptr<const RunResult> r) {
                    job.post([this, compile, r] { showRun(compile, r); });
                  });
                },
                [this, compile](JobOutcome<std::shared_ptr<const RunResult>> outcome) {
                  if (outcome.ok()) return acceptRun(compile, *outcome.value);
                  auto failed = std::make_shared<RunResult>();
                  failed->backend = backend().name;
                  failed->error = outcome.error;
                  acceptRun(compile, failed);
                });
}

void RunController::acceptRun(std::shared_ptr<const CompileResult> compile, std::shared_ptr<const RunResult> run) {
  showRun(std::move(compile), std::move(run));
  setBusy(false, tuning_, runSummary(*last_));
}

void RunController::showRun(std::shared_ptr<const CompileResult> compile, std::shared_ptr<const RunResult> run) {
  const bool sameRun = last_ && last_->baselinePending;  // the baseline of the run shown: it takes its place
  if (!sameRun) previous_ = last_;
  last_ = std::move(run);
  lastCompile_ = std::move(compile);
  if (last_->baselinePending)
    setBusy(true, tuning_, tr("Timing the unfused baseline on %1").arg(last_->backend));
  const size_t said = sameRun ? shownMessages_ : 0;  // the baseline's messages follow the run's
  for (size_t i = said; i < last_->report.messages.size(); ++i) emit message(QString::fromStdString(last_->report.messages[i]));
  shownMessages_ = last_->report.messages.size();
  emit runFinished(last_);
  emit overlayChanged(currentOverlay());
}

void RunController::settleBaseline() {
  if (!last_ || !last_->baselinePending) return;
  auto settled = std::make_shared<RunResult>(*last_);  // shown without it: the baseline was cancelled or dropped
  settled->baselinePending = false;
  last_ = settled;
}

std::map<QString, GroupTiming> RunController::currentOverlay() const {
  if (!last_ || !lastCompile_ || lastCompile_ != session_->compile()) return {};
  return timeOverlay(*last_);
}

void RunController::startTune(std::shared_ptr<const CodeResult>) {
  std::shared_ptr<driver::Driver> d = session_->driver();
  tuneJob_.start([d, b = backend()](const JobContext& job) { return tuneOn(*d, b, job); },
                 [this](JobOutcome<TuneOutcome> outcome) {
                   if (outcome.ok()) acceptTune(outcome.value->tuned, outcome.value->report, outcome.value->summary);
                   else acceptTune({}, {}, tr("Tuning failed: %1").arg(outcome.error));
                 },
                 [this](const QString& what, int done, int total) { emit progress(what, done, total); });
}

void RunController::acceptTune(const execute::ScheduleSet& tuned, const nlohmann::json& report, const QString& summary) {
  if (!report.is_null()) lastTune_ = report;
  ++tunesFinished_;
  setBusy(running_, false, summary.section('\n', 0, 0));
  emit message(summary);
  if (tuned.traces.empty()) return;
  execute::ScheduleSet next = session_->schedules();
  for (const auto& [key, trace] : tuned.traces) next.traces[key] = trace;
  autoRun_ = true;  // measure what the tuner kept
  session_->changeSchedules(next, tr("Tune on %1 (%n kernel(s))", nullptr, int(tuned.traces.size())).arg(backend().name));
}

void RunController::restoreRun(const nlohmann::json& j) {
  if (!j.is_object() || j.empty()) {  // a branch with no run yet: the overlay of another branch's run goes
    last_ = previous_ = nullptr;
    emit overlayChanged({});
    return;
  }
  try {
    previous_ = nullptr;
    last_ = std::make_shared<const RunResult>(runFromJson(j));
  } catch (const std::exception& e) {
    emit message(tr("last_run: %1 (the saved run was not restored)").arg(QString::fromStdString(e.what())));
    return;
  }
  lastCompile_ = session_->compile();  // a session reopens with the groups it was saved with
  model_ = session_->input();
  emit runFinished(last_);
  emit overlayChanged(currentOverlay());
}

void RunController::registerSessionParts() {
  session_->sessionParts()->add(
      "last_run", [this] { return last_ ? runToJson(*last_) : nlohmann::json::object(); },
      [this](const nlohmann::json& j) { restoreRun(j); });
  session_->sessionParts()->add(
      "tuning", [this] { return lastTune_; },
      [this](const nlohmann::json& j) {
        lastTune_ = j.is_object() ? j : nlohmann::json::object();
        model_ = session_->input();  // restored with this model: the compile that follows must not clear it
      });
  // schedule_traces: group key (node ids) → trace, as docs/sessions.md describes.
  session_->sessionParts()->add(
      "schedule_traces",
      [this] {
        nlohmann::json j = nlohmann::json::object();
        for (const auto& [key, trace] : session_->schedules().traces) j[key] = trace.toJson();
        return j;
      },
      [this](const nlohmann::json& j) {
        execute::ScheduleSet s;
        try {
          if (j.is_object())
            for (const auto& [key, trace] : j.items()) s.traces[key] = kernel::Trace::fromJson(trace);
        } catch (const std::exception& e) {
          emit message(tr("schedule_traces: %1 (the saved schedules were not restored)").arg(QString::fromStdString(e.what())));
          return;
        }
        session_->applySchedules(std::move(s));
      });
}

}  // namespace tessera::ui
