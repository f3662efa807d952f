#include "ui/schedule/schedule_picture.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace tessera::ui {
namespace {
constexpr int64_t kMaxCells = 4096;  // beyond this the cells are too small to tell apart
const QColor kInk(0x30, 0x30, 0x30);

QString bytesText(int64_t b) {
  return b >= 1024 ? QObject::tr("%1 KiB").arg(double(b) / 1024, 0, 'f', 1) : QObject::tr("%1 B").arg(b);
}

// One usage bar: label, filled share, "used / limit" text; red past the limit.
void bar(QPainter& p, const QRectF& r, const QString& label, double used, double limit, const QString& text) {
  p.setPen(kInk);
  p.drawText(QRectF(r.left(), r.top(), 150, r.height()), Qt::AlignVCenter | Qt::AlignLeft, label);
  const QRectF track(r.left() + 150, r.top() + 3, r.width() - 330, r.height() - 6);
  p.setPen(QColor(0xaa, 0xaa, 0xaa));
  p.setBrush(QColor(0xf0, 0xf0, 0xf0));
  p.drawRect(track);
  const double f = limit > 0 ? std::min(1.0, used / limit) : 0;
  p.setBrush(used > limit ? QColor(0xc0, 0x1c, 0x1c) : QColor(0x5b, 0x84, 0xb1));
  p.setPen(Qt::NoPen);
  p.drawRect(QRectF(track.topLeft(), QSizeF(track.width() * f, track.height())));
  p.setPen(kInk);
  p.drawText(QRectF(track.right() + 8, r.top(), 172, r.height()), Qt::AlignVCenter | Qt::AlignLeft, text);
}
}  // namespace

QColor waveColor(int64_t wave) {
  static const QColor cycle[] = {QColor(0xd9, 0x5f, 0x0e), QColor(0x31, 0x82, 0xbd), QColor(0x31, 0xa3, 0x54),
                                 QColor(0x75, 0x6b, 0xb1), QColor(0xe6, 0xab, 0x02), QColor(0x63, 0x63, 0x63)};
  QColor c = cycle[wave % 6];
  return (wave / 6) % 2 ? c.lighter(140) : c;
}

SchedulePicture::SchedulePicture(QWidget* parent) : QWidget(parent) {
  setObjectName("schedulePicture");
  setMinimumSize(420, 320);
  setAutoFillBackground(true);
  setPalette(QPalette(QColor(0xfb, 0xfb, 0xf9)));
}

void SchedulePicture::setTiling(std::optional<TilingPicture> tiling) {
  tiling_ = std::move(tiling);
  message_.clear();
  if (tiling_ && (selected_.x() >= tiling_->gridX || selected_.y() >= tiling_->gridY)) selected_ = {0, 0};
  update();
}

void SchedulePicture::setMessage(const QString& message) {
  tiling_.reset();
  message_ = message;
  update();
}

int SchedulePicture::columns() const {
  const TilingPicture& t = *tiling_;
  if (t.gridY > 1) return int(t.gridX);
  // A 1-D grid: wrap into a block about twice as wide as tall.
  return int(std::max<int64_t>(1, int64_t(std::ceil(std::sqrt(2.0 * double(drawnCells()))))));
}

int64_t SchedulePicture::drawnCells() const { return std::min(tiling_->gridX * tiling_->gridY, kMaxCells); }

QPoint SchedulePicture::cellOf(int64_t index) const {
  if (tiling_->gridY > 1) return QPoint(int(index % tiling_->gridX), int(index / tiling_->gridX));
  return QPoint(int(index), 0);
}

void SchedulePicture::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(kInk);
  if (!tiling_) {
    p.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
               message_.isEmpty() ? tr("Select a node or a group to see its kernel's schedule") : message_);
    return;
  }
  const TilingPicture& t = *tiling_;
  QFont bold = font();
  bold.setBold(true);
  p.setFont(bold);
  p.drawText(QRectF(8, 4, width() - 16, 18), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1 · output %2 · grid %3×%4×%5 · block %6×%7×%8 threads")
                 .arg(t.templateName, t.outputShape).arg(t.gridX).arg(t.gridY).arg(t.gridZ).arg(t.blockX).arg(t.blockY).arg(t.blockZ));
  p.setFont(font());
  p.drawText(QRectF(8, 22, width() - 16, 18), Qt::AlignLeft | Qt::AlignVCenter,
             tr("%1 blocks · %2 per SM (limit: %3) × %4 SMs = %5 per wave → %n wave(s) on %6", nullptr, int(t.waves))
                 .arg(t.blocks).arg(t.blocksPerSm).arg(t.occupancyLimit).arg(t.smCount).arg(t.slotsPerWave).arg(t.deviceName));
  p.drawText(QRectF(8, 40, width() - 16, 18), Qt::AlignLeft | Qt::AlignVCenter, t.tileCaption);
  const double barsHeight = 3 * 20 + 24;
  QRectF area(8, 64, width() - 16, height() - 64 - barsHeight);
  if (!t.operands.empty()) {
    // gemm: A to the left of C, B above it, as the product is written.
    const double side = std::min(area.width(), area.height()) * 0.22;
    paintOperands(p, QRectF(area.left(), area.top() + side + 8, side, area.height() - side - 8),
                  QRectF(area.left() + side + 8, area.top(), area.width() - side - 8, side));
    area = QRectF(area.left() + side + 8, area.top() + side + 8, area.width() - side - 8, area.height() - side - 8);
  }
  paintGrid(p, area);
  paintBars(p, QRectF(8, height() - barsHeight + 4, width() - 16, barsHeight - 8));
}

