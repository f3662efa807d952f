#pragma once
// The nodes of a graph as a table: id, op, inputs, outputs with their types.
#include <QAbstractTableModel>
#include <memory>

#include "ir/graph.h"

namespace tessera::ui {

class NodeTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Id, Op, Inputs, Outputs, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void setGraph(std::shared_ptr<const Graph> graph);
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const Graph> graph_;
  std::vector<const Node*> rows_;  // topological order
};

}  // namespace tessera::ui
