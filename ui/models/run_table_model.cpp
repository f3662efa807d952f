#include "ui/models/run_table_model.h"

#include <QBrush>
#include <QColor>

namespace tessera::ui {
namespace {
const QString kDash = QStringLiteral("—");

QString ms(double v) { return v < 0 ? kDash : QString::number(v, 'f', v < 0.1 ? 4 : 3); }
}  // namespace

void RunTableModel::setRuns(std::shared_ptr<const RunResult> current, std::shared_ptr<const RunResult> previous) {
  beginResetModel();
  run_ = std::move(current);
  previous_.clear();
  if (previous)
    for (const auto& k : previous->report.kernels)
      if (k.ms >= 0) previous_[kernelKey(k)] = k.ms;
  endResetModel();
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !run_ ? 0 : int(run_->report.kernels.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

double RunTableModel::previousMs(const execute::KernelReport& k) const {
  auto it = previous_.find(kernelKey(k));
  return it == previous_.end() ? -1 : it->second;
}

double RunTableModel::value(const execute::KernelReport& k, int column) const {
  const bool ran = k.ms >= 0;
  switch (column) {
    case Predicted: return k.predictedMs;
    case Measured: return k.ms;
    case Delta: return ran && previousMs(k) >= 0 ? k.ms - previousMs(k) : -1;
    case GBps: return ran ? k.gbps : -1;
    case GFlops: return ran ? k.gflops : -1;
    case Roofline: return rooflineShare(k, run_->peaks);
    case Verified: return k.verified ? 1 : 0;
    case MaxRelErr: return ran ? k.maxRelErr : -1;
    default: return -1;
  }
}

QVariant RunTableModel::display(const execute::KernelReport& k, int column) const {
  const double v = value(k, column);
  switch (column) {
    case Group: return QString::fromStdString(k.group);
    case Kind: {  // a host group says so first (its time is the reference interpreter's, on the host), and a
                  // kernel of constants (run once at load, not in the total)
      auto it = run_->kinds.find(k.group);
      QString kind = it == run_->kinds.end() ? QString() : QString::fromStdString(it->second);
      if (k.once) kind = kind.isEmpty() ? tr("once at load") : tr("once · %1").arg(kind);
      if (!k.onHost()) return kind;
      return kind.isEmpty() ? tr("host") : tr("host · %1").arg(kind);
    }
    case Predicted: case Measured: return ms(v);
    case Delta: {
      if (k.ms < 0 || previousMs(k) < 0) return kDash;
      const double pct = previousMs(k) > 0 ? 100 * v / previousMs(k) : 0;
      return QStringLiteral("%1%2 ms (%3%4%)").arg(v >= 0 ? "+" : "").arg(v, 0, 'f', 4).arg(pct >= 0 ? "+" : "").arg(pct, 0, 'f', 0);
    }
    case GBps: case GFlops: return v < 0 ? kDash : QString::number(v, 'f', 1);
    case Roofline: return v < 0 ? kDash : QStringLiteral("%1%").arg(100 * v, 0, 'f', 0);
    case Verified:
      if (k.verified) return k.precision.empty() ? QStringLiteral("✓") : QStringLiteral("✓ %1").arg(QString::fromStdString(k.precision));
      return QStringLiteral("✗ %1").arg(QString::fromStdString(execute::kernelStatusName(k.status)));
    case MaxRelErr: return v < 0 ? kDash : QString::number(v, 'g', 3);
    default: return {};
  }
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !run_ || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const execute::KernelReport& k = run_->report.kernels[size_t(index.row())];
  switch (role) {
    case Qt::DisplayRole: return display(k, index.column());
    case ValueRole: return index.column() <= Kind ? display(k, index.column()) : QVariant(value(k, index.column()));
    case Qt::ToolTipRole:
      if (index.column() == Kind && k.onHost()) return tr("runs on the host, %1").arg(QString::fromStdString(k.host));
      if (index.column() == Kind && k.once)
        return tr("every input is a constant: computed once when the model loads, its time not in the run's total");
      if (index.column() == Verified || !k.message.empty()) {
        const std::string& status = execute::kernelStatusName(k.status);
        QString text = QString::fromStdString(k.message.empty() ? status : status + ": " + k.message);
        if (!k.precision.empty()) text += tr(" (computed in %1, checked at its tolerance)").arg(QString::fromStdString(k.precision));
        return text;
      }
      if (index.column() == Roofline && run_->peaks.known())
        return tr("against %1 GB/s and %2 GFLOP/s (%3)").arg(run_->peaks.gbps).arg(run_->peaks.gflops).arg(run_->peaks.source);
      return {};
    case Qt::ForegroundRole:
      if (index.column() == Verified) return QBrush(k.verified ? QColor(0x1e, 0x7b, 0x34) : QColor(0xc0, 0x20, 0x20));
      if (index.column() == Delta && k.ms >= 0 && previousMs(k) >= 0)
        return QBrush(value(k, Delta) <= 0 ? QColor(0x1e, 0x7b, 0x34) : QColor(0xb0, 0x50, 0x10));
      return {};
    case Qt::TextAlignmentRole:
      return index.column() <= Kind ? QVariant(Qt::AlignLeft | Qt::AlignVCenter) : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default: return {};
  }
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  static const char* names[] = {"kernel", "kind", "predicted ms", "measured ms", "Δ previous", "GB/s",
                                "GFLOP/s", "roofline", "verified", "max rel err"};
  if (role == Qt::DisplayRole) return tr(names[section]);
  if (role == Qt::ToolTipRole && section == Predicted) return tr("The cost model's estimate (core/cost)");
  if (role == Qt::ToolTipRole && section == Roofline)
    return tr("Share of the roofline: the larger of GFLOP/s ÷ peak and GB/s ÷ bandwidth (the last-level cache's "
              "for a kernel whose buffers fit in it, DRAM's otherwise)");
  return {};
}

}  // namespace tessera::ui
