#pragma once
// The active overrides with what the last compile made of them: applied, refused (with the rule it breaks)
// or stale (it no longer matches the model). Swapped in whole after each compile.
#include <QAbstractTableModel>
#include <vector>

#include "fusion/overrides.h"

namespace tessera::ui {

class OverridesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Kind, Target, Status, Detail, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  // `statuses` from the last compile; entries of `overrides` without a status yet show "pending".
  void setOverrides(const std::vector<Override>& overrides, const std::vector<OverrideStatus>& statuses);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
  const OverrideStatus& entry(int row) const { return rows_[size_t(row)]; }

 private:
  std::vector<OverrideStatus> rows_;
};

QString overrideTarget(const Override& o);

}  // namespace tessera::ui
