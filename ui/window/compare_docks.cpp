#include "ui/window/compare_docks.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QInputDialog>
#include <QMenu>
#include <QMenuBar>
#include <QToolBar>

#include "ui/compare/accuracy_overlay.h"
#include "ui/compare/compare_view.h"
#include "ui/compare/tensor_panel.h"
#include "ui/graph/graph_view.h"
#include "ui/run/run_controller.h"
#include "ui/session/session_controller.h"
#include "ui/window/main_window.h"

namespace tessera::ui {
namespace {

QDockWidget* addDock(MainWindow& w, const QString& title, const QString& name, QWidget* panel, Qt::DockWidgetArea area) {
  auto* d = new QDockWidget(title, &w);
  d->setObjectName(name);
  d->setWidget(panel);
  w.addDockWidget(area, d);
  return d;
}

// A refused branch change says why in the status bar.
void report(MainWindow& w, const QString& why) {
  if (!why.isEmpty()) w.showStatus(why);
}

void askBranchName(MainWindow& w, const QString& title, const QString& initial, std::function<QString(const QString&)> apply) {
  bool ok = false;
  const QString name = QInputDialog::getText(&w, title, QObject::tr("Branch name:"), QLineEdit::Normal, initial, &ok);
  if (ok) report(w, apply(name));
}

void rebuildSwitchMenu(MainWindow& w, QMenu& menu) {
  menu.clear();
  SessionController* c = w.controller();
  for (const QString& name : c->branchNames()) {
    QAction* a = menu.addAction(name, &w, [c, name] { c->switchBranch(name); });
    a->setCheckable(true);
    a->setChecked(name == c->currentBranch());
  }
}

// The accuracy overlay replaces the timing overlay while on; off gives the timing back.
void connectAccuracyOverlay(MainWindow& w, QAction* toggle) {
  auto show = [&w, toggle] {
    RunController* runs = w.controller()->runs();
    auto run = runs->lastRun();
    auto compile = w.controller()->compile();
    if (!toggle->isChecked() || !run || !compile) return w.graphView()->setTimeOverlay(runs->currentOverlay());
    if (!run->values) w.showStatus(QObject::tr("Accuracy overlay: run with Run ▸ Keep tensor values first"));
    w.graphView()->setTimeOverlay(accuracyOverlay(*run, *compile));
  };
  QObject::connect(toggle, &QAction::toggled, &w, show);
  QObject::connect(w.controller()->runs(), &RunController::overlayChanged, &w, [toggle, show] {
    if (toggle->isChecked()) show();
  });
}

}  // namespace

void addCompareDocks(MainWindow& w) {
  QDockWidget* compare = addDock(w, QObject::tr("Compare"), "compareDock", new CompareView(w.controller(), &w), Qt::BottomDockWidgetArea);
  if (auto* run = w.findChild<QDockWidget*>("runDock")) w.tabifyDockWidget(run, compare);
  QDockWidget* tensor = addDock(w, QObject::tr("Tensor"), "tensorDock", new TensorPanel(w.controller(), &w), Qt::RightDockWidgetArea);
  if (auto* inspector = w.findChild<QDockWidget*>("inspectorDock")) w.tabifyDockWidget(inspector, tensor);
  // Picking an edge brings its tensor forward once a run kept values.
  QObject::connect(w.controller(), &SessionController::selectionChanged, tensor, [&w, tensor](const Selection& s) {
    auto run = w.controller()->runs()->lastRun();
    if (s.kind == Selection::Value && run && run->values) tensor->raise();
  });
}

void compareWith(MainWindow& w, const QString& other) {
  SessionController* c = w.controller();
  QString b = other;
  for (const QString& name : c->branchNames())
    if (b.isEmpty() && name != c->currentBranch()) b = name;
  auto* view = w.findChild<CompareView*>();
  if (b.isEmpty() || !view) return w.showStatus(QObject::tr("Compare: create a second branch first (Branch ▸ New branch)"));
  if (auto* dock = w.findChild<QDockWidget*>("compareDock")) {
    dock->show();
    dock->raise();
  }
  view->compareBranches(b, c->currentBranch());
}

void addBranchMenu(MainWindow& w, QMenu& run, QMenu& view) {
  SessionController* c = w.controller();
  QMenu* branch = w.menuBar()->insertMenu(run.menuAction(), new QMenu(QObject::tr("&Branch"), &w))->menu();
  branch->setObjectName("branchMenu");
  branch->addAction(QObject::tr("&New branch…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_N), &w, [&w, c] {
    askBranchName(w, QObject::tr("New branch"), c->currentBranch() + "-2", [c](const QString& n) { return c->createBranch(n); });
  });
  branch->addAction(QObject::tr("&Rename…"), &w, [&w, c] {
    askBranchName(w, QObject::tr("Rename branch"), c->currentBranch(),
                  [c](const QString& n) { return c->renameBranch(c->currentBranch(), n); });
  });
  branch->addAction(QObject::tr("&Delete…"), &w, [&w, c] {
    askBranchName(w, QObject::tr("Delete branch"), QString(), [c](const QString& n) { return c->deleteBranch(n); });
  });
  QMenu* switchTo = branch->addMenu(QObject::tr("&Switch to"));
  QObject::connect(c, &SessionController::branchesChanged, switchTo, [&w, switchTo] { rebuildSwitchMenu(w, *switchTo); });
  rebuildSwitchMenu(w, *switchTo);
  branch->addSeparator();
  branch->addAction(QObject::tr("&Compare with the current branch"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C), &w,
                    [&w] { compareWith(w); });
  QAction* keep = run.addAction(QObject::tr("&Keep tensor values"));
  keep->setObjectName("keepValuesAction");
  keep->setCheckable(true);
  keep->setToolTip(QObject::tr("Runs keep every kernel's output (up to 512 MB) and the reference's, for the Tensor panel "
                               "and the accuracy overlay"));
  QObject::connect(keep, &QAction::toggled, c->runs(), [c](bool on) { c->runs()->setKeepValues(on); });
  QAction* accuracy = view.addAction(QObject::tr("&Accuracy overlay"));
  accuracy->setObjectName("accuracyOverlayAction");
  accuracy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_A));
  accuracy->setCheckable(true);
  connectAccuracyOverlay(w, accuracy);
}

