#include "ui/models/schedule_loop_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>

#include "kernel/visit.h"

namespace tessera::ui {
namespace {

void collect(kernel::StmtNode& s, int parent, std::vector<LoopRow>& rows) {
  if (s.kind == kernel::StmtKind::For) {
    auto& loop = static_cast<kernel::ForStmt&>(s);
    const int me = int(rows.size());
    rows.push_back({loop.h, 0, parent, {}});
    if (parent >= 0) rows[size_t(parent)].children.push_back(me);
    if (loop.body) collect(*loop.body, me, rows);
    return;
  }
  if (s.kind == kernel::StmtKind::Block || s.kind == kernel::StmtKind::IfThen) {
    kernel::forEachChild(s, [&](kernel::Stmt& c) {
      if (c) collect(*c, parent, rows);
    });
    return;
  }
  if (parent >= 0) ++rows[size_t(parent)].statements;
}

QString runsText(const kernel::LoopHeader& h) {
  if (h.loopKind == kernel::LoopKind::Bound) return QString::fromUtf8(kernel::threadTagName(h.tag).data());
  return QString::fromUtf8(kernel::loopKindName(h.loopKind).data());
}

QString notesText(const LoopRow& r) {
  QStringList notes;
  if (r.parent < 0 && r.phases > 1) notes << QObject::tr("launch %1 of %2").arg(r.phase + 1).arg(r.phases);
  if (r.header.reduction) notes << QObject::tr("reduction");
  if (r.header.pipelineStages > 1) notes << QObject::tr("pipelined, %1 stages").arg(r.header.pipelineStages);
  if (r.statements) notes << QObject::tr("%n statement(s)", nullptr, r.statements);
  return notes.join(" · ");
}

QColor runsColor(const kernel::LoopHeader& h) {
  if (h.loopKind != kernel::LoopKind::Bound) return h.loopKind == kernel::LoopKind::Serial ? QColor(0x55, 0x55, 0x55) : QColor(0x6a, 0x3d, 0x9a);
  return kernel::isBlockTag(h.tag) ? QColor(0x1a, 0x5f, 0xd0) : QColor(0x1e, 0x7b, 0x34);
}

}  // namespace

std::vector<LoopRow> loopRows(const kernel::Kernel& k) {
  std::vector<LoopRow> rows;
  if (!k.body) return rows;
  if (k.body->kind != kernel::StmtKind::Block) {
    collect(*k.body, -1, rows);
    return rows;
  }
  // The top-level statements, phase by phase: a grid barrier starts the next launch.
  int phase = 0;
  for (const kernel::Stmt& s : static_cast<kernel::BlockStmt&>(*k.body).stmts) {
    if (s->kind == kernel::StmtKind::Sync && static_cast<kernel::SyncStmt&>(*s).grid) ++phase;
    size_t first = rows.size();
    collect(*s, -1, rows);
    for (size_t i = first; i < rows.size(); ++i) rows[i].phase = phase;
  }
  for (LoopRow& r : rows) r.phases = phase + 1;
  return rows;
}

void ScheduleLoopModel::setKernel(const kernel::Kernel* k) {
  beginResetModel();
  rows_ = k ? loopRows(*k) : std::vector<LoopRow>{};
  top_.clear();
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].parent < 0) top_.push_back(int(i));
  endResetModel();
}

int ScheduleLoopModel::positionOf(int row) const {
  const auto& siblings = childrenOf(rows_[size_t(row)].parent);
  return int(std::find(siblings.begin(), siblings.end(), row) - siblings.begin());
}

QModelIndex ScheduleLoopModel::index(int row, int column, const QModelIndex& parent) const {
  if (column < 0 || column >= ColumnCount || row < 0) return {};
  const auto& kids = childrenOf(parent.isValid() ? int(parent.internalId()) : -1);
  if (row >= int(kids.size())) return {};
  return createIndex(row, column, quintptr(kids[size_t(row)]));
}

QModelIndex ScheduleLoopModel::parent(const QModelIndex& child) const {
  if (!child.isValid()) return {};
  const int p = rows_[size_t(child.internalId())].parent;
  return p < 0 ? QModelIndex() : createIndex(positionOf(p), 0, quintptr(p));
}

int ScheduleLoopModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() && parent.column() != 0) return 0;
  return int(childrenOf(parent.isValid() ? int(parent.internalId()) : -1).size());
}

int ScheduleLoopModel::columnCount(const QModelIndex&) const { return ColumnCount; }

QModelIndex ScheduleLoopModel::indexOfLoop(const QString& var) const {
  for (size_t i = 0; i < rows_.size(); ++i)
    if (QString::fromStdString(rows_[i].header.var) == var) return createIndex(positionOf(int(i)), 0, quintptr(i));
  return {};
}

QVariant ScheduleLoopModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.internalId() >= rows_.size()) return {};
  const LoopRow& r = rows_[size_t(index.internalId())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Loop: return QString::fromStdString(r.header.var);
      case Extent: return QString::number(r.header.extent);
      case Runs: return runsText(r.header);
      case Notes: return notesText(r);
      default: return {};
    }
  }
  if (role == Qt::ForegroundRole && index.column() == Runs) return QBrush(runsColor(r.header));
  if (role == Qt::TextAlignmentRole && index.column() == Extent) return QVariant(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant ScheduleLoopModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"loop", "extent", "runs as", "notes"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace tessera::ui
