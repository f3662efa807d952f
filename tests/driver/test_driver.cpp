// The compile driver (core/driver): the stage table the CLI and the window read; each change drops exactly the
// stages computed from it (the compile survives a schedule edit, nothing survives new compile options); the
// Kernel stage applies the user's schedules over the tuning cache's; a cancelled token stops a compile, a
// lowering and a run with Cancelled.
#include <QTemporaryDir>
#include <QtTest>

#include "driver/driver.h"
#include "frontend/model_io.h"
#include "kernel/host.h"
#include "kernel/templates/templates.h"

using namespace tessera;
using namespace tessera::driver;

namespace {

std::shared_ptr<const Graph> sampleModel(const char* name) {
  return std::make_shared<const Graph>(loadModel(std::string(TESSERA_SOURCE_DIR "/samples/") + name));
}

DriverOptions cpuOptions(const QTemporaryDir& cache) {
  DriverOptions o;
  o.backend = execute::BackendKind::Cpu;
  o.cacheDir = cache.filePath("cache").toStdString();
  return o;
}

// One timed run a kernel, no warm-up: enough to verify and to compare what is kept.
RunRequest quickRequest(bool baseline) {
  RunRequest r;
  r.reps = 1;
  r.warmup = 0;
  r.baseline = baseline;
  return r;
}

bool hasCompiler() { return !QStandardPaths::findExecutable("c++").isEmpty() || !QStandardPaths::findExecutable("g++").isEmpty(); }

}  // namespace

class TestDriver : public QObject {
  Q_OBJECT
 private slots:
  void stageTableIsInPipelineOrder() {
    QStringList names;
    for (const StageInfo& s : stages()) names << QString::fromUtf8(s.name.data(), int(s.name.size()));
    QCOMPARE(names, QStringList({"graph", "fused", "kernel", "cuda", "cpp", "ptx", "run"}));
    QCOMPARE(stageNamed("ptx"), std::optional<Stage>(Stage::Ptx));
    QVERIFY(!stageNamed("cubin"));
    QVERIFY(dependsOn(Stage::Ptx, Stage::Graph));
    QVERIFY(dependsOn(Stage::Run, Stage::Kernel));
    QVERIFY(!dependsOn(Stage::Run, Stage::Cuda));  // a run generates its own source for its backend
    QVERIFY(!dependsOn(Stage::Kernel, Stage::Cpp));
  }

  void stagesAreKeptUntilWhatMadeThemChanges() {
    QTemporaryDir cache;
    Driver d(sampleModel("mlp.tsr"), cpuOptions(cache));
    auto compiled = d.compiled();
    QVERIFY(compiled->error.empty());
    auto kernels = d.kernels();
    auto cuda = d.source(codegen::Target::Cuda);
    QCOMPARE(d.compiled(), compiled);  // asked again: the same result, not recomputed
    QCOMPARE(d.kernels(), kernels);
    QCOMPARE(d.source(codegen::Target::Cuda), cuda);
    QCOMPARE(cuda->kernels, kernels);

    // A schedule edit drops Kernel and what follows, not the compile.
    const auto& k0 = kernels->model.kernels.front();
    execute::ScheduleSet edited;
    kernel::TemplateParams params = kernel::defaultParams(kernel::lowerToLoops(*kernels->model.graph, k0.spec));
    edited.traces[execute::ScheduleSet::keyOf(k0.spec.nodeIds)] = kernel::traceWithParams(*kernels->model.graph, k0.spec, params);
    d.setSchedules(edited);
    QCOMPARE(d.compiled(), compiled);
    QVERIFY(d.kernels() != kernels);
    QVERIFY(d.source(codegen::Target::Cuda) != cuda);
    QVERIFY(d.kernels()->model.kernels.front().replayed);

    // New compile options drop everything: a forced split gives more kernels.
    auto before = d.kernels();
    CompileOptions split;
    split.overrides = {Override{OverrideKind::Split, {}, {}, "fc1", {}}};
    d.setCompileOptions(split);
    QVERIFY(d.compiled() != compiled);
    QVERIFY(d.kernels()->model.kernels.size() > before->model.kernels.size());
  }

