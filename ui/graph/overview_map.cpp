#include "ui/graph/overview_map.h"

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>

namespace tessera::ui {
namespace {
constexpr int kMaxWidth = 180, kMaxHeight = 260;
}

OverviewMap::OverviewMap(QGraphicsView* view) : QWidget(view), view_(view) {
  setObjectName("graphOverview");
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("Overview: click or drag to move the view"));
  hide();
  for (QScrollBar* bar : {view->horizontalScrollBar(), view->verticalScrollBar()}) {
    connect(bar, &QScrollBar::valueChanged, this, [this] { follow(); });
    connect(bar, &QScrollBar::rangeChanged, this, [this] { follow(); });
  }
}

void OverviewMap::refresh() {
  const QRectF scene = view_->sceneRect();
  if (scene.isEmpty()) {
    hide();
    return;
  }
  scale_ = std::min(kMaxWidth / scene.width(), kMaxHeight / scene.height());
  const QSize size(std::max(24, int(scene.width() * scale_)), std::max(24, int(scene.height() * scale_)));
  picture_ = QPixmap(size);
  picture_.fill(QColor(255, 255, 255, 235));
  QPainter painter(&picture_);
  painter.setRenderHint(QPainter::Antialiasing);
  view_->scene()->render(&painter, QRectF(QPointF(0, 0), QSizeF(scene.size() * scale_)), scene);
  offset_ = scene.topLeft();
  resize(size);
  follow();
}

void OverviewMap::follow() {
  if (picture_.isNull()) return;
  const QRectF visible = view_->mapToScene(view_->viewport()->rect()).boundingRect();
  const bool needed = !visible.contains(view_->sceneRect().adjusted(20, 20, -20, -20));
  setVisible(needed);
  move(view_->viewport()->width() - width() - 8, view_->viewport()->height() - height() - 8);
  update();
}

QRectF OverviewMap::shownRect() const {
  const QRectF visible = view_->mapToScene(view_->viewport()->rect()).boundingRect();
  return QRectF((visible.topLeft() - offset_) * scale_, visible.size() * scale_).intersected(QRectF(rect()));
}

QPointF OverviewMap::toScene(QPointF p) const { return p / scale_ + offset_; }

void OverviewMap::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.drawPixmap(0, 0, picture_);
  painter.setPen(QPen(QColor(0x1a, 0x5f, 0xd0), 1.5));
  painter.setBrush(QColor(0x1a, 0x5f, 0xd0, 30));
  painter.drawRect(shownRect());
  painter.setPen(QColor(0xaa, 0xaa, 0xaa));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(rect().adjusted(0, 0, -1, -1));
}

void OverviewMap::mousePressEvent(QMouseEvent* event) { view_->centerOn(toScene(event->position())); }

void OverviewMap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) view_->centerOn(toScene(event->position()));
}

}  // namespace tessera::ui
