#include "ui/graph_items.h"

#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include "ui/palette.h"

namespace tessera::ui {
namespace {
// Below this scale text is unreadable; skipping it keeps a fitted 900-node graph fast to paint.
constexpr double kTextLod = 0.4;

QFont smallFont(bool bold) {
  QFont f;
  f.setPointSizeF(8.5);
  f.setBold(bold);
  return f;
}
}  // namespace

NodeItem::NodeItem(const LayoutNode& node) : node_(node) {
  setPos(node.box.topLeft());
  setFlag(ItemIsSelectable);
  setCacheMode(DeviceCoordinateCache);
  setToolTip(node.tooltip);
  setZValue(2);
}

QRectF NodeItem::boundingRect() const { return QRectF(-2, -2, node_.box.width() + 4, node_.box.height() + 4); }

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QRectF r(0, 0, node_.box.width(), node_.box.height());
  QColor fill = hueColor(node_.hue);
  if (node_.mark == NodeMark::Removed) fill.setAlpha(90);  // a ghost
  painter->setBrush(fill);
  painter->setPen(markPen(node_.mark, isSelected()));
  painter->drawRoundedRect(r, node_.isGroup ? 9 : 5, node_.isGroup ? 9 : 5);
  if (option->levelOfDetailFromTransform(painter->worldTransform()) < kTextLod) return;
  painter->setPen(node_.mark == NodeMark::Removed ? QColor(0x90, 0x30, 0x30) : QColor(0x20, 0x20, 0x20));
  const QRectF top(4, 2, r.width() - 8, r.height() / 2 - 1), bottom(4, r.height() / 2, r.width() - 8, r.height() / 2 - 2);
  painter->setFont(smallFont(true));
  painter->drawText(top, Qt::AlignCenter, painter->fontMetrics().elidedText(node_.title, Qt::ElideRight, int(top.width())));
  painter->setFont(smallFont(false));
  painter->drawText(bottom, Qt::AlignCenter,
                    painter->fontMetrics().elidedText(node_.subtitle, Qt::ElideMiddle, int(bottom.width())));
}

EdgeItem::EdgeItem(const LayoutEdge& edge) : edge_(edge) {
  QPainterPath path(edge.start);
  const double dy = std::max(12.0, (edge.end.y() - edge.start.y()) * 0.4);
  path.cubicTo(edge.start + QPointF(0, dy), edge.end - QPointF(0, dy), edge.end);
  setPath(path);
  setToolTip(edge.tooltip);
  setAcceptHoverEvents(true);
  setFlag(ItemIsSelectable);
  setZValue(1);
}

QPainterPath EdgeItem::shape() const {
  QPainterPathStroker stroker;
  stroker.setWidth(8);
  return stroker.createStroke(path());
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
  QPen pen(edge_.ghost ? QColor(0xd0, 0x30, 0x30, 150) : QColor(0x70, 0x70, 0x70), 1.0);
  if (edge_.ghost) pen.setStyle(Qt::DashLine);
  if (hovered_ || isSelected()) {
    pen.setColor(QColor(0x1a, 0x5f, 0xd0));
    pen.setWidthF(2.5);
  }
  pen.setCosmetic(true);
  painter->setPen(pen);
  painter->setBrush(Qt::NoBrush);
  painter->drawPath(path());
  // A small arrow head at the consumer.
  const QPointF e = edge_.end;
  painter->setBrush(pen.color());
  painter->drawPolygon(QPolygonF({e, e + QPointF(-3.5, -7), e + QPointF(3.5, -7)}));
}

void EdgeItem::hoverEnterEvent(QGraphicsSceneHoverEvent*) {
  hovered_ = true;
  update();
}

void EdgeItem::hoverLeaveEvent(QGraphicsSceneHoverEvent*) {
  hovered_ = false;
  update();
}

ClusterItem::ClusterItem(const LayoutCluster& cluster) : cluster_(cluster) {
  setPos(cluster.box.topLeft());
  setFlag(ItemIsSelectable);
  setCacheMode(DeviceCoordinateCache);
  setToolTip(cluster.label + (cluster.collapsed ? QObject::tr(" (collapsed)") : QString()));
  setZValue(0);
}

QRectF ClusterItem::boundingRect() const {
  return QRectF(-2, -2, cluster_.box.width() + 4, cluster_.box.height() + 4);
}

void ClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QRectF r(0, 0, cluster_.box.width(), cluster_.box.height());
  QColor tint = groupTint(cluster_.kind);
  QColor edge = tint;
  edge.setAlpha(isSelected() ? 255 : 150);
  painter->setBrush(tint);
  painter->setPen(QPen(edge, isSelected() ? 2.5 : 1.2));
  painter->drawRoundedRect(r, 12, 12);
  if (cluster_.collapsed || option->levelOfDetailFromTransform(painter->worldTransform()) < kTextLod) return;
  painter->setPen(QColor(0x30, 0x30, 0x30));
  painter->setFont(smallFont(true));
  painter->drawText(QRectF(8, 2, r.width() - 16, 16), Qt::AlignLeft | Qt::AlignVCenter, cluster_.label);
}

}  // namespace tessera::ui
