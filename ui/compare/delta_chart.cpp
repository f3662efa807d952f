#include "ui/compare/delta_chart.h"

#include <QPainter>
#include <algorithm>
#include <cmath>

namespace tessera::ui {
QString groupIds(const std::vector<std::string>& ids) {
  QStringList l;
  for (const auto& id : ids) l << QString::fromStdString(id);
  return l.isEmpty() ? QStringLiteral("–") : l.join(',');
}

DeltaChart::DeltaChart(QWidget* parent) : QWidget(parent) {
  setObjectName("deltaChart");
  setMinimumHeight(80);
}

void DeltaChart::setDeltas(std::vector<compare::KernelDelta> deltas) {
  deltas_ = std::move(deltas);
  updateGeometry();
  update();
}

void DeltaChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (deltas_.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("Run both branches to see the per-kernel deltas"));
    return;
  }
  double most = 1e-9;
  for (const auto& d : deltas_) most = std::max(most, std::fabs(d.deltaMs()));
  const int labelW = 130, rowH = std::max(14, std::min(22, (height() - 20) / int(deltas_.size())));
  const int zero = labelW + (width() - labelW) / 2, half = (width() - labelW) / 2 - 60;
  p.setPen(palette().text().color());
  p.drawLine(zero, 4, zero, 8 + rowH * int(deltas_.size()));
  for (size_t i = 0; i < deltas_.size(); ++i) {
    const compare::KernelDelta& d = deltas_[i];
    const int y = 6 + int(i) * rowH;
    p.setPen(palette().text().color());
    p.drawText(QRect(4, y, labelW - 8, rowH), Qt::AlignVCenter | Qt::AlignLeft, groupIds(d.groups.a) + QStringLiteral(" → ") + groupIds(d.groups.b));
    if (d.msA < 0 || d.msB < 0) {
      p.drawText(QRect(zero + 4, y, half, rowH), Qt::AlignVCenter, tr("not run on both"));
      continue;
    }
    const int w = int(std::lround(half * std::fabs(d.deltaMs()) / most));
    const bool slower = d.deltaMs() > 0;
    const QRect bar(slower ? zero : zero - w, y + 3, std::max(w, 1), rowH - 6);
    p.fillRect(bar, slower ? QColor(0xc6, 0x4b, 0x3c) : QColor(0x4a, 0x9a, 0x5b));
    const QString text = QStringLiteral("%1%2 ms").arg(slower ? "+" : "").arg(d.deltaMs(), 0, 'f', 3);
    const QRect label = slower ? QRect(bar.right() + 4, y, 80, rowH) : QRect(bar.left() - 84, y, 80, rowH);
    p.drawText(label, Qt::AlignVCenter | (slower ? Qt::AlignLeft : Qt::AlignRight), text);
  }
}

}  // namespace tessera::ui
