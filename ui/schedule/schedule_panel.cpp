#include "ui/schedule/schedule_panel.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>

#include "kernel/lower/lower.h"
#include "kernel/schedule/schedule.h"
#include "kernel/schedule/trace.h"
#include "tune/target.h"
#include "ui/code/code_controller.h"
#include "ui/code/code_levels.h"
#include "ui/schedule/schedule_edit.h"
#include "ui/models/schedule_loop_model.h"
#include "ui/schedule/schedule_picture.h"
#include "ui/schedule/schedule_tiling.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {

SchedulePanel::SchedulePanel(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), title_(new QLabel(this)), tree_(new QTreeView(this)),
      loops_(new ScheduleLoopModel(this)), trace_(new QListWidget(this)), picture_(new SchedulePicture(this)), editor_(new QGroupBox(this)),
      form_(new QFormLayout()), error_(new QLabel(this)), reset_(new QPushButton(tr("Reset to template defaults"), this)) {
  setObjectName("schedulePanel");
  title_->setObjectName("scheduleTitle");
  title_->setWordWrap(true);
  tree_->setObjectName("scheduleLoops");
  tree_->setModel(loops_);
  tree_->setUniformRowHeights(true);
  tree_->header()->setStretchLastSection(true);
  trace_->setObjectName("scheduleTrace");
  trace_->setToolTip(tr("The schedule as a trace of primitives: pick one to see the loop nest after it"));
  error_->setObjectName("scheduleError");
  error_->setWordWrap(true);
  error_->setStyleSheet("QLabel { color: #c01c1c; }");
  error_->hide();
  reset_->setObjectName("scheduleReset");
  auto* editorLayout = new QVBoxLayout(editor_);
  editorLayout->addLayout(form_);
  editorLayout->addWidget(error_);
  editorLayout->addWidget(reset_);
  editorLayout->addStretch();
  auto* left = new QSplitter(Qt::Vertical, this);
  // The parameters scroll, so the loop tree and the trace keep their room beside a template with many.
  auto* editorScroll = new QScrollArea(this);
  editorScroll->setWidgetResizable(true);
  editorScroll->setFrameShape(QFrame::NoFrame);
  editorScroll->setWidget(editor_);
  left->addWidget(tree_);
  left->addWidget(trace_);
  left->addWidget(editorScroll);
  left->setSizes({320, 170, 260});
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(picture_);
  split->setStretchFactor(1, 2);
  split->setSizes({380, 620});  // room for the loop tree's columns
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(title_);
  layout->addWidget(split, 1);
  connect(reset_, &QPushButton::clicked, this, &SchedulePanel::resetSchedule);
  connect(trace_, &QListWidget::currentRowChanged, this, [this](int row) {
    if (row >= 0 && row != (traceStep_ < 0 ? trace_->count() - 1 : traceStep_)) showTraceStep(row);
  });
  connect(controller_, &SessionController::selectionChanged, this, &SchedulePanel::refresh);
  connect(controller_, &SessionController::compiled, this, &SchedulePanel::refresh);
  connect(controller_, &SessionController::schedulesChanged, this, [this] {
    code_ = nullptr;  // lowered with the old schedules; the new lowering follows
    refresh();
  });
  connect(controller_->code(), &CodeController::kernelsReady, this, [this](std::shared_ptr<const CodeResult> code) {
    if (code && code->compile == controller_->compile()) code_ = std::move(code);
    refresh();
  });
  refresh();
}

QString SchedulePanel::groupOfSelection() const {
  auto compile = controller_->compile();
  if (!compile || !compile->fusion) return {};
  const Selection& s = controller_->selection();
  std::string node;
  switch (s.kind) {
    case Selection::Group: return s.id;
    case Selection::Node: node = s.id.toStdString(); break;
    case Selection::Value: node = s.producer.toStdString(); break;
    default: return {};
  }
  const FusedGroup* g = compile->fusion->groupOf(node);
  return g ? QString::fromStdString(g->id) : QString();
}

const KernelCode* SchedulePanel::currentKernel() const {
  if (!code_ || code_->compile != controller_->compile() || kernelId_.isEmpty()) return nullptr;
  return code_->find(kernelId_);
}

