#include "ui/models/overrides_model.h"

#include <QBrush>
#include <QColor>

namespace tessera::ui {

QString overrideTarget(const Override& o) {
  switch (o.kind) {
    case OverrideKind::ForceFuse:
    case OverrideKind::ForbidFuse: return QString::fromStdString(o.producer + " → " + o.consumer);
    case OverrideKind::Split: return QString::fromStdString(o.group);
    case OverrideKind::DisablePass: return QString::fromStdString(o.pass);
  }
  return {};
}

namespace {
bool same(const Override& a, const Override& b) {
  return a.kind == b.kind && a.producer == b.producer && a.consumer == b.consumer && a.group == b.group && a.pass == b.pass;
}
}  // namespace

void OverridesModel::setOverrides(const std::vector<Override>& overrides, const std::vector<OverrideStatus>& statuses) {
  beginResetModel();
  rows_.clear();
  for (size_t i = 0; i < overrides.size(); ++i) {
    if (i < statuses.size() && same(statuses[i].override, overrides[i])) rows_.push_back(statuses[i]);
    else rows_.push_back(OverrideStatus{overrides[i], OverrideState::Pending, "", "recompiling", 0, 0});
  }
  endResetModel();
}

int OverridesModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int OverridesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant OverridesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const OverrideStatus& s = rows_[size_t(index.row())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Kind: return QString::fromStdString(std::string(overrideKindName(s.override.kind)));
      case Target: return overrideTarget(s.override);
      case Status: {
        QString state = QString::fromStdString(overrideStateName(s.status));
        return s.rule.empty() ? state : QStringLiteral("%1 [%2]").arg(state, QString::fromStdString(s.rule));
      }
      case Detail: return QString::fromStdString(s.detail);
    }
  }
  if (role == Qt::ToolTipRole) return QString::fromStdString(s.detail);
  if (role == Qt::ForegroundRole && index.column() == Status) {
    if (s.status == OverrideState::Refused) return QBrush(QColor(0xc0, 0x20, 0x20));
    if (s.status == OverrideState::Stale) return QBrush(QColor(0xb0, 0x70, 0x00));
  }
  return {};
}

QVariant OverridesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Kind: return tr("Override");
    case Target: return tr("On");
    case Status: return tr("Status");
    case Detail: return tr("Detail");
  }
  return {};
}

}  // namespace tessera::ui
