#include "ui/main_window.h"

#include <QApplication>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>

#include "ui/node_table_model.h"
#include "ui/session_controller.h"

namespace tessera::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), controller_(new SessionController(this)), nodes_(new NodeTableModel(this)) {
  setWindowTitle(tr("Tessera"));
  setAcceptDrops(true);
  auto* table = new QTableView(this);
  table->setObjectName("nodeTable");
  table->setModel(nodes_);
  table->horizontalHeader()->setStretchLastSection(true);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  setCentralWidget(table);
  buildMenus();
  connect(controller_, &SessionController::modelLoaded, this, &MainWindow::onModelLoaded);
  connect(controller_, &SessionController::busyChanged, this, [this](bool busy, const QString& what) {
    if (busy) statusBar()->showMessage(what);
  });
  statusBar()->showMessage(tr("Open a model (.onnx or .tsr) with Ctrl+O"));
  resize(1100, 700);
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open…"), this, [this] {
    QString path = QFileDialog::getOpenFileName(this, tr("Open model"), {}, tr("Models (*.onnx *.tsr)"));
    if (!path.isEmpty()) openModel(path);
  });
  open->setShortcut(QKeySequence::Open);
  recentMenu_ = file->addMenu(tr("Open &Recent"));
  rebuildRecentMenu();
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), qApp, &QApplication::quit);
  quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::openModel(const QString& path) { controller_->openModel(path); }

void MainWindow::onModelLoaded(const LoadedModel& result) {
  if (!result.graph) {
    statusBar()->showMessage(tr("Could not open %1").arg(result.path));
    // Non-modal, so a failed open never blocks the window (or a test driving it).
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Could not open the model"), result.error, QMessageBox::Ok, this);
    box->setObjectName("openErrorBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    return;
  }
  nodes_->setGraph(result.graph);
  rememberRecent(result.path);
  setWindowTitle(tr("%1 — Tessera").arg(QFileInfo(result.path).fileName()));
  statusBar()->showMessage(tr("%1 · %2 nodes · backend: reference")
                               .arg(QFileInfo(result.path).fileName())
                               .arg(result.graph->numNodes()));
}

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

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (!urls.isEmpty() && urls.front().isLocalFile()) openModel(urls.front().toLocalFile());
}

}  // namespace tessera::ui
