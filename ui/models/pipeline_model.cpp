#include "ui/models/pipeline_model.h"

#include <QBrush>
#include <QColor>

namespace tessera::ui {

void PipelineModel::setCompile(std::shared_ptr<const CompileResult> compile) {
  beginResetModel();
  compile_ = std::move(compile);
  endResetModel();
}

int PipelineModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !compile_) return 0;
  return 1 + int(compile_->steps.size());
}

int PipelineModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

namespace {
QString delta(const Step& s) {
  if (!s.changed) return QStringLiteral("—");
  return QStringLiteral("+%1 −%2 ~%3").arg(s.added.size()).arg(s.removed.size()).arg(s.rewritten.size());
}

QString statistics(const Step& s) {
  QStringList lines;
  lines << QString::fromStdString(s.summary);
  for (const auto& [name, value] : s.statistics) lines << QStringLiteral("%1: %2").arg(QString::fromStdString(name)).arg(value);
  if (s.failed) lines << QObject::tr("failed: %1").arg(QString::fromStdString(s.error));
  return lines.join('\n');
}
}  // namespace

QVariant PipelineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !compile_ || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  if (index.row() == 0) {
    if (role == Qt::DisplayRole) return index.column() == Pass ? tr("input") : QVariant(QString());
    if (role == Qt::ToolTipRole) return tr("The model as imported");
    return {};
  }
  const Step& s = compile_->steps[size_t(index.row() - 1)];
  switch (role) {
    case Qt::DisplayRole:
      if (index.column() == Pass) return QStringLiteral("%1. %2").arg(index.row()).arg(QString::fromStdString(s.pass));
      if (index.column() == Delta) return delta(s);
      return QString::number(s.wallMs, 'f', 2);
    case Qt::ToolTipRole: return statistics(s);
    case Qt::ForegroundRole:
      if (s.failed) return QBrush(QColor(0xc0, 0x20, 0x20));
      return s.changed ? QVariant() : QVariant(QBrush(QColor(0x99, 0x99, 0x99)));
    case Qt::TextAlignmentRole:
      return index.column() == Pass ? QVariant() : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
  }
  return {};
}

QVariant PipelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Pass: return tr("Pass");
    case Delta: return tr("Δ nodes");
    case Ms: return tr("ms");
  }
  return {};
}

}  // namespace tessera::ui
