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

}  // namespace tessera::ui::test