void SchedulePicture::paintGrid(QPainter& p, const QRectF& area) {
  const TilingPicture& t = *tiling_;
  const int cols = columns();
  const int64_t cells = drawnCells();
  const int rows = int((cells + cols - 1) / cols);
  cell_ = std::max(1.0, std::min(area.width() / cols, (area.height() - 18) / rows));
  gridRect_ = QRectF(area.topLeft(), QSizeF(cell_ * cols, cell_ * rows));
  const double gap = cell_ >= 6 ? 1 : 0;
  p.setPen(Qt::NoPen);
  for (int64_t i = 0; i < cells; ++i) {
    const QPoint c = cellOf(i);
    const int drawX = int(i % cols), drawY = int(i / cols);
    p.setBrush(waveColor(t.waveOf(c.x(), c.y(), 0)));
    p.drawRect(QRectF(gridRect_.left() + drawX * cell_, gridRect_.top() + drawY * cell_, cell_ - gap, cell_ - gap));
  }
  // The selected block, outlined so it reads without colour.
  const int64_t sel = t.gridY > 1 ? int64_t(selected_.y()) * t.gridX + selected_.x() : selected_.x();
  if (sel < cells) {
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(Qt::black, 2.5));
    p.drawRect(QRectF(gridRect_.left() + double(sel % cols) * cell_, gridRect_.top() + double(sel / cols) * cell_, cell_ - gap, cell_ - gap));
  }
  p.setPen(kInk);
  QString note = tr("blocks coloured by wave (wave 1 darkest orange); selected: blockIdx (%1, %2)").arg(selected_.x()).arg(selected_.y());
  if (t.gridZ > 1) note += tr(" · first of %1 slices along blockIdx.z").arg(t.gridZ);
  if (t.gridX * t.gridY > cells) note += tr(" · first %1 of %2 blocks").arg(cells).arg(t.gridX * t.gridY);
  p.drawText(QRectF(gridRect_.left(), gridRect_.bottom() + 2, area.width(), 16), Qt::AlignLeft | Qt::AlignVCenter, note);
}

void SchedulePicture::paintOperands(QPainter& p, const QRectF& left, const QRectF& top) {
  const TilingPicture& t = *tiling_;
  if (t.operands.size() < 2) return;
  const OperandTile& a = t.operands[0];
  const OperandTile& b = t.operands[1];
  auto draw = [&](const OperandTile& o, QRectF r, int blockRow, int blockCol, bool vertical) {
    // Keep the operand's aspect within its strip.
    const double sx = r.width() / double(std::max<int64_t>(1, o.cols)), sy = r.height() / double(std::max<int64_t>(1, o.rows));
    const double s = std::min(sx, sy);
    r.setSize(QSizeF(o.cols * s, o.rows * s));
    p.setPen(QColor(0x99, 0x99, 0x99));
    p.setBrush(QColor(0xee, 0xee, 0xee));
    p.drawRect(r);
    // The stripe the selected block reads over the whole reduction, and its first step darker.
    const QRectF stripe = vertical ? QRectF(r.left(), r.top() + blockRow * o.tileRows * s, r.width(), o.tileRows * s)
                                   : QRectF(r.left() + blockCol * o.tileCols * s, r.top(), o.tileCols * s, r.height());
    p.setBrush(QColor(0xd9, 0x5f, 0x0e, 70));
    p.drawRect(stripe);
    p.setBrush(QColor(0xd9, 0x5f, 0x0e, 200));
    p.drawRect(QRectF(stripe.topLeft(), QSizeF(o.tileCols * s, o.tileRows * s)));
    p.setPen(kInk);
    p.drawText(QRectF(r.left(), r.bottom() + 1, vertical ? left.width() : std::max(r.width(), 200.0), 30),
               Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, o.caption);
  };
  draw(a, left.adjusted(0, 0, 0, -32), selected_.y(), 0, true);
  draw(b, top.adjusted(0, 0, 0, -18), 0, selected_.x(), false);
}

void SchedulePicture::paintBars(QPainter& p, const QRectF& area) {
  const TilingPicture& t = *tiling_;
  const double h = 20;
  bar(p, QRectF(area.left(), area.top(), area.width(), h), tr("shared memory / block"), double(t.sharedBytes),
      double(t.sharedLimit), tr("%1 of %2").arg(bytesText(t.sharedBytes), bytesText(t.sharedLimit)));
  bar(p, QRectF(area.left(), area.top() + h, area.width(), h), tr("registers / thread (est.)"), t.registersPerThread,
      t.registerLimit, tr("%1 of %2").arg(t.registersPerThread).arg(t.registerLimit));
  bar(p, QRectF(area.left(), area.top() + 2 * h, area.width(), h), tr("registers / block (est.)"), double(t.registersPerBlock),
      double(t.registersPerBlockLimit), tr("%1 of %2").arg(t.registersPerBlock).arg(t.registersPerBlockLimit));
  p.setPen(t.feasible ? kInk : QColor(0xc0, 0x1c, 0x1c));
  p.drawText(QRectF(area.left(), area.top() + 3 * h, area.width(), h), Qt::AlignLeft | Qt::AlignVCenter,
             t.feasible ? tr("cost model: %1").arg(t.estimate) : tr("cannot launch: %1").arg(t.infeasible));
}

void SchedulePicture::mousePressEvent(QMouseEvent* event) {
  if (!tiling_ || cell_ <= 0 || !gridRect_.contains(event->position())) return QWidget::mousePressEvent(event);
  const int cols = columns();
  const int64_t i = int64_t((event->position().y() - gridRect_.top()) / cell_) * cols +
                    int64_t((event->position().x() - gridRect_.left()) / cell_);
  if (i >= drawnCells()) return;
  selected_ = cellOf(i);
  update();
}

}  // namespace tessera::ui