// The picture is of the CUDA kernel on the GPU, whatever backend runs: the driver's cuda target.
const cost::Device& SchedulePanel::device() {
  if (!device_) {
    auto d = controller_->driver();
    device_ = std::make_unique<cost::Device>(d ? d->targetOf(execute::BackendKind::Cuda)->costDevice : cost::loadDevice("h200"));
  }
  return *device_;
}

void SchedulePanel::refresh() {
  kernelId_ = groupOfSelection();
  if (code_ && code_->compile != controller_->compile()) code_ = nullptr;
  const KernelCode* k = currentKernel();
  if (!k) {
    loops_->setKernel(nullptr);
    editor_->setEnabled(false);
    title_->setText(kernelId_.isEmpty() ? tr("No kernel selected") : tr("%1: lowering…").arg(kernelId_));
    picture_->setMessage(kernelId_.isEmpty() ? QString() : tr("Lowering %1…").arg(kernelId_));
    if (!kernelId_.isEmpty() && controller_->compile()) controller_->code()->requestKernels();
    return;
  }
  showKernel(*k);
}

void SchedulePanel::showKernel(const KernelCode& k) {
  const execute::CompiledKernel& ck = k.compiled;
  const std::string key = execute::ScheduleSet::keyOf(ck.spec.nodeIds);
  const bool overridden = controller_->schedules().traces.count(key) > 0;
  title_->setText(tr("<b>%1</b> · %2 · %n node(s) · schedule: %3", nullptr, int(ck.spec.nodeIds.size()))
                      .arg(kernelId_, QString::fromStdString(ck.spec.kind),
                           overridden ? (ck.replayed ? tr("override") : tr("override (stale: did not replay)")) : tr("template defaults")));
  reset_->setEnabled(overridden);
  if (!k.hasSource()) {  // a host group has no loops; a kernel without source shows its loops and why
    loops_->setKernel(ck.onHost() ? nullptr : &ck.kernel);
    picture_->setMessage(k.error.isEmpty() ? k.host : k.error);
    editor_->setEnabled(false);
    return;
  }
  loops_->setKernel(&ck.kernel);
  tree_->expandAll();
  for (int c = 0; c < 3; ++c) tree_->resizeColumnToContents(c);
  picture_->setTiling(describeTiling(ck.kernel, k.cuda.launch, device()));
  buildEditor(k);
  listTrace(k);
}

// Row 0 is the loop nest as lowered, row n the nest after the trace's n-th primitive; the last row is current.
// The same trace listed again (a refresh: new kernels of an unchanged schedule) keeps the step shown.
void SchedulePanel::listTrace(const KernelCode& k) {
  const auto& steps = k.compiled.trace.instructions;
  const std::string key = execute::ScheduleSet::keyOf(k.compiled.spec.nodeIds) + "|" + k.compiled.trace.save();
  const int keep = key == tracedKey_ ? traceStep_ : -1;
  tracedKey_ = key;
  {
    const QSignalBlocker quiet(trace_);
    trace_->clear();
    trace_->addItem(tr("0  as lowered: one loop per axis, nothing scheduled"));
    for (size_t n = 0; n < steps.size(); ++n)
      trace_->addItem(QString("%1  %2").arg(n + 1).arg(QString::fromStdString(kernel::describeInstruction(steps[n]))));
    traceStep_ = -1;
    trace_->setCurrentRow(trace_->count() - 1);
  }
  if (keep >= 0) showTraceStep(keep);
}

