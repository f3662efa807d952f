#include "ui/pipeline/pipeline_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSlider>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/models/pipeline_model.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {

PipelinePanel::PipelinePanel(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), model_(new PipelineModel(this)), view_(new QTableView(this)),
      slider_(new QSlider(Qt::Horizontal, this)), caption_(new QLabel(this)) {
  setObjectName("pipelinePanel");
  view_->setObjectName("pipelineSteps");
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(20);
  view_->horizontalHeader()->setSectionResizeMode(PipelineModel::Pass, QHeaderView::Stretch);
  view_->horizontalHeader()->setSectionResizeMode(PipelineModel::Delta, QHeaderView::ResizeToContents);
  view_->horizontalHeader()->setSectionResizeMode(PipelineModel::Ms, QHeaderView::ResizeToContents);
  slider_->setObjectName("stepSlider");
  auto* prev = new QToolButton(this);
  prev->setText("◀");
  prev->setToolTip(tr("Previous step (Alt+←)"));
  auto* next = new QToolButton(this);
  next->setText("▶");
  next->setToolTip(tr("Next step (Alt+→)"));
  auto* row = new QHBoxLayout;
  row->addWidget(prev);
  row->addWidget(slider_, 1);
  row->addWidget(next);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(view_, 1);
  layout->addLayout(row);
  layout->addWidget(caption_);
  connect(prev, &QToolButton::clicked, this, [this] { controller_->setCurrentStep(controller_->currentStep() - 1); });
  connect(next, &QToolButton::clicked, this, [this] { controller_->setCurrentStep(controller_->currentStep() + 1); });
  connect(slider_, &QSlider::valueChanged, controller_, &SessionController::setCurrentStep);
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { if (current.isValid()) controller_->setCurrentStep(current.row()); });
  connect(controller_, &SessionController::compiled, this, &PipelinePanel::onCompiled);
  connect(controller_, &SessionController::stepChanged, this, &PipelinePanel::onStepChanged);
}

void PipelinePanel::onCompiled() {
  model_->setCompile(controller_->compile());
  const QSignalBlocker block(slider_);
  slider_->setRange(0, std::max(0, controller_->stepCount() - 1));
  onStepChanged(controller_->currentStep());
}

void PipelinePanel::onStepChanged(int step) {
  {
    const QSignalBlocker block(slider_);
    slider_->setValue(step);
  }
  if (view_->currentIndex().row() != step) {
    const QSignalBlocker block(view_->selectionModel());
    view_->selectRow(step);
  }
  view_->scrollTo(model_->index(step, 0));
  caption_->setText(controller_->stepTitle(step));
}

}  // namespace tessera::ui
