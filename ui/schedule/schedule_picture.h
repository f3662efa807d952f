#pragma once
// The schedule picture (shared/UI.md): the output as a grid of block tiles coloured by the wave of SMs that
// runs them, one selected block (click to pick another) with the operand tiles it reads beside it, and bars
// for shared memory and registers against the device's limits, with grid and block sizes in the caption.
#include <QWidget>
#include <optional>

#include "ui/schedule/schedule_tiling.h"

namespace tessera::ui {

class SchedulePicture : public QWidget {
  Q_OBJECT
 public:
  explicit SchedulePicture(QWidget* parent = nullptr);
  void setTiling(std::optional<TilingPicture> tiling);  // nullopt: "no kernel selected"
  void setMessage(const QString& message);              // shown instead of a picture
  const std::optional<TilingPicture>& tiling() const { return tiling_; }
  // The block drawn as selected (blockIdx.x, blockIdx.y of the first z slice).
  QPoint selectedBlock() const { return selected_; }
  QSize sizeHint() const override { return {560, 420}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  // The grid's cells as drawn: a 1-D grid is wrapped into rows so it stays readable.
  int columns() const;
  int64_t drawnCells() const;
  void paintGrid(QPainter& p, const QRectF& area);
  void paintOperands(QPainter& p, const QRectF& left, const QRectF& top);
  void paintBars(QPainter& p, const QRectF& area);
  QPoint cellOf(int64_t index) const;  // (x, y) of the index-th drawn cell

  std::optional<TilingPicture> tiling_;
  QString message_;
  QPoint selected_{0, 0};
  QRectF gridRect_;
  double cell_ = 0;
};

// The colour of a wave: a cycle of distinct hues (wave 0 darkest), so neighbouring waves always differ.
QColor waveColor(int64_t wave);

}  // namespace tessera::ui
