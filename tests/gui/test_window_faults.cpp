// The window survives generated code that crashes: a cpu run whose kernels write through a null pointer (the
// test-only $TESSERA_TEST_FAULT hook) ends with each kernel failed and the signal named, the session keeps its
// model and graph, and the next run succeeds; Cancel stops a kernel that never returns (its worker is killed). The host memory limit (setting 'memory/hostLimit', Run > Host memory
// limit…) refuses a run before it starts, with the estimate and the limit; a text that is not a size is refused
// and not stored, and an empty one removes the limit.
#include <unistd.h>

#include <QSettings>
#include <QTemporaryDir>
#include <QThreadPool>
#include <QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include "runtime/cpu/cpu_threads.h"
#include "gui_test_util.h"
#include "ui/session/session_controller.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::runsToAVerifiedEnd;
using tessera::ui::test::waitForRun;
using tessera::ui::test::waitIdle;

namespace {

// The CPU time (in clock ticks) each running cpu worker of this process (a tessera-cpu-worker child) has used,
// from /proc: a worker starts with the build, so only a kernel makes it busy.
std::vector<long> cpuWorkerTicks() {
  std::vector<long> ticks;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(e.path() / "stat");
    std::string pid, comm, state, skip;
    int ppid = 0;
    if (!(stat >> pid >> comm >> state >> ppid) || ppid != getpid() || comm != "(tessera-cpu-wor)" || state == "Z")
      continue;
    for (int field = 5; field < 14; ++field) stat >> skip;  // to utime (field 14), then stime
    long utime = 0, stime = 0;
    stat >> utime >> stime;
    ticks.push_back(utime + stime);
  }
  return ticks;
}

bool waitFor(const std::function<bool()>& done, int timeoutMs) {
  QDeadlineTimer deadline(timeoutMs);
  while (!deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
    if (done()) return true;
    QThread::msleep(5);
  }
  return false;
}

// The window with samples/softmax.tsr open and compiled, runs on cpu.
RunController* softmaxOnCpu(MainWindow& w) {
  w.openModel(sample("softmax.tsr"));
  if (!waitIdle(w)) return nullptr;
  w.controller()->runs()->setBackend("cpu");
  return w.controller()->runs();
}

}  // namespace

