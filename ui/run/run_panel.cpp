#include "ui/run/run_panel.h"

#include <QAction>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/run/chart_kernel_times.h"
#include "ui/run/roofline_chart.h"
#include "ui/run/run_controller.h"
#include "ui/models/run_table_model.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {
constexpr const char* kAddRemote = "+remote";  // the list's last entry: asks for a worker's address
}  // namespace

RunPanel::RunPanel(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), runs_(controller->runs()), backend_(new QComboBox(this)),
      run_(new QPushButton(tr("Run"), this)), tune_(new QPushButton(tr("Tune"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)), reconnect_(new QPushButton(tr("Reconnect"), this)), runProgress_(new QProgressBar(this)),
      tuneProgress_(new QProgressBar(this)), summary_(new QLabel(this)), notes_(new QLabel(this)),
      tabs_(new QTabWidget(this)), table_(new QTableView(this)), model_(new RunTableModel(this)),
      times_(new KernelTimesChart(this)), roofline_(new RooflineChart(this)),
      runAction_(new QAction(tr("&Run"), this)), tuneAction_(new QAction(tr("&Tune"), this)) {
  setUpWidgets();
  layOut();
  fillBackends();
  connectRuns();
  updateButtons();
  summary_->setText(tr("Choose a backend and press Run (F5): every kernel is generated, built, timed and checked "
                       "against the reference interpreter, and the unfused model is run for comparison."));
}

// Names (for tests and styles), shortcuts, progress bars and the result tabs.
void RunPanel::setUpWidgets() {
  setObjectName("runPanel");
  backend_->setObjectName("backendBox");
  run_->setObjectName("runButton");
  tune_->setObjectName("tuneButton");
  cancel_->setObjectName("runCancel");
  reconnect_->setObjectName("remoteReconnect");
  reconnect_->setToolTip(tr("Ask the remote worker again: its state and latency"));
  reconnect_->hide();
  summary_->setObjectName("runSummary");
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notes_->setWordWrap(true);
  notes_->setStyleSheet("QLabel { color: #805020; }");
  runAction_->setShortcut(QKeySequence(Qt::Key_F5));
  tuneAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_T));
  runAction_->setToolTip(tr("Run every kernel on the chosen backend, timed and verified (F5)"));
  for (QProgressBar* bar : {runProgress_, tuneProgress_}) {
    bar->setMaximumWidth(160);
    bar->setTextVisible(true);
    bar->hide();
  }
  runProgress_->setFormat(tr("run %p%"));
  tuneProgress_->setFormat(tr("tune %v/%m"));
  cancel_->hide();
  table_->setObjectName("runTable");
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->verticalHeader()->hide();
  tabs_->addTab(table_, tr("Kernels"));
  tabs_->addTab(times_, tr("Time per kernel"));
  tabs_->addTab(roofline_, tr("Roofline"));
}

// The backend and buttons in a row above the summary, the notes and the result tabs.
void RunPanel::layOut() {
  auto* bar = new QHBoxLayout();
  bar->addWidget(new QLabel(tr("Backend:"), this));
  bar->addWidget(backend_, 1);
  for (QWidget* w : std::initializer_list<QWidget*>{reconnect_, run_, tune_, runProgress_, tuneProgress_, cancel_}) bar->addWidget(w);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(notes_);
  layout->addWidget(tabs_, 1);
}

// The buttons and actions start and cancel the controller's jobs; its signals update the panel.
void RunPanel::connectRuns() {
  connect(run_, &QPushButton::clicked, runs_, &RunController::run);
  connect(runAction_, &QAction::triggered, runs_, &RunController::run);
  connect(tune_, &QPushButton::clicked, runs_, &RunController::tune);
  connect(tuneAction_, &QAction::triggered, runs_, &RunController::tune);
  connect(cancel_, &QPushButton::clicked, runs_, &RunController::cancel);
  connect(backend_, &QComboBox::activated, this, &RunPanel::chooseBackend);
  connect(reconnect_, &QPushButton::clicked, runs_, &RunController::reconnect);
  connect(runs_, &RunController::backendsChanged, this, &RunPanel::fillBackends);
  connect(runs_, &RunController::backendChanged, this, [this](const BackendInfo& b) {
    backend_->setCurrentIndex(backend_->findData(b.name));
    reconnect_->setVisible(!b.remote.isEmpty());
    updateButtons();
  });
  connect(runs_, &RunController::busyChanged, this, [this](bool running, bool tuning, const QString&) {
    runProgress_->setVisible(running);
    tuneProgress_->setVisible(tuning);
    if (running) runProgress_->setRange(0, 0);  // the executor reports no fraction: busy
    cancel_->setVisible(running || tuning);
    updateButtons();
  });
  connect(runs_, &RunController::progress, this, [this](const QString& what, int done, int total) {
    if (!runs_->tuning() || what == tr("run")) return;
    tuneProgress_->setRange(0, std::max(total, 1));
    tuneProgress_->setValue(done);
    tuneProgress_->setToolTip(what);
  });
  connect(runs_, &RunController::runFinished, this, &RunPanel::showRun);
  connect(runs_, &RunController::message, this, [this](const QString& line) { notes_->setText(line); });
  connect(controller_, &SessionController::compiled, this, &RunPanel::updateButtons);
}

