#pragma once
// Helpers shared by the GUI tests: waiting for the window to settle, sample paths.
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QStandardPaths>
#include <QString>
#include <QThread>

#include "ui/main_window.h"

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

}  // namespace tessera::ui::test
