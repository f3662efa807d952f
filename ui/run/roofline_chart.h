#pragma once
// The roofline (Qt Charts): arithmetic intensity (FLOP per byte) on a log x axis, GFLOP/s on a log y axis, the
// device's bandwidth slope and compute ceiling meeting at the ridge point, and each kernel as a labelled point.
// A point far below the roof is a kernel with room to improve; which side of the ridge says what bounds it.
#include <QChartView>
#include <memory>

#include "ui/models/run_result.h"

namespace tessera::ui {

class RooflineChart : public QChartView {
  Q_OBJECT
 public:
  explicit RooflineChart(QWidget* parent = nullptr);
  void setRun(std::shared_ptr<const RunResult> run);
  // Kernels drawn as points, and those left out (no FLOPs, or did not run), for tests and the caption.
  int pointCount() const { return points_; }
  int leftOut() const { return leftOut_; }

 private:
  int points_ = 0, leftOut_ = 0;
};

}  // namespace tessera::ui
