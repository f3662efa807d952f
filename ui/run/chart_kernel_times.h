#pragma once
// Per-kernel time as horizontal bars (Qt Charts): the measured median of this run, and beside it the previous
// run's and the cost model's prediction when there are any, so a change or a misprediction stands out.
#include <QChartView>
#include <memory>

#include "ui/models/run_result.h"

namespace tessera::ui {

class KernelTimesChart : public QChartView {
  Q_OBJECT
 public:
  explicit KernelTimesChart(QWidget* parent = nullptr);
  void setRuns(std::shared_ptr<const RunResult> current, std::shared_ptr<const RunResult> previous);
  // The bar sets drawn ("measured", "previous", "predicted"), for tests.
  QStringList setNames() const;
};

}  // namespace tessera::ui
