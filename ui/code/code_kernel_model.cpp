#include "ui/code/code_kernel_model.h"

#include <QColor>
#include <algorithm>

namespace tessera::ui {
namespace {
int lineCount(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

void CodeKernelModel::setKernels(std::shared_ptr<const CodeResult> kernels) {
  beginResetModel();
  kernels_ = std::move(kernels);
  ptx_ = nullptr;
  endResetModel();
}

void CodeKernelModel::setPtx(std::shared_ptr<const PtxResult> ptx) {
  ptx_ = std::move(ptx);
  if (rowCount() > 0) emit dataChanged(index(0, Ptx), index(rowCount() - 1, Ptx));
}

int CodeKernelModel::rowOf(const QString& kernelId) const {
  for (int row = 0; row < rowCount(); ++row)
    if (QString::fromStdString(kernels_->kernels[size_t(row)].compiled.spec.id) == kernelId) return row;
  return -1;
}

int CodeKernelModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !kernels_ ? 0 : int(kernels_->kernels.size());
}

int CodeKernelModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString CodeKernelModel::ptxStatus(int row) const {
  if (!ptx_ || size_t(row) >= ptx_->status.size()) return "—";
  return ptx_->status[size_t(row)].isEmpty() ? tr("waiting") : ptx_->status[size_t(row)];
}

QVariant CodeKernelModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !kernels_ || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const KernelCode& k = kernels_->kernels[size_t(index.row())];
  const bool failed = !k.error.isEmpty();
  if (role == Qt::ToolTipRole) return failed ? k.error : !k.host.isEmpty() ? k.host : QString::fromStdString(k.cuda.entry);
  if (role == Qt::ForegroundRole && failed) return QColor(0xa0, 0x30, 0x20);
  if (role != Qt::DisplayRole) return {};
  switch (Column(index.column())) {
    case Id: return QString::fromStdString(k.compiled.spec.id);
    case Kind: return QString::fromStdString(k.compiled.spec.kind);
    case Entry:
      if (failed) return tr("✗ %1").arg(k.error.section('\n', 0, 0));
      return k.host.isEmpty() ? QString::fromStdString(k.cuda.entry) : tr("on the host");
    case Loops: return !k.hasSource() && k.loops == 0 ? QVariant() : QVariant(k.loops);
    case CudaLines: return !k.hasSource() ? QVariant() : QVariant(lineCount(k.cuda.body));
    case Ptx: return ptxStatus(index.row());
    case ColumnCount: break;
  }
  return {};
}

QVariant CodeKernelModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"kernel", "kind", "function", "loops", "CUDA lines", "PTX"};
  return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace tessera::ui
