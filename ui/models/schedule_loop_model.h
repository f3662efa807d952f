#pragma once
// A kernel's loop nest as a tree: one row per loop (nested loops are children, through blocks and guards),
// columns: loop variable, extent, how it runs (serial, parallel, vectorized, unrolled, or the hardware index it
// is bound to), and notes (reduction axis, pipeline stages, statements inside). Swapped in whole per kernel.
#include <QAbstractItemModel>
#include <memory>
#include <vector>

#include "kernel/kernel_ir.h"

namespace tessera::ui {

struct LoopRow {
  kernel::LoopHeader header;
  int statements = 0;  // non-loop statements directly in its body (through blocks and guards)
  int parent = -1;     // index into the rows, -1 for a top-level loop
  std::vector<int> children;
  int phase = 0, phases = 1;  // the launch it runs in, of how many (grid barriers split a kernel into launches)
};

// The loops of a kernel in pre-order (parents before children).
std::vector<LoopRow> loopRows(const kernel::Kernel& k);

class ScheduleLoopModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  enum Column { Loop, Extent, Runs, Notes, ColumnCount };
  using QAbstractItemModel::QAbstractItemModel;

  void setKernel(const kernel::Kernel* k);  // null clears; the rows are copied, the kernel is not kept
  const std::vector<LoopRow>& rows() const { return rows_; }
  QModelIndex indexOfLoop(const QString& var) const;

  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  const std::vector<int>& childrenOf(int row) const { return row < 0 ? top_ : rows_[size_t(row)].children; }
  int positionOf(int row) const;  // its position among its parent's children

  std::vector<LoopRow> rows_;
  std::vector<int> top_;
};

}  // namespace tessera::ui