  void theBackendDecidesTheTarget() {
    QTemporaryDir cache;
    Driver d(sampleModel("softmax.tsr"), cpuOptions(cache));
    auto cpu = d.target();
    QCOMPARE(d.target(), cpu);
    QVERIFY(cpu->costDevice.name.find("H200") == std::string::npos);
    auto kernels = d.kernels();
    d.setBackend(execute::BackendKind::Cuda);
    QVERIFY(d.target() != cpu);
    QCOMPARE(d.target()->costDevice.smCount > 0, true);
    QVERIFY(d.kernels() != kernels);  // tuned schedules are per device
    d.setBackend(execute::BackendKind::Reference);  // runs no kernels: estimates are the GPU's
    QVERIFY(d.target()->costDevice.smCount > 0);
  }

  void runsUseTheTuningCacheUnlessTheUserScheduled() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH: the cpu backend cannot build kernels here");
    QTemporaryDir cache;
    Driver tuner(sampleModel("softmax.tsr"), cpuOptions(cache));
    tune::TuneOptions o;
    o.topK = 2;
    o.reps = 1;
    tune::TuneReport report = tuner.tune(o);
    const execute::ScheduleSet tuned = report.schedules();
    QVERIFY2(!tuned.traces.empty(), report.toJson().dump().c_str());

    Driver d(sampleModel("softmax.tsr"), cpuOptions(cache));
    RunRequest request;
    request.reps = 1;
    request.baseline = false;
    auto run = d.run(request);
    QVERIFY(run->report.ran);
    QVERIFY(run->report.outputsVerified);
    QCOMPARE(run->kernels->tunedGroups.size(), tuned.traces.size());
    const auto& messages = run->report.messages;
    QVERIFY(std::any_of(messages.begin(), messages.end(),
                        [](const std::string& m) { return m.rfind("tuned schedules from the cache for kernels ", 0) == 0; }));
    QCOMPARE(QString::fromStdString(run->kernels->model.schedules().save()), QString::fromStdString(tuned.save()));
    QCOMPARE(d.lastRun(), run);

