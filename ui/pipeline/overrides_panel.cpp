#include "ui/pipeline/overrides_panel.h"

#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <set>

#include "passes/pipelines.h"
#include "ui/models/overrides_model.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {

OverridesPanel::OverridesPanel(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), model_(new OverridesModel(this)), view_(new QTableView(this)),
      passes_(new QListWidget(this)) {
  setObjectName("overridesPanel");
  view_->setObjectName("overridesTable");
  view_->setModel(model_);
  view_->verticalHeader()->hide();
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->horizontalHeader()->setStretchLastSection(true);
  auto* remove = new QPushButton(tr("Remove override"), this);
  passes_->setObjectName("passToggles");
  std::vector<std::string> names;
  try {
    names = resolvePipeline("default");
  } catch (const std::exception&) {
  }
  names.push_back("fuse");
  std::set<std::string> seen;  // a pass may run twice in a pipeline; one toggle disables both
  for (const std::string& name : names) {
    if (!seen.insert(name).second) continue;
    auto* item = new QListWidgetItem(QString::fromStdString(name), passes_);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
  }
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(view_, 2);
  layout->addWidget(remove);
  layout->addWidget(new QLabel(tr("Passes (uncheck to disable):"), this));
  layout->addWidget(passes_, 1);
  connect(remove, &QPushButton::clicked, this, &OverridesPanel::removeSelected);
  connect(passes_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    controller_->setPassDisabled(item->text().toStdString(), item->checkState() != Qt::Checked);
  });
  connect(controller_, &SessionController::overridesChanged, this, &OverridesPanel::refresh);
  connect(controller_, &SessionController::compiled, this, &OverridesPanel::refresh);
}

void OverridesPanel::refresh() {
  auto compile = controller_->compile();
  model_->setOverrides(controller_->overrides(), compile ? compile->overrides : std::vector<OverrideStatus>{});
  const QSignalBlocker block(passes_);
  for (int i = 0; i < passes_->count(); ++i) {
    QListWidgetItem* item = passes_->item(i);
    bool disabled = false;
    for (const Override& o : controller_->overrides())
      disabled |= o.kind == OverrideKind::DisablePass && QString::fromStdString(o.pass) == item->text();
    item->setCheckState(disabled ? Qt::Unchecked : Qt::Checked);
  }
}

void OverridesPanel::removeSelected() {
  const QModelIndex current = view_->currentIndex();
  if (!current.isValid()) return;
  std::vector<Override> next = controller_->overrides();
  if (current.row() >= int(next.size())) return;
  const QString what = overrideTarget(next[size_t(current.row())]);
  next.erase(next.begin() + current.row());
  controller_->changeOverrides(std::move(next), tr("Remove override on %1").arg(what));
}

}  // namespace tessera::ui
