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

#include <filesystem>
#include <fstream>
#include <functional>

#include "gui_test_util.h"
#include "ui/session/session_controller.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::waitForRun;
using tessera::ui::test::waitIdle;

namespace {

// The pids of this process's running cpu workers (tessera-cpu-worker children), from /proc.
std::vector<int> cpuWorkers() {
  std::vector<int> pids;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(e.path() / "stat");
    std::string pid, comm, state;
    int ppid = 0;
    if (stat >> pid >> comm >> state >> ppid && ppid == getpid() && comm == "(tessera-cpu-wor)" && state != "Z")
      pids.push_back(std::stoi(pid));
  }
  return pids;
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

}  // namespace

class TestWindowFaults : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(cache_.isValid());
    qputenv("TESSERA_CACHE_DIR", cache_.filePath("cache").toUtf8());
    if (QStandardPaths::findExecutable("c++").isEmpty() && QStandardPaths::findExecutable("g++").isEmpty())
      QSKIP("no C++ compiler on PATH: the cpu backend cannot build kernels here");
  }

  void crashingRunLeavesTheWindowAndItsSession() {
    MainWindow w;
    w.openModel(sample("softmax.tsr"));
    QVERIFY(waitIdle(w));
    SessionController* session = w.controller();
    const auto graph = session->graph();
    RunController* runs = session->runs();
    runs->setBackend("cpu");
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
    w.openModel(sample("softmax.tsr"));
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    qputenv("TESSERA_TEST_FAULT", "*=loop");
    runs->run();
    const bool spinning = waitFor([] { return !cpuWorkers().empty(); }, 60000);
    qunsetenv("TESSERA_TEST_FAULT");
    QVERIFY2(spinning, "no cpu worker started");
    QThread::msleep(300);
    QVERIFY(runs->running());  // still in the endless kernel
    runs->cancel();
    QVERIFY(!runs->running());
    QVERIFY2(waitFor([] { return cpuWorkers().empty() && QThreadPool::globalInstance()->activeThreadCount() == 0; }, 2000),
             "the worker outlived the cancel by 2 s");
    QVERIFY(!runs->lastRun());  // the cancelled run delivered nothing
    runs->run();
    QVERIFY(waitForRun(runs, nullptr));
    QVERIFY(runs->lastRun()->report.outputsVerified);
  }

  void hostMemoryLimitSettingRefusesARun() {
    MainWindow w;
    w.openModel(sample("softmax.tsr"));
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
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

 private:
  QTemporaryDir cache_;
};

QTEST_MAIN(TestWindowFaults)
#include "test_window_faults.moc"