    d.setUseTuned(false);
    QVERIFY(!d.lastRun());
    QVERIFY(d.kernels()->tunedGroups.empty());
    QVERIFY(d.kernels()->notes.empty());
    for (const auto& k : d.kernels()->model.kernels) QVERIFY(!k.replayed);  // the template defaults
  }

  // A repeat through one driver (the window's Run again) keeps the cpu worker and the model's constants in its
  // memory (run_session.h): the first run copies the weights in, the next finds them there and copies nothing,
  // its outputs still verified on other inputs; another driver, or a new compile, starts afresh.
  void aRepeatKeepsTheConstants() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH: the cpu backend cannot build kernels here");
    QTemporaryDir cache;
    Driver d(sampleModel("mlp.tsr"), cpuOptions(cache));
    RunRequest request = quickRequest(true);  // the baseline keeps its own slot: it does not evict the model's constants
    auto first = d.run(request);
    QVERIFY(first->report.outputsVerified);
    QCOMPARE(first->report.keptBytes, 0.0);
    size_t weights = 0;
    for (const Value* v : first->kernels->model.graph->initializers()) weights += v->initializer()->byteSize();
    auto reused = [](const execute::RunReport& r, const std::string& prefix) {
      return std::find(r.messages.begin(), r.messages.end(), prefix + execute::kKeptReferenceNote) != r.messages.end();
    };
    QVERIFY(!reused(first->report, ""));
    // The baseline (the same graph on the same inputs) is checked against the run's reference on every run, so
    // the note is not repeated for it.
    QVERIFY(!reused(first->report, "baseline: "));
    request.seed = 7;
    auto second = d.run(request);
    QVERIFY2(second->report.outputsVerified, second->report.toJson().dump().c_str());
    QVERIFY(!reused(second->report, ""));  // other inputs: the reference runs again
    QVERIFY(reused(d.run(request)->report, ""));
    QVERIFY2(second->report.keptBytes >= double(weights), qPrintable(QString::number(second->report.keptBytes)));
    const auto a = first->report.outputs.front().bytes(), b = second->report.outputs.front().bytes();
    QVERIFY(!std::equal(a.begin(), a.end(), b.begin(), b.end()));  // other inputs, other outputs
    Driver other(sampleModel("mlp.tsr"), cpuOptions(cache));
    QCOMPARE(other.run(request)->report.keptBytes, 0.0);
    // A run whose kernel crashed the worker keeps nothing: the crash may have written anywhere in the region.
    qputenv("TESSERA_TEST_FAULT", "*=null-write");
    auto crashed = d.run(request);
    qunsetenv("TESSERA_TEST_FAULT");
    QVERIFY(!crashed->report.outputsVerified || crashed->report.kernels.front().status == execute::KernelStatus::Failed);
    QCOMPARE(d.run(request)->report.keptBytes, 0.0);
    // New schedules keep the graph, whose constants the zone holds: still kept, still verified.
    d.setUseTuned(false);
    auto rescheduled = d.run(request);
    QVERIFY(rescheduled->report.outputsVerified);
    QVERIFY(rescheduled->report.keptBytes > 0);
    // A new compile makes a new graph: its constants are copied in again.
    CompileOptions compile;
    compile.fuel = 100000;  // as many rewrites as it takes: the same graph, made again
    d.setCompileOptions(compile);
    auto recompiled = d.run(request);
    QVERIFY(recompiled->report.outputsVerified);
    QCOMPARE(recompiled->report.keptBytes, 0.0);
  }

  // The window shows a run before its unfused baseline: a run without it, then the baseline of that run, which the
  // kept Run stage takes too; a run that did not run has none.
  void theBaselineFollowsARun() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH: the cpu backend cannot build kernels here");
    QTemporaryDir cache;
    Driver d(sampleModel("mlp.tsr"), cpuOptions(cache));
    RunRequest request = quickRequest(false);
    auto ran = d.run(request);
    QVERIFY(ran->report.outputsVerified);
    QVERIFY(ran->report.baselineTotalMs <= 0);
    execute::RunReport base = d.baseline(request, *ran);
    QVERIFY2(base.ran && base.totalMs > 0, base.toJson().dump().c_str());
    QVERIFY(base.kernels.size() > ran->report.kernels.size());  // one kernel per node
    QCOMPARE(d.lastRun()->report.baselineTotalMs, base.totalMs);
    QVERIFY(ran->report.baselineTotalMs <= 0);  // what was handed out stays as it was
    RunStage notRun;
    notRun.kernels = ran->kernels;
    QVERIFY(!d.baseline(request, notRun).ran);
  }

  // A cpu run before the cpu is measured is estimated from cpu.json's defaults; measuring it after the run (as
  // the window and the CLI do) estimates the run's kernels again from the measured figures.
  void measuringTheCpuEstimatesTheRunAgain() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH: the cpu backend cannot build kernels here");
    QTemporaryDir cache;
    Driver d(sampleModel("mlp.tsr"), cpuOptions(cache));
    QVERIFY(!d.target()->measured);
    const double defaultGflops = d.target()->costDevice.fp32Gflops;
    auto ran = d.run(quickRequest(false));
    execute::RunReport report = ran->report;
    std::shared_ptr<const tune::Target> t = d.measuredTargetAfter(*ran, report);
    QVERIFY(t->measured);
    QVERIFY(t->costDevice.fp32Gflops != defaultGflops);
    QCOMPARE(t->costDevice.simdLanes, int(kernel::hostVectorBytes() / 4));
    const auto predict = tune::costPredictor(t->costDevice);
    for (size_t i = 0; i < report.kernels.size(); ++i) {
      const execute::CompiledKernel& ck = ran->kernels->model.kernels[i];
      if (ck.onHost()) continue;
      QCOMPARE(report.kernels[i].predictedMs, predict(*ran->kernels->model.graph, ck.kernel));
      QVERIFY(report.kernels[i].predictedMs != ran->report.kernels[i].predictedMs);
    }
    QVERIFY(d.target()->measured);  // kept: the next run is estimated from the measurement
    execute::RunReport again = ran->report;
    d.measuredTargetAfter(*ran, again);  // measured already: the report is left as it is
    QCOMPARE(again.kernels[0].predictedMs, ran->report.kernels[0].predictedMs);
  }

  void eachMachineSchedulesItsOwnKernels() {
    QTemporaryDir cache;
    Driver d(sampleModel("mlp.tsr"), cpuOptions(cache));
    // The Kernel level shows the GPU's schedule whatever runs; the C++ level and cpu runs use the CPU's.
    QCOMPARE(kernel::templateName(d.kernels()->model.kernels[0].kernel), std::string("gemm"));
    QCOMPARE(kernel::templateName(d.kernelsFor(kernel::Machine::Cpu)->model.kernels[0].kernel), std::string("gemm-cpu"));
    QCOMPARE(d.source(codegen::Target::Cpu)->kernels, d.kernelsFor(kernel::Machine::Cpu));
    QCOMPARE(d.source(codegen::Target::Cuda)->kernels, d.kernels());
    // A schedule of one machine's template is used by that machine's stage and is not stale on the other's.
    const execute::CompiledKernel& k0 = d.kernels()->model.kernels[0];
    execute::ScheduleSet saved;
    saved.traces[execute::ScheduleSet::keyOf(k0.spec.nodeIds)] =
        kernel::traceOnEitherMachine(*d.kernels()->model.graph, k0.spec, {{"tile_m", 4}});
    d.setSchedules(saved);
    QVERIFY(d.kernelsFor(kernel::Machine::Cpu)->model.kernels[0].replayed);
    QCOMPARE(d.kernelsFor(kernel::Machine::Cpu)->model.kernels[0].kernel.params.at("tile_m"), int64_t(4));
    QVERIFY(!d.kernels()->model.kernels[0].replayed);
    QVERIFY(d.kernels()->model.staleSchedules.empty());
    QVERIFY(d.kernelsFor(kernel::Machine::Cpu)->model.staleSchedules.empty());
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH: the cpu backend cannot build kernels here");
    RunRequest request;
    request.reps = 1;
    request.baseline = false;
    auto run = d.run(request);
    QVERIFY(run->report.outputsVerified);
    QCOMPARE(run->kernels, d.kernelsFor(kernel::Machine::Cpu));
  }
  void aCancelledTokenStopsEachStage() {
    QTemporaryDir cache;
    CancelSource source;
    source.cancel();
    Driver d(sampleModel("mlp.tsr"), cpuOptions(cache));
    QVERIFY_THROWS_EXCEPTION(Cancelled, d.compiled(source.token()));
    QVERIFY_THROWS_EXCEPTION(Cancelled, d.kernels(source.token()));
    QVERIFY(d.compiled()->error.empty());  // an uncancelled ask still works
    QVERIFY_THROWS_EXCEPTION(Cancelled, d.kernels(source.token()));  // lowering asks before each group
    QVERIFY_THROWS_EXCEPTION(Cancelled, d.run(RunRequest{}, source.token()));
    QVERIFY(!d.lastRun());
    QVERIFY(!d.kernels()->model.kernels.empty());
  }

  void aFailedCompileSaysSoAtTheKernelStage() {
    QTemporaryDir cache;
    Driver d(sampleModel("mlp.tsr"), cpuOptions(cache));
    CompileOptions o;
    o.pipeline = "canonicalize";
    o.stopAfter = "canonicalize";  // fusion never runs: there are no groups to lower
    d.setCompileOptions(o);
    QVERIFY_THROWS_EXCEPTION(Error, d.kernels());
  }
};

QTEST_GUILESS_MAIN(TestDriver)
#include "test_driver.moc"
