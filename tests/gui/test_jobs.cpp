// The window's background work through the one job mechanism and the one driver: a run from the window uses the
// tuning cache's schedules, as `tessera-cli run` does; Cancel stops a run, a tune and a compile (the worker
// itself ends within half a second, not only its result) and leaves the window usable. The Run menu's tf32
// setting reaches the driver.
#include <QAction>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtTest>

#include <fstream>

#include "driver/driver.h"
#include "frontend/model_io.h"
#include "gui_test_util.h"
#include "ui/code/code_controller.h"
#include "ui/run/run_controller.h"
#include "ui/session/session_controller.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::runsToAVerifiedEnd;
using tessera::ui::test::waitForRun;
using tessera::ui::test::waitIdle;

namespace {

void spin(int ms) {
  QElapsedTimer t;
  t.start();
  while (t.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    QThread::msleep(2);
  }
}

// Milliseconds until no worker of the global pool is busy any more (the cancelled job has really stopped).
qint64 msUntilWorkersStop() {
  QElapsedTimer t;
  t.start();
  while (QThreadPool::globalInstance()->activeThreadCount() > 0 && t.elapsed() < 10000) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    QThread::msleep(2);
  }
  return t.elapsed();
}

// A model whose cpu run takes seconds in every phase (build, reference, kernels): 12 gemm+epilogue kernels.
QString writeGemmChain(const QTemporaryDir& dir) {
  const QString path = dir.filePath("gemms.tsr");
  std::ofstream out(path.toStdString());
  out << "graph gemms {\n  input %x: f32[256,256]\n";
  std::string prev = "%x";
  // Each gemm of its own width, so that no kernel's candidates come from another's module cache entries.
  for (int i = 0; i < 12; ++i) {
    out << "  const %w" << i << ": f32[" << 256 + 32 * i << "," << 256 + 32 * (i + 1) << "] = random(seed=" << i + 1
        << ", scale=0.06)\n";
    out << "  node mm" << i << " = MatMul(" << prev << ", %w" << i << ") -> %m" << i << "\n";
    out << "  node t" << i << " = Tanh(%m" << i << ") -> %t" << i << "\n";
    prev = "%t" + std::to_string(i);
  }
  out << "  output " << prev << "\n}\n";
  return path;
}

// A model whose compile takes seconds: a chain of `n` pointwise nodes.
QString writeLongChain(const QTemporaryDir& dir, int n) {
  const QString path = dir.filePath("chain.tsr");
  std::ofstream out(path.toStdString());
  out << "graph chain {\n  input %x: f32[64,64]\n";
  std::string prev = "%x";
  for (int i = 0; i < n; ++i) {
    out << "  node n" << i << " = " << (i % 2 ? "Neg" : "Relu") << "(" << prev << ") -> %v" << i << "\n";
    prev = "%v" + std::to_string(i);
  }
  out << "  output " << prev << "\n}\n";
  return path;
}

}  // namespace

