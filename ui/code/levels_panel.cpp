#include "ui/code/levels_panel.h"

#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QHBoxLayout>
#include <QProgressBar>
#include <QScrollBar>
#include <QShortcut>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/code/code_controller.h"
#include "ui/code/code_kernel_model.h"
#include "ui/code/code_view.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

QString tabTitle(Level level) {
  switch (level) {
    case Level::Graph: return QObject::tr("Graph IR");
    case Level::Fused: return QObject::tr("Fused");
    case Level::Kernel: return QObject::tr("Kernel IR");
    case Level::Cuda: return QObject::tr("CUDA");
    case Level::Cpp: return QObject::tr("C++");
    case Level::Ptx: return QObject::tr("PTX");
    case Level::Run: break;  // a driver stage, not a level with text: no tab
  }
  return {};
}

LevelText noteOnly(const QString& note) {
  LevelText t;
  t.note = note;
  return t;
}

}  // namespace

LevelsPanel::LevelsPanel(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), tabs_(new QTabWidget(this)), model_(new CodeKernelModel(this)),
      table_(new QTableView(this)), status_(new QLabel(this)), progress_(new QProgressBar(this)) {
  setObjectName("levelsPanel");
  tabs_->setObjectName("levelTabs");
  for (int i = 0; i < kLevelCount; ++i) {
    auto* view = new CodeView(Level(i), tabs_);
    views_[size_t(i)] = view;
    tabs_->addTab(view, tabTitle(Level(i)));
    connect(view, &CodeView::lineClicked, this, [this, view](int line) { onLineClicked(view, line); });
    // Ctrl+1 … Ctrl+6: this level, wherever the focus is in the window (shared/UI.md, keys).
    auto* key = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)), this);
    key->setContext(Qt::WindowShortcut);
    connect(key, &QShortcut::activated, this, [this, i] {
      if (auto* dock = qobject_cast<QDockWidget*>(parentWidget())) dock->show(), dock->raise();
      setLevel(Level(i));
    });
  }
  table_->setObjectName("kernelTable");
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& i) {
    controller_->select({Selection::Group, model_->index(i.row(), CodeKernelModel::Id).data().toString(), {}, {}});
  });
  status_->setObjectName("levelsStatus");
  progress_->setObjectName("levelsProgress");
  progress_->setMaximumWidth(160);
  progress_->hide();
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(table_);
  split->addWidget(tabs_);
  split->setStretchFactor(1, 3);
  auto* statusRow = new QHBoxLayout;
  statusRow->addWidget(status_, 1);
  statusRow->addWidget(progress_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(split, 1);
  layout->addLayout(statusRow);

  CodeController* code = controller_->code();
  connect(controller_, &SessionController::compiled, this, &LevelsPanel::onCompiled);
  connect(controller_, &SessionController::selectionChanged, this, &LevelsPanel::markSelection);
  connect(code, &CodeController::kernelsReady, this, &LevelsPanel::showKernels);
  connect(code, &CodeController::ptxReady, this, &LevelsPanel::showPtx);
  connect(code, &CodeController::progress, this, &LevelsPanel::onProgress);
  connect(tabs_, &QTabWidget::currentChanged, this, &LevelsPanel::request);
  onCompiled();
}

Level LevelsPanel::level() const { return Level(tabs_->currentIndex()); }

void LevelsPanel::setLevel(Level level) { tabs_->setCurrentIndex(int(level)); }

void LevelsPanel::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  request();
}

bool LevelsPanel::event(QEvent* event) {
  // Put in a dock: follow whether its tab is the one shown (a covered tab stays "visible" to QWidget).
  if (event->type() == QEvent::ParentChange)
    if (auto* dock = qobject_cast<QDockWidget*>(parentWidget()))
      connect(dock, &QDockWidget::visibilityChanged, this, &LevelsPanel::onDockVisibility, Qt::UniqueConnection);
  return QWidget::event(event);
}

void LevelsPanel::onDockVisibility(bool visible) {
  dockVisible_ = visible;
  request();
}

bool LevelsPanel::onScreen() const { return isVisible() && dockVisible_; }

bool LevelsPanel::waiting() const {
  CodeController* code = controller_->code();
  if (!onScreen() || !controller_->compile()) return false;
  if (code->busy() || !code->kernels()) return true;
  return level() == Level::Ptx && (!code->ptx() || !code->ptx()->complete());
}

