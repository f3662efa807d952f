#include "ui/window/run_docks.h"

#include <QDockWidget>
#include <QInputDialog>
#include <QLineEdit>
#include <algorithm>
#include <thread>

#include "ui/graph/graph_view.h"
#include "ui/window/main_window.h"
#include "ui/run/run_controller.h"
#include "ui/run/run_panel.h"
#include "ui/code/code_controller.h"
#include "ui/schedule/schedule_picture.h"
#include "ui/schedule/schedule_panel.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {

void addRunDocks(MainWindow& w, QDockWidget* bottomNeighbour) {
  auto dock = [&w](const QString& title, const QString& name, QWidget* panel, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, &w);
    d->setObjectName(name);
    d->setWidget(panel);
    w.addDockWidget(area, d);
    return d;
  };
  QDockWidget* run = dock(QObject::tr("Run"), "runDock", new RunPanel(w.controller(), &w), Qt::BottomDockWidgetArea);
  if (bottomNeighbour) w.tabifyDockWidget(bottomNeighbour, run);
  QDockWidget* schedule = dock(QObject::tr("Schedule"), "scheduleDock", new SchedulePanel(w.controller(), &w), Qt::RightDockWidgetArea);
  if (auto* inspector = w.findChild<QDockWidget*>("inspectorDock")) w.tabifyDockWidget(inspector, schedule);
  RunController* runs = w.controller()->runs();
  GraphView* graph = w.graphView();
  QObject::connect(runs, &RunController::overlayChanged, graph, &GraphView::setTimeOverlay);
  // A finished run brings its results forward.
  QObject::connect(runs, &RunController::runFinished, run, [run] { run->raise(); });
}

void addRunActions(MainWindow& w, QWidget& target) {
  if (auto* panel = w.findChild<RunPanel*>()) target.addActions({panel->runAction(), panel->tuneAction()});
}

void askHostMemoryLimit(MainWindow& w) {
  QString text = RunController::hostMemoryLimit(), why;
  do {
    bool ok = false;
    text = QInputDialog::getText(&w, QObject::tr("Host memory limit"),
                                 (why.isEmpty() ? QString() : why + "\n\n") +
                                     QObject::tr("Refuse a run or tune that would need more host memory than this "
                                                 "(16G, 512M, 1.5GiB; empty: no limit):"),
                                 QLineEdit::Normal, text, &ok);
    if (!ok) return;
    why = RunController::setHostMemoryLimit(text);
  } while (!why.isEmpty());
}

void askCpuThreads(MainWindow& w) {
  bool ok = false;
  const int hardware = int(std::max(1u, std::thread::hardware_concurrency()));
  int n = QInputDialog::getInt(&w, QObject::tr("CPU threads"),
                               QObject::tr("Threads the cpu backend's kernels run with, from the next run or tune "
                                           "(0: $OMP_NUM_THREADS, else all %1 hardware threads):")
                                   .arg(hardware),
                               RunController::cpuThreads(), 0, 4096, 1, &ok);
  if (ok) RunController::setCpuThreads(n);
}

QWidget* runPanelFor(MainWindow& w) {
  w.controller()->runs()->run();
  return w.findChild<RunPanel*>();
}

bool runBusy(MainWindow& w) { return w.controller()->runs()->running(); }

QWidget* schedulePanelFor(MainWindow& w) { return w.findChild<SchedulePanel*>(); }

bool scheduleBusy(MainWindow& w) {
  auto* panel = w.findChild<SchedulePanel*>();
  return w.controller()->code()->busy() || (panel && !panel->kernelId().isEmpty() && !panel->picture()->tiling());
}

QString chooseBackend(MainWindow& w, const QString& name) {
  RunController* runs = w.controller()->runs();
  for (const BackendInfo& b : runs->backends()) {
    if (b.name != name) continue;
    if (!b.unavailable.isEmpty()) return b.cannotRunText();
    runs->setBackend(name);
    return {};
  }
  return QObject::tr("unknown backend '%1' (reference, cpu, cuda)").arg(name);
}

void connectRunStatus(MainWindow& w) {
  RunController* runs = w.controller()->runs();
  auto showBackend = [&w](const BackendInfo& b) { w.setBackendStatus(b.name, b.device); };
  showBackend(runs->backend());
  QObject::connect(runs, &RunController::backendChanged, &w, showBackend);
  QObject::connect(runs, &RunController::runFinished, &w, [&w](std::shared_ptr<const RunResult> r) {
    w.setLastRunStatus(QObject::tr("last run: %1").arg(runSummary(*r)));
  });
  QObject::connect(runs, &RunController::busyChanged, &w, [&w](bool, bool, const QString& what) {
    if (!what.isEmpty()) w.showStatus(what);
  });
}

}  // namespace tessera::ui