void addBranchBar(MainWindow& w, QToolBar& bar) {
  SessionController* c = w.controller();
  auto* box = new QComboBox(&bar);
  box->setObjectName("branchBox");
  box->setToolTip(QObject::tr("Branch: a variant of the model with its own overrides, schedules and runs"));
  auto refresh = [box, c] {
    const QSignalBlocker block(box);
    box->clear();
    box->addItems(c->branchNames());
    box->setCurrentText(c->currentBranch());
  };
  QObject::connect(c, &SessionController::branchesChanged, box, refresh);
  QObject::connect(box, &QComboBox::textActivated, c, [c](const QString& name) { c->switchBranch(name); });
  refresh();
  bar.addWidget(box);
}

QWidget* compareViewFor(MainWindow& w) {
  auto* view = w.findChild<CompareView*>();
  const QStringList names = w.controller()->branchNames();
  if (!view || names.size() < 2) return nullptr;
  view->compareBranches(names.front(), names.back());
  return view;
}

bool compareBusy(MainWindow& w) {
  auto* view = w.findChild<CompareView*>();
  return view && (view->busy() || view->left()->runner()->busy() || view->right()->runner()->busy());
}

QWidget* tensorPanelFor(MainWindow& w) {
  SessionController* c = w.controller();
  auto* panel = w.findChild<TensorPanel*>();
  if (!panel || !c->graph()) return nullptr;
  QString value;
  if (c->selection().kind == Selection::Node)
    if (const Node* n = c->graph()->findNode(c->selection().id.toStdString()); n && n->numOutputs() && n->output(0))
      value = QString::fromStdString(n->output(0)->name());
  RunController* runs = c->runs();
  runs->setKeepValues(true);
  auto* once = new QObject(panel);
  QObject::connect(runs, &RunController::runFinished, once, [c, once, value](std::shared_ptr<const RunResult> r) {
    QString pick = value;
    if (pick.isEmpty() && r->values)
      for (const auto& k : r->report.kernels)
        if (const Node* n = c->graph()->findNode(k.nodes.empty() ? "" : k.nodes.back()); n && n->output(0) && pick.isEmpty())
          pick = QString::fromStdString(n->output(0)->name());
    c->select({Selection::Value, pick, {}, {}});
    once->deleteLater();
  });
  runs->run();
  return panel;
}

bool tensorBusy(MainWindow& w) { return w.controller()->runs()->running(); }

}  // namespace tessera::ui
