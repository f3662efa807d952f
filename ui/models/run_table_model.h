#pragma once
// The run results as a table, one row per kernel in execution order (host groups among them, their kind
// starting "host", the reason in its tooltip): group, kind, predicted ms, measured ms,
// change against the previous run, GB/s, GFLOP/s, share of the roofline, verified, max relative error. A run
// (and the one before it, for the change column) is swapped in whole.
#include <QAbstractTableModel>
#include <map>
#include <memory>

#include "ui/models/run_result.h"

namespace tessera::ui {

class RunTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Group, Kind, Predicted, Measured, Delta, GBps, GFlops, Roofline, Verified, MaxRelErr, ColumnCount };
  // Qt::UserRole: the number behind a cell (ms, share, ...) for sorting and tests; -1 when there is none.
  static constexpr int ValueRole = Qt::UserRole;
  using QAbstractTableModel::QAbstractTableModel;

  void setRuns(std::shared_ptr<const RunResult> current, std::shared_ptr<const RunResult> previous);
  std::shared_ptr<const RunResult> run() const { return run_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  QVariant display(const execute::KernelReport& k, int column) const;
  double value(const execute::KernelReport& k, int column) const;
  double previousMs(const execute::KernelReport& k) const;  // -1 when the previous run had no such kernel

  std::shared_ptr<const RunResult> run_;
  std::map<std::string, double> previous_;  // kernelKey → ms
};

}  // namespace tessera::ui