bool SchedulePanel::showTraceStep(int steps) {
  const KernelCode* k = currentKernel();
  auto compile = controller_->compile();
  if (!k || !k->hasSource() || !compile || !compile->graph) return false;
  const int total = int(k->compiled.trace.instructions.size());
  if (steps < 0 || steps >= total) {  // the whole schedule: the compiled kernel itself
    traceStep_ = -1;
    loops_->setKernel(&k->compiled.kernel);
  } else {
    try {
      kernel::Kernel stepped = kernel::lowerToLoops(*compile->graph, k->compiled.spec);
      kernel::replayPrefix(stepped, k->compiled.trace, size_t(steps));
      loops_->setKernel(&stepped);  // the model copies its rows
    } catch (const std::exception& e) {
      error_->setText(tr("The trace's first %1 step(s) do not replay: %2").arg(steps).arg(QString::fromStdString(e.what())));
      error_->show();
      return false;
    }
    traceStep_ = steps;
  }
  tree_->expandAll();
  for (int c = 0; c < 3; ++c) tree_->resizeColumnToContents(c);
  const QSignalBlocker quiet(trace_);
  trace_->setCurrentRow(traceStep_ < 0 ? trace_->count() - 1 : traceStep_);
  return true;
}

void SchedulePanel::buildEditor(const KernelCode& k) {
  // The boxes go later: this may run inside one of their own signals.
  while (form_->rowCount() > 0) {
    const QFormLayout::TakeRowResult row = form_->takeRow(0);
    for (QLayoutItem* item : {row.labelItem, row.fieldItem}) {
      if (!item) continue;
      if (QWidget* w = item->widget()) {
        w->hide();
        w->setObjectName({});
        w->deleteLater();
      }
      delete item;
    }
  }
  static_cast<QGroupBox*>(editor_)->setTitle(tr("Template parameters (%1)").arg(QString::fromStdString(kernel::templateName(k.compiled.kernel))));
  editor_->setEnabled(true);
  for (const kernel::TemplateParam& p : kernel::parameterSpace(k.compiled.kernel)) {
    auto* box = new QComboBox(editor_);
    const QString name = QString::fromStdString(p.name);
    box->setObjectName("param_" + name);
    box->setToolTip(QString::fromStdString(p.summary));
    std::vector<int64_t> values = p.candidates;
    auto current = k.compiled.kernel.params.find(p.name);
    if (current != k.compiled.kernel.params.end() && std::find(values.begin(), values.end(), current->second) == values.end())
      values.push_back(current->second);  // a value from a saved trace outside today's candidates
    for (int64_t v : values) box->addItem(QString::number(v), QVariant::fromValue<qlonglong>(v));
    if (current != k.compiled.kernel.params.end()) box->setCurrentIndex(box->findData(QVariant::fromValue<qlonglong>(current->second)));
    connect(box, &QComboBox::activated, this, [this, name, box](int index) {
      editParam(name, box->itemData(index).toLongLong());
    });
    form_->addRow(name, box);
  }
}

QComboBox* SchedulePanel::paramBox(const QString& name) const { return editor_->findChild<QComboBox*>("param_" + name); }

QString SchedulePanel::error() const { return error_->text(); }

bool SchedulePanel::editParam(const QString& name, int64_t value) {
  const KernelCode* k = currentKernel();
  auto compile = controller_->compile();
  if (!k || !compile || !compile->graph) return false;
  kernel::TemplateParams params = k->compiled.kernel.params;
  if (params.count(name.toStdString()) && params[name.toStdString()] == value) return false;
  params[name.toStdString()] = value;
  kernel::Trace trace;
  try {
    trace = kernel::traceWithParams(*compile->graph, k->compiled.spec, params);
  } catch (const std::exception& e) {
    error_->setText(tr("%1 = %2 refused: %3").arg(name).arg(value).arg(QString::fromStdString(e.what())));
    error_->show();
    buildEditor(*k);  // the boxes show the values in effect again
    return false;
  }
  error_->clear();
  error_->hide();
  execute::ScheduleSet next = controller_->schedules();
  next.traces[execute::ScheduleSet::keyOf(k->compiled.spec.nodeIds)] = std::move(trace);
  controller_->changeSchedules(std::move(next), tr("%1: %2 = %3").arg(kernelId_, name).arg(value));
  return true;
}

void SchedulePanel::resetSchedule() {
  const KernelCode* k = currentKernel();
  if (!k) return;
  execute::ScheduleSet next = controller_->schedules();
  if (next.traces.erase(execute::ScheduleSet::keyOf(k->compiled.spec.nodeIds)) == 0) return;
  controller_->changeSchedules(std::move(next), tr("%1: template defaults").arg(kernelId_));
}

}  // namespace tessera::ui