void LevelsPanel::onCompiled() {
  auto compile = controller_->compile();
  views_[size_t(Level::Graph)]->setLevelText(compile && compile->graph ? graphLevel(*compile->graph) : noteOnly(tr("No model.")));
  views_[size_t(Level::Fused)]->setLevelText(compile ? fusedLevel(*compile) : noteOnly(tr("No model.")));
  const QString waiting = compile ? tr("Lowering…") : tr("No model.");
  for (Level l : {Level::Kernel, Level::Cuda, Level::Cpp, Level::Ptx}) views_[size_t(l)]->setLevelText(noteOnly(waiting));
  model_->setKernels(nullptr);
  shown_ = nullptr;
  status_->setText(compile && !compile->error.empty() ? tr("compile failed: %1").arg(QString::fromStdString(compile->error)) : QString());
  markSelection(controller_->selection());
  request();
}

void LevelsPanel::request() {
  // Hidden (a tab behind another dock): nothing to compute until it shows.
  if (!onScreen() || !controller_->compile()) return;
  if (level() == Level::Ptx) controller_->code()->requestPtx();
  else controller_->code()->requestKernels();
}

void LevelsPanel::showKernels(std::shared_ptr<const CodeResult> result) {
  if (!result || result == shown_) return;  // already shown (requestKernels answers again)
  shown_ = result;
  views_[size_t(Level::Kernel)]->setLevelText(result->kernel);
  views_[size_t(Level::Cuda)]->setLevelText(result->cuda);
  views_[size_t(Level::Cpp)]->setLevelText(result->cpp);
  model_->setKernels(result);
  table_->resizeColumnsToContents();
  int failed = 0;
  for (const KernelCode& k : result->kernels) failed += !k.error.isEmpty();
  status_->setText(result->error.isEmpty()
                       ? tr("%n kernel(s) lowered and generated in %1 ms", nullptr, int(result->kernels.size())).arg(result->ms, 0, 'f', 0) +
                             (failed ? tr(" · %n without code (see the table)", nullptr, failed) : QString())
                       : result->error);
  markSelection(controller_->selection());
}

void LevelsPanel::showPtx(std::shared_ptr<const PtxResult> result) {
  CodeView* view = views_[size_t(Level::Ptx)];
  // Keep the reader's place while later kernels arrive.
  const int top = view->verticalScrollBar()->value();
  view->setLevelText(result->ptx);
  model_->setPtx(result);
  markSelection(controller_->selection());
  if (view->markedLines().empty()) view->verticalScrollBar()->setValue(top);
  if (!result->ptx.note.isEmpty()) status_->setText(result->ptx.note);
}

void LevelsPanel::onProgress(Level level, int done, int total) {
  progress_->setVisible(done < total);
  progress_->setRange(0, total);
  progress_->setValue(done);
  progress_->setFormat(level == Level::Ptx ? tr("PTX %v/%m") : tr("lowering %v/%m"));
  if (level == Level::Ptx && done == total) status_->setText(tr("PTX for %n kernel(s) (NVRTC)", nullptr, total));
}

void LevelsPanel::markSelection(const Selection& selection) {
  auto compile = controller_->compile();
  const QSet<QString> nodes = compile ? selectedNodes(*compile, selection) : QSet<QString>{};
  for (CodeView* view : views_) view->markLines(view->levelText().linesFor(nodes), view != clicked_);
  if (selection.kind == Selection::Group || selection.kind == Selection::Node) {
    const FusedGroup* g = nullptr;
    if (compile && compile->fusion && !nodes.isEmpty()) g = compile->fusion->groupOf(nodes.begin()->toStdString());
    const int row = g ? model_->rowOf(QString::fromStdString(g->id)) : -1;
    if (row >= 0) table_->selectRow(row);
    else table_->clearSelection();
  }
}

void LevelsPanel::onLineClicked(CodeView* view, int line) {
  auto compile = controller_->compile();
  const auto& lines = view->levelText().lineNodes;
  if (!compile || line < 0 || line >= int(lines.size())) return;
  const Selection pick = selectionForLine(*compile, lines[size_t(line)]);
  if (pick.kind == Selection::None) return;
  clicked_ = view;
  controller_->select(pick);
  clicked_ = nullptr;
}

QWidget* levelsPanelFor(QMainWindow& window) {
  auto* panel = window.findChild<LevelsPanel*>();
  if (!panel) return nullptr;
  panel->setLevel(Level::Cuda);
  if (auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget())) dock->show(), dock->raise();
  return panel;
}

bool levelsBusy(QMainWindow& window) {
  auto* panel = window.findChild<LevelsPanel*>();
  return panel && panel->waiting();
}

}  // namespace tessera::ui
