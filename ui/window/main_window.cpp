#include "ui/window/main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>
#include <QTime>
#include <QToolBar>
#include <QToolButton>

#include "ui/graph/graph_view.h"
#include "ui/pipeline/inspector_panel.h"
#include "ui/pipeline/ir_panel.h"
#include "ui/code/levels_panel.h"
#include "ui/lessons/lessons_dock.h"
#include "ui/models/node_table_model.h"
#include "ui/pipeline/overrides_panel.h"
#include "ui/pipeline/pipeline_panel.h"
#include "ui/run/run_controller.h"
#include "ui/window/compare_docks.h"
#include "ui/window/run_docks.h"
#include "ui/window/session_actions.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"

namespace tessera::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), controller_(new SessionController(this)), nodes_(new NodeTableModel(this)),
      graph_(new GraphView(this)), pipeline_(new PipelinePanel(controller_, this)), ir_(new IrPanel(controller_, this)),
      inspector_(new InspectorPanel(controller_, this)), overrides_(new OverridesPanel(controller_, this)),
      log_(new QPlainTextEdit(this)), files_(new SessionFiles(controller_, this)) {
  setObjectName("mainWindow");
  setWindowTitle(tr("Tessera"));
  setAcceptDrops(true);
  setCentralWidget(graph_);
  buildDocks();
  buildMenus();
  buildToolBar();
  buildStatusBar();
  connectRunStatus(*this);
  connect(controller_, &SessionController::modelLoaded, this, &MainWindow::onModelLoaded);
  connect(files_, &SessionFiles::message, this, [this](const QString& line) {
    showStatus(line);
    log(line);
  });
  connect(controller_, &SessionController::stepChanged, this, &MainWindow::showCurrentStep);
  connect(controller_, &SessionController::selectionChanged, this, &MainWindow::onSelectionChanged);
  connect(controller_, &SessionController::busyChanged, this, [this](bool busy, const QString& what) {
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    if (!busy) statusBar()->clearMessage();
    if (!what.isEmpty()) statusBar()->showMessage(what, busy ? 0 : 3000);
    if (!what.isEmpty()) log(what);
  });
  connect(graph_, &GraphView::nodeClicked, this, [this](const QString& id) { controller_->select({Selection::Node, id, {}, {}}); });
  connect(graph_, &GraphView::groupClicked, this, [this](const QString& id) { controller_->select({Selection::Group, id, {}, {}}); });
  connect(graph_, &GraphView::valueClicked, this, [this](const QString& v, const QString& p, const QString& c) {
    controller_->select({Selection::Value, v, p, c});
  });
  connect(graph_, &GraphView::overrideRequested, controller_, &SessionController::addOverride);
  connect(graph_, &GraphView::layoutShown, this, [this](double layoutMs, double sceneMs) {
    log(tr("layout %1 ms (dot) + %2 ms (scene)").arg(layoutMs, 0, 'f', 1).arg(sceneMs, 0, 'f', 1));
  });
  resize(1400, 860);
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
  statusBar()->showMessage(tr("Open a model (.onnx or .tsr) with Ctrl+O"));
}

void MainWindow::buildDocks() {
  auto dock = [this](const QString& title, const QString& name, QWidget* w, Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);  // saveState needs names
    d->setWidget(w);
    addDockWidget(area, d);
    return d;
  };
  QDockWidget* pipe = dock(tr("Pipeline"), "pipelineDock", pipeline_, Qt::LeftDockWidgetArea);
  QDockWidget* over = dock(tr("Overrides"), "overridesDock", overrides_, Qt::LeftDockWidgetArea);
  splitDockWidget(pipe, over, Qt::Vertical);
  dock(tr("Inspector"), "inspectorDock", inspector_, Qt::RightDockWidgetArea);
  QDockWidget* ir = dock(tr("IR / diff"), "irDock", ir_, Qt::BottomDockWidgetArea);
  // Beside IR / diff (shared/UI.md): one tab per level, computed only while shown.
  tabifyDockWidget(ir, dock(tr("Levels"), "levelsDock", new LevelsPanel(controller_, this), Qt::BottomDockWidgetArea));
  addRunDocks(*this, ir);
  addCompareDocks(*this);
  auto* table = new QTableView(this);
  table->setObjectName("nodeTable");
  table->setModel(nodes_);
  table->horizontalHeader()->setStretchLastSection(true);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  connect(table, &QTableView::clicked, this, [this](const QModelIndex& i) {
    controller_->select({Selection::Node, nodes_->index(i.row(), NodeTableModel::Id).data().toString(), {}, {}});
  });
  QDockWidget* nodes = dock(tr("Nodes"), "nodesDock", table, Qt::BottomDockWidgetArea);
  log_->setObjectName("log");
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(2000);
  QDockWidget* logDock = dock(tr("Log"), "logDock", log_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(ir, nodes);
  tabifyDockWidget(nodes, logDock);
  ir->raise();
  resizeDocks({pipe, ir}, {300, 220}, Qt::Horizontal);
  resizeDocks({ir}, {230}, Qt::Vertical);
}