class TestWindowFaults : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QVERIFY(cache_.isValid());
    if (QString why = tessera::ui::test::setUpCpuRuns(cache_.filePath("cache")); !why.isEmpty()) QSKIP(qPrintable(why));
  }

  void crashingRunLeavesTheWindowAndItsSession() {
    MainWindow w;
    RunController* runs = softmaxOnCpu(w);
    QVERIFY(runs);
    SessionController* session = w.controller();
    const auto graph = session->graph();
    qputenv("TESSERA_TEST_FAULT", "*=null-write");
    runs->run();
    const bool finished = waitForRun(runs, nullptr);
    qunsetenv("TESSERA_TEST_FAULT");
    QVERIFY(finished);
    auto crashed = runs->lastRun();
    QVERIFY2(crashed->error.isEmpty(), qPrintable(crashed->error));  // kernels failed; the run itself ended well
    QVERIFY(!crashed->report.kernels.empty());
    for (const auto& k : crashed->report.kernels) {
      QCOMPARE(k.status, execute::KernelStatus::Failed);
      QVERIFY2(k.message.find("crashed the cpu worker: signal 11 (segmentation fault)") != std::string::npos,
               k.message.c_str());
    }
    QVERIFY(!crashed->report.outputsVerified);
    QCOMPARE(session->modelPath(), sample("softmax.tsr"));  // the session is the one it was
    QCOMPARE(session->graph(), graph);
    runs->run();
    QVERIFY(waitForRun(runs, crashed));
    auto next = runs->lastRun();
    QVERIFY2(next->error.isEmpty(), qPrintable(next->error));
    QVERIFY(next->report.outputsVerified);
  }

  // Cancel stops a kernel that never returns: the worker running it is killed, and the window runs again.
  void cancelStopsAnEndlessKernel() {
    MainWindow w;
    RunController* runs = softmaxOnCpu(w);
    QVERIFY(runs);
    qputenv("TESSERA_TEST_FAULT", "*=loop");
    runs->run();
    const long busy = sysconf(_SC_CLK_TCK) / 5;  // 200 ms of CPU: the worker is in the endless kernel
    const bool spinning = waitFor([busy] {
      std::vector<long> t = cpuWorkerTicks();
      return std::any_of(t.begin(), t.end(), [busy](long v) { return v >= busy; });
    }, 60000);
    qunsetenv("TESSERA_TEST_FAULT");
    QVERIFY2(spinning, "no cpu worker ran a kernel");
    QVERIFY(runs->running());  // still in the endless kernel
    runs->cancel();
    QVERIFY(!runs->running());
    QVERIFY2(waitFor([] { return cpuWorkerTicks().empty() && QThreadPool::globalInstance()->activeThreadCount() == 0; }, 2000),
             "the worker outlived the cancel by 2 s");
    QVERIFY(!runs->lastRun());  // the cancelled run delivered nothing
    QVERIFY(runsToAVerifiedEnd(runs));
  }

  void hostMemoryLimitSettingRefusesARun() {
    MainWindow w;
    RunController* runs = softmaxOnCpu(w);
    QVERIFY(runs);
    QCOMPARE(RunController::setHostMemoryLimit("lots"), QString("'lots' is not a memory size (e.g. 16G, 512M, 1.5GiB, 4096)"));
    QVERIFY(RunController::hostMemoryLimit().isEmpty());  // refused, not stored
    QCOMPARE(RunController::setHostMemoryLimit(" 1K "), QString());
    QCOMPARE(QSettings().value("memory/hostLimit").toString(), QString("1K"));
    runs->run();
    const bool finished = waitForRun(runs, nullptr);
    RunController::setHostMemoryLimit("");
    QVERIFY(finished);
    auto refused = runs->lastRun();
    QVERIFY2(refused->error.startsWith("run needs ") && refused->error.contains(" of host memory (arena ") &&
                 refused->error.endsWith("; the limit is 1.0 KiB (setting 'memory/hostLimit')"),
             qPrintable(refused->error));
    QVERIFY(!refused->report.ran);
    QVERIFY(!QSettings().contains("memory/hostLimit"));  // empty: no limit
    runs->run();
    QVERIFY(waitForRun(runs, refused));
    QVERIFY2(runs->lastRun()->error.isEmpty(), qPrintable(runs->lastRun()->error));
    QVERIFY(runs->lastRun()->report.outputsVerified);
  }

  // Run > CPU threads…'s setting: stored, the cpu backend's team from the next run (the report's device says it),
  // and 0 removes it.
  void cpuThreadsSettingIsTheNextRunsTeam() {
    MainWindow w;
    RunController* runs = softmaxOnCpu(w);
    QVERIFY(runs);
    QVERIFY(w.findChild<QAction*>("cpuThreadsAction"));
    RunController::setCpuThreads(1);
    QCOMPARE(QSettings().value("cpu/threads").toInt(), 1);
    QCOMPARE(cpu::cpuThreadsSetting(), 1);
    runs->run();
    const bool finished = waitForRun(runs, nullptr);
    RunController::setCpuThreads(0);
    QVERIFY(finished);
    QVERIFY2(runs->lastRun()->error.isEmpty(), qPrintable(runs->lastRun()->error));
    QCOMPARE(runs->lastRun()->report.device, std::string("host CPU, 1 thread"));
    QVERIFY(runs->lastRun()->report.outputsVerified);
    QVERIFY(!QSettings().contains("cpu/threads"));
    QCOMPARE(cpu::cpuThreadsSetting(), 0);
  }

 private:
  QTemporaryDir cache_;
};

QTEST_MAIN(TestWindowFaults)
#include "test_window_faults.moc"
