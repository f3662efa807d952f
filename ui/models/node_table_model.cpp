#include "ui/models/node_table_model.h"

namespace tessera::ui {

void NodeTableModel::setGraph(std::shared_ptr<const Graph> graph) {
  beginResetModel();
  graph_ = std::move(graph);
  rows_.clear();
  if (graph_)
    for (const Node* n : graph_->topoOrder()) rows_.push_back(n);
  endResetModel();
}

int NodeTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(rows_.size()); }

int NodeTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

namespace {
QString valueList(const std::vector<Value*>& values, bool withTypes) {
  QStringList parts;
  for (const Value* v : values) {
    if (!v) {
      parts << "_";
      continue;
    }
    QString s = "%" + QString::fromStdString(v->name());
    if (withTypes) s += ": " + QString::fromStdString(v->type().toString());
    parts << s;
  }
  return parts.join(", ");
}
}  // namespace

QVariant NodeTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(rows_.size()) || index.column() >= ColumnCount) return {};
  const Node* n = rows_[size_t(index.row())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Id: return QString::fromStdString(n->id());
      case Op: return QString::fromStdString(n->op());
      case Inputs: return valueList(n->inputs(), false);
      case Outputs: return valueList(n->outputs(), true);
    }
  }
  if (role == Qt::ToolTipRole) return QString::fromStdString(n->op() + " " + n->id());
  return {};
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Id: return tr("Node");
    case Op: return tr("Op");
    case Inputs: return tr("Inputs");
    case Outputs: return tr("Outputs");
  }
  return {};
}

}  // namespace tessera::ui