void MainWindow::buildMenus() {
  // The menu bar's order is the order of these calls; the Run menu's Branch entries add to the View menu.
  buildFileMenu();
  buildEditMenu();
  buildViewMenu();
  buildRunMenu();
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  addLessonActions(*this, *help);
}

void MainWindow::buildFileMenu() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open…"), this, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open model or session"), {}, tr("Models and sessions (*.onnx *.tsr *.tessera)"));
    if (!path.isEmpty()) openModel(path);
  });
  open->setShortcut(QKeySequence::Open);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  rebuildRecentMenu();
  file->addSeparator();
  addSessionActions(*this, *file);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);
}

void MainWindow::buildEditMenu() {
  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = controller_->undoStack()->createUndoAction(this, tr("&Undo"));
  undo->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Z));
  QAction* redo = controller_->undoStack()->createRedoAction(this, tr("&Redo"));
  redo->setShortcuts({QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
  edit->addAction(undo);
  edit->addAction(redo);
  edit->addSeparator();
  edit->addAction(tr("&Find…"), QKeySequence::Find, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
}

void MainWindow::buildViewMenu() {
  viewMenu_ = menuBar()->addMenu(tr("&View"));
  viewMenu_->addAction(tr("&Fit graph"), QKeySequence(Qt::CTRL | Qt::Key_0), graph_, &GraphView::fit);
  viewMenu_->addAction(tr("Zoom &in"), QKeySequence(Qt::CTRL | Qt::Key_Equal), this, [this] { graph_->zoomBy(1.25); });
  viewMenu_->addAction(tr("Zoom &out"), QKeySequence(Qt::CTRL | Qt::Key_Minus), this, [this] { graph_->zoomBy(0.8); });
  // Big models: open or close all layers at once, and the graph alone in the window (F11 again brings the docks
  // back as they were).
  QMenu* layers = viewMenu_->addMenu(tr("&Layers"));
  for (int depth = 1; depth <= 4; ++depth)
    layers->addAction(tr("Open all to depth %1").arg(depth), QKeySequence(Qt::ALT | Qt::Key(Qt::Key_0 + depth)), this,
                      [this, depth] { graph_->openToDepth(depth); });
  layers->addAction(tr("Close all"), QKeySequence(Qt::ALT | Qt::Key_0), this, [this] { graph_->openToDepth(0); });
  viewMenu_->addAction(tr("&Graph only"), QKeySequence(Qt::Key_F11), this, [this] { toggleGraphOnly(); });
  viewMenu_->addSeparator();
  viewMenu_->addAction(tr("&Previous step"), QKeySequence(Qt::ALT | Qt::Key_Left), this,
                       [this] { controller_->setCurrentStep(controller_->currentStep() - 1); });
  viewMenu_->addAction(tr("&Next step"), QKeySequence(Qt::ALT | Qt::Key_Right), this,
                       [this] { controller_->setCurrentStep(controller_->currentStep() + 1); });
  viewMenu_->addSeparator();
  for (QDockWidget* d : findChildren<QDockWidget*>()) viewMenu_->addAction(d->toggleViewAction());
}

void MainWindow::buildRunMenu() {
  QMenu* run = menuBar()->addMenu(tr("&Run"));
  addRunActions(*this, *run);
  QAction* tf32 = run->addAction(tr("TF32 for &convolutions (PyTorch's defaults)"));
  tf32->setObjectName("tf32ConvAction");
  tf32->setCheckable(true);
  tf32->setToolTip(tr("Let f32 convolutions round their operands to tf32 on the tensor cores (CUDA), as cuDNN does "
                      "under PyTorch's defaults; matmuls stay exact"));
  connect(tf32, &QAction::toggled, this, [this](bool on) { controller_->runs()->setTf32({on, false}); });
  connect(controller_->runs(), &RunController::tf32Changed, tf32, [tf32](kernel::Tf32Policy p) { tf32->setChecked(p.conv); });
  run->addAction(tr("Host memory &limit…"), this, [this] { askHostMemoryLimit(*this); });
  run->addAction(tr("CPU &threads…"), this, [this] { askCpuThreads(*this); })->setObjectName("cpuThreadsAction");
  run->addAction(tr("Re&compile"), this, [this] { controller_->applyOverrides(controller_->overrides()); });
  run->addAction(tr("&Cancel"), QKeySequence(Qt::Key_Escape), controller_, &SessionController::cancel);
  addBranchMenu(*this, *run, *viewMenu_);
}

void MainWindow::buildToolBar() {
  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName("mainToolBar");
  bar->addAction(tr("Open"), this, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open model or session"), {}, tr("Models and sessions (*.onnx *.tsr *.tessera)"));
    if (!path.isEmpty()) openModel(path);
  });
  bar->addAction(findChild<QAction*>("saveAction"));
  bar->addSeparator();
  addRunActions(*this, *bar);
  bar->addSeparator();
  addBranchBar(*this, *bar);
  bar->addSeparator();
  bar->addAction("◀", this, [this] { controller_->setCurrentStep(controller_->currentStep() - 1); })->setToolTip(tr("Previous step (Alt+←)"));
  bar->addAction("▶", this, [this] { controller_->setCurrentStep(controller_->currentStep() + 1); })->setToolTip(tr("Next step (Alt+→)"));
  bar->addSeparator();
  search_ = new QLineEdit(this);
  search_->setObjectName("searchBox");
  search_->setPlaceholderText(tr("Search node or op (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  search_->setMaximumWidth(260);
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    if (!graph_->search(search_->text())) statusBar()->showMessage(tr("No node matches '%1'").arg(search_->text()), 3000);
  });
  bar->addWidget(search_);
}

void MainWindow::buildStatusBar() {
  modelLabel_ = new QLabel(tr("no model"), this);
  backendLabel_ = new QLabel(tr("backend: reference · device: CPU"), this);
  lastRunLabel_ = new QLabel(tr("last compile: —"), this);
  progress_ = new QProgressBar(this);
  progress_->setRange(0, 0);  // busy: the core reports no fraction yet
  progress_->setMaximumWidth(140);
  progress_->hide();
  cancel_ = new QToolButton(this);
  cancel_->setObjectName("cancelButton");
  cancel_->setText(tr("Cancel"));
  cancel_->hide();
  connect(cancel_, &QToolButton::clicked, controller_, &SessionController::cancel);
  for (QWidget* w : std::initializer_list<QWidget*>{modelLabel_, backendLabel_, lastRunLabel_, progress_, cancel_})
    statusBar()->addPermanentWidget(w);
}

void MainWindow::openModel(const QString& path) { files_->open(path); }

void MainWindow::showStatus(const QString& message, int timeoutMs) { statusBar()->showMessage(message, timeoutMs); }

void MainWindow::setBackendStatus(const QString& backend, const QString& device) {
  backendLabel_->setText(tr("backend: %1 · device: %2").arg(backend, device));
}

void MainWindow::setLastRunStatus(const QString& text) { lastRunLabel_->setText(text); }

bool MainWindow::idle() const { return !controller_->busy() && !graph_->runner()->busy(); }

void MainWindow::onModelLoaded(const LoadedModel& result) {
  if (!result.graph) {
    statusBar()->showMessage(tr("Could not open %1").arg(result.path));
    log(result.error);
    // Non-modal, so a failed open never blocks the window (or a test driving it).
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Could not open the model"), result.error, QMessageBox::Ok, this);
    box->setObjectName("openErrorBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    return;
  }
  if (!result.error.isEmpty()) log(tr("compile failed: %1").arg(result.error));
  if (result.graph != shownModel_) graph_->fitNextLayout();  // a new model, not a recompile
  shownModel_ = result.graph;
  rememberRecent(files_->documentPath());
  const QString name = QFileInfo(result.path).fileName();
  setWindowTitle(tr("%1 — Tessera").arg(QFileInfo(files_->documentPath()).fileName()));
  auto compile = controller_->compile();
  modelLabel_->setText(tr("%1 · %2 nodes").arg(name).arg(result.graph->numNodes()));
  lastRunLabel_->setText(tr("last compile: %1 ms, %2 kernels, %3")
                             .arg(result.compileMs, 0, 'f', 0)
                             .arg(compile && compile->fusion ? int(compile->fusion->groups.size()) : 0)
                             .arg(QTime::currentTime().toString("HH:mm:ss")));
}

void MainWindow::showCurrentStep() {
  graph_->showStep(controller_->picture(controller_->currentStep()));
  nodes_->setGraph(controller_->graphAt(controller_->currentStep()));
}

void MainWindow::onSelectionChanged(const Selection& selection) {
  // Centre only when the selection came from another panel; a click in the graph should not move it.
  if (selection.kind == Selection::Node) graph_->selectNode(selection.id, !graph_->hasFocus());
}

void MainWindow::log(const QString& line) { log_->appendPlainText(QTime::currentTime().toString("HH:mm:ss ") + line); }

void MainWindow::rememberRecent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value("recentFiles").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue("recentFiles", recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recentMenu_->clear();
  const QStringList recent = QSettings().value("recentFiles").toStringList();
  for (const QString& path : recent) recentMenu_->addAction(path, this, [this, path] { openModel(path); });
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  files_->autosaveNow();  // unsaved work is offered back when the file is opened again
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) openModel(urls.front().toLocalFile());
}

void MainWindow::toggleGraphOnly() {
  if (graphOnlyState_.isEmpty()) {
    graphOnlyState_ = saveState();
    for (QDockWidget* d : findChildren<QDockWidget*>()) d->hide();
  } else {
    restoreState(graphOnlyState_);
    graphOnlyState_.clear();
  }
}

}  // namespace tessera::ui