void RunPanel::fillBackends() {
  auto* items = new QStandardItemModel(backend_);
  for (const BackendInfo& b : runs_->backends()) {
    const QString latency = b.latencyMs >= 0 ? tr(" · %1 ms").arg(b.latencyMs, 0, 'f', 1) : QString();
    auto* item = new QStandardItem(b.unavailable.isEmpty() ? (b.remote.isEmpty() ? tr("%1 — %2").arg(b.name, b.device) : b.device + latency)
                                                           : tr("%1 — unavailable: %2").arg(b.name, b.unavailable));
    item->setData(b.name, Qt::UserRole);
    item->setToolTip(b.unavailable.isEmpty() ? b.device : b.unavailable);
    if (!b.unavailable.isEmpty()) item->setFlags(item->flags() & ~Qt::ItemIsEnabled);
    items->appendRow(item);
  }
  auto* add = new QStandardItem(tr("Add remote worker…"));
  add->setData(QString(kAddRemote), Qt::UserRole);
  add->setToolTip(tr("A machine running tessera-cli serve (docs/remote.md); the token comes from $TESSERA_REMOTE_TOKEN"));
  items->appendRow(add);
  backend_->setModel(items);
  backend_->setCurrentIndex(backend_->findData(runs_->backend().name));
}

void RunPanel::chooseBackend(int index) {
  const QString name = backend_->itemData(index).toString();
  if (name != kAddRemote) return runs_->setBackend(name);
  backend_->setCurrentIndex(backend_->findData(runs_->backend().name));
  bool ok = false;
  const QString address = QInputDialog::getText(this, tr("Remote worker"), tr("HOST:PORT of a worker (tessera-cli serve):"),
                                                QLineEdit::Normal, QString(), &ok);
  if (ok && !address.trimmed().isEmpty()) runs_->addRemote(address);
}

void RunPanel::updateButtons() {
  const bool model = controller_->compile() != nullptr;
  run_->setEnabled(model && !runs_->running());
  runAction_->setEnabled(run_->isEnabled());
  QString why;
  const bool tunable = runs_->canTune(&why);
  tune_->setEnabled(tunable);
  tuneAction_->setEnabled(tunable);
  tune_->setToolTip(tunable ? tr("Rank each kernel's schedules with the cost model, time the best on %1 and keep the fastest (Ctrl+T)")
                                  .arg(runs_->backend().name)
                            : tr("Tune is unavailable: %1").arg(why));
}

QString RunPanel::comparison(const RunResult& run) const {
  auto previous = runs_->previousRun();
  if (!previous || !previous->report.ran || previous->report.totalMs <= 0 || !run.report.ran) return {};
  const double change = 100 * (run.report.totalMs - previous->report.totalMs) / previous->report.totalMs;
  return tr("<br>previous run (%1): %2 ms → %3 ms (%4%5%)")
      .arg(previous->backend)
      .arg(previous->report.totalMs, 0, 'f', 3)
      .arg(run.report.totalMs, 0, 'f', 3)
      .arg(change >= 0 ? "+" : "")
      .arg(change, 0, 'f', 1);
}

void RunPanel::showRun(std::shared_ptr<const RunResult> run) {
  model_->setRuns(run, runs_->previousRun());
  times_->setRuns(run, runs_->previousRun());
  roofline_->setRun(run);
  summary_->setText(QStringLiteral("<b>%1</b> on %2%3")
                        .arg(runSummary(*run).toHtmlEscaped(), run->peaks.name.toHtmlEscaped(), comparison(*run)));
  summary_->setToolTip(run->timing);
  QStringList notes;
  for (const auto& m : run->report.messages) notes << QString::fromStdString(m);
  notes_->setText(notes.join('\n'));
}

QString RunPanel::summary() const { return summary_->text(); }

}  // namespace tessera::ui
