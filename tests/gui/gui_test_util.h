#pragma once
// Helpers shared by the GUI tests: waiting for the window to settle, sample paths.
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QStandardPaths>
#include <QString>
#include <QThread>

#include "ui/window/main_window.h"
#include "ui/run/run_controller.h"

namespace tessera::ui::test {

inline QString sample(const QString& name) { return QStringLiteral(TESSERA_SOURCE_DIR "/samples/") + name; }

// Test mode for the paths, caches in `dir` (tuning and modules, $TESSERA_CACHE_DIR), and "" when the cpu
// backend can build kernels here, else why not (a C++ compiler must be on PATH): the GUI tests that run cpu.
inline QString setUpCpuRuns(const QString& cacheDir) {
  QStandardPaths::setTestModeEnabled(true);
  qputenv("TESSERA_CACHE_DIR", cacheDir.toUtf8());
  if (QStandardPaths::findExecutable("c++").isEmpty() && QStandardPaths::findExecutable("g++").isEmpty())
    return "no C++ compiler on PATH: the cpu backend cannot build kernels here";
  return {};
}

// Processes events until the window has no compile and no layout in flight.
inline bool waitIdle(MainWindow& w, int timeoutMs = 60000) {
  QDeadlineTimer deadline(timeoutMs);
  while (!deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (w.idle()) {
      QCoreApplication::processEvents();
      if (w.idle()) return true;
    }
    QThread::msleep(2);
  }
  return false;
}

// Processes events until the run controller has a run newer than `before` and is idle.
inline bool waitForRun(RunController* runs, std::shared_ptr<const RunResult> before, int timeoutMs = 120000) {
  QDeadlineTimer deadline(timeoutMs);
  while (!deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (runs->lastRun() && runs->lastRun() != before && !runs->running()) return true;
    QThread::msleep(5);
  }
  return false;
}

// A run from start to end with its outputs verified: after a cancel, the window is still usable.
inline bool runsToAVerifiedEnd(RunController* runs) {
  runs->run();
  return waitForRun(runs, nullptr) && runs->lastRun()->report.outputsVerified;
}

}  // namespace tessera::ui::test