class TestJobs : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(cache_.isValid());
    if (QString why = tessera::ui::test::setUpCpuRuns(cache_.filePath("tuning")); !why.isEmpty()) QSKIP(qPrintable(why));
  }

  void windowRunUsesTheTuningCacheAsTheCliDoes() {
    // Tune softmax on cpu through the driver, as `tessera-cli tune` does: the cache now holds its schedules.
    auto model = std::make_shared<const Graph>(loadModel(sample("softmax.tsr").toStdString()));
    driver::DriverOptions o;
    o.backend = execute::BackendKind::Cpu;
    tune::TuneOptions to;
    to.topK = 2;
    to.reps = 1;
    const execute::ScheduleSet tuned = driver::Driver(model, o).tune(to).schedules();
    QVERIFY(!tuned.traces.empty());
    // What `tessera-cli run` runs: the driver's Kernel stage for the cpu, with the cache.
    const std::string cliSchedules = driver::Driver(model, o).kernelsFor(kernel::Machine::Cpu)->model.schedules().save();
    QCOMPARE(QString::fromStdString(cliSchedules), QString::fromStdString(tuned.save()));

    MainWindow w;
    w.openModel(sample("softmax.tsr"));
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    runs->run();
    QVERIFY(waitForRun(runs, nullptr));
    auto run = runs->lastRun();
    QVERIFY2(run->error.isEmpty(), qPrintable(run->error));
    QVERIFY(run->report.outputsVerified);
    const auto& messages = run->report.messages;
    QVERIFY(std::any_of(messages.begin(), messages.end(),
                        [](const std::string& m) { return m.rfind("tuned schedules from the cache for kernels", 0) == 0; }));
    // The C++ level shows the code the run ran: the CPU's kernels with the tuned schedules, as the CLI
    // generates them. (The Kernel level and the Schedule panel show the GPU's schedules whatever the backend.)
    auto code = w.controller()->code()->kernels();
    QVERIFY(code);
    const auto cliCpp = driver::Driver(model, o).source(codegen::Target::Cpu);
    QCOMPARE(code->kernels.size(), cliCpp->generated.size());
    for (size_t i = 0; i < code->kernels.size(); ++i)
      QCOMPARE(QString::fromStdString(code->kernels[i].cpp.body), QString::fromStdString(cliCpp->generated[i].body));
    QCOMPARE(QString::fromStdString(cliCpp->kernels->model.schedules().save()), QString::fromStdString(cliSchedules));
  }

  // Run > TF32 for convolutions: the driver's policy (its conv kernels may then round to tf32), kept for the
  // next model opened, and off again when unchecked.
  void tf32MenuReachesTheDriver() {
    MainWindow w;
    w.openModel(sample("conv_bn_relu.tsr"));
    QVERIFY(waitIdle(w));
    auto* action = w.findChild<QAction*>("tf32ConvAction");
    QVERIFY(action && action->isCheckable() && !action->isChecked());
    QVERIFY(!w.controller()->driver()->options().tf32.conv);
    action->trigger();
    QVERIFY(w.controller()->runs()->tf32().conv);
    auto kernels = w.controller()->driver()->kernels();
    bool convAllowed = false;
    for (const auto& k : kernels->model.kernels) convAllowed |= k.kernel.kind == "conv" && k.kernel.allowTf32;
    QVERIFY(convAllowed);
    w.openModel(sample("resnet_basic_block.tsr"));
    QVERIFY(waitIdle(w));
    QVERIFY(w.controller()->driver()->options().tf32.conv);
    QVERIFY(!w.controller()->driver()->options().tf32.matmul);
    action->trigger();
    QVERIFY(!action->isChecked());
    QVERIFY(!w.controller()->driver()->options().tf32.conv);
  }

  void cancelStopsARunWithinHalfASecond() {
    QTemporaryDir dir;
    const QString model = writeGemmChain(dir);
    MainWindow w;
    w.openModel(model);
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    for (int delay : {300, 1500, 3500}) {  // during the build, and later (reference, kernels)
      runs->run();
      spin(delay);
      if (!runs->running()) continue;  // finished first: nothing to cancel at this point
      runs->cancel();
      QVERIFY(!runs->running());
      const qint64 ms = msUntilWorkersStop();
      qInfo("run cancelled after %d ms: the worker stopped %lld ms later", delay, ms);
      QVERIFY2(ms < 500, qPrintable(QString("cancelled after %1 ms: the worker stopped %2 ms later").arg(delay).arg(ms)));
      // The cancelled run delivered nothing, or (cancelled while its baseline was timed) its own times without one.
      if (auto shown = runs->lastRun()) {
        QVERIFY(shown->report.ran && !shown->baselinePending);
        QVERIFY(shown->report.baselineTotalMs <= 0);
      }
    }
    QVERIFY(runsToAVerifiedEnd(runs));
  }

  void cancelStopsATuneWithinHalfASecond() {
    QTemporaryDir dir;
    MainWindow w;
    w.openModel(writeGemmChain(dir));
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    QVERIFY(runs->canTune());
    const auto schedules = w.controller()->schedules().save();
    runs->tune();
    spin(1000);
    QVERIFY(runs->tuning());
    runs->cancel();
    QVERIFY(!runs->tuning());
    const qint64 ms = msUntilWorkersStop();
    qInfo("tune: the worker stopped %lld ms after Cancel", ms);
    QVERIFY2(ms < 500, qPrintable(QString("the tuner stopped %1 ms after Cancel").arg(ms)));
    spin(100);
    QCOMPARE(w.controller()->schedules().save(), schedules);  // nothing half-tuned was pushed
    QVERIFY(runs->canTune());
  }

  void cancelStopsACompileWithinHalfASecond() {
    QTemporaryDir dir;
    // Half a second of passes or more on this 2-core machine (0.45 s for 12,000 nodes from the CLI), each pass
    // a small part of it.
    const QString chain = writeLongChain(dir, 40000);
    MainWindow w;
    w.openModel(sample("softmax.tsr"));
    QVERIFY(waitIdle(w));
    SessionController* c = w.controller();
    auto before = c->input();
    c->openModel(chain);
    spin(400);
    QVERIFY(c->busy());
    c->cancel();
    const qint64 ms = msUntilWorkersStop();
    qInfo("compile: the worker stopped %lld ms after Cancel", ms);
    QVERIFY2(ms < 500, qPrintable(QString("the compile stopped %1 ms after Cancel").arg(ms)));
    spin(100);
    QCOMPARE(c->input(), before);  // the cancelled model never replaced the open one
    // Still usable: open and compile another model.
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    QVERIFY(c->compile() && c->compile()->error.empty());
  }

 private:
  QTemporaryDir cache_;
};

QTEST_MAIN(TestJobs)
#include "test_jobs.moc"
