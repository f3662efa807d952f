#pragma once
// A bar per joined kernel of a comparison: B's time minus A's, faster to the left (green), slower to the right
// (red), each labelled with its groups and its delta.
#include <QWidget>
#include <vector>

#include "compare/compare.h"

namespace tessera::ui {

// "k1,k2", or "–" for none: how the chart and the compare table name a side's groups.
QString groupIds(const std::vector<std::string>& ids);

class DeltaChart : public QWidget {
  Q_OBJECT
 public:
  explicit DeltaChart(QWidget* parent = nullptr);
  void setDeltas(std::vector<compare::KernelDelta> deltas);
  const std::vector<compare::KernelDelta>& deltas() const { return deltas_; }
  QSize sizeHint() const override { return {360, 40 + 22 * int(deltas_.size())}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  std::vector<compare::KernelDelta> deltas_;
};

}  // namespace tessera::ui
