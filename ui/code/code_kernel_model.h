#pragma once
// The kernels of the last compile as a table beside the Levels panel's text: id, kind, generated function,
// loops, source lines and PTX status (or why a kernel has no code). A click selects the kernel's group.
#include <QAbstractTableModel>
#include <memory>

#include "ui/code/code_levels.h"

namespace tessera::ui {

class CodeKernelModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Id, Kind, Entry, Loops, CudaLines, Ptx, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  // Swaps in a whole result (null: empty); the PTX column resets with it.
  void setKernels(std::shared_ptr<const CodeResult> kernels);
  void setPtx(std::shared_ptr<const PtxResult> ptx);
  // The row of a kernel id, or -1.
  int rowOf(const QString& kernelId) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QString ptxStatus(int row) const;
  std::shared_ptr<const CodeResult> kernels_;
  std::shared_ptr<const PtxResult> ptx_;
};

}  // namespace tessera::ui
