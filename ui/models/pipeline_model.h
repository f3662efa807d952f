#pragma once
// The recorded steps as a table: row 0 is the imported model, row i the IR after step i. Columns: pass,
// Δ nodes (+added −removed ~rewritten), ms. Unchanged steps are greyed. The whole compile is swapped in at once.
#include <QAbstractTableModel>
#include <memory>

#include "fusion/compile.h"

namespace tessera::ui {

class PipelineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Pass, Delta, Ms, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void setCompile(std::shared_ptr<const CompileResult> compile);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const CompileResult> compile_;
};

}  // namespace tessera::ui
