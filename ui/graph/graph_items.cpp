#include "ui/graph/graph_items.h"

#include <QPainter>
#include <algorithm>
#include <cmath>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include "ui/graph/palette.h"

namespace tessera::ui {
namespace {
// Below this scale text is unreadable; skipping it keeps a fitted 900-node graph fast to paint.
constexpr double kTextLod = 0.4;
// A collapsed layer's name stays readable further out: far away the picture is its layers (semantic zoom).
constexpr double kLayerTextLod = 0.15;

QFont smallFont(bool bold) {
  QFont f;
  f.setPointSizeF(8.5);
  f.setBold(bold);
  return f;
}

constexpr double kBadgeHeight = 15;

// One sequential scale (light sand to burnt orange) for the share of total time.
QColor shareColor(double share) {
  const double t = std::clamp(share, 0.0, 1.0);
  const QColor lo(0xfd, 0xf1, 0xdc), hi(0xd9, 0x5f, 0x0e);
  auto mix = [t](int a, int b) { return int(a + (b - a) * t); };
  return QColor(mix(lo.red(), hi.red()), mix(lo.green(), hi.green()), mix(lo.blue(), hi.blue()), 200);
}

const QColor kFailRed(0xc0, 0x1c, 0x1c);
const QColor kSpotlight(0xf2, 0xa9, 0x00, 220);  // amber: the lessons' spotlight

// The badge straddling the bottom edge of `r`: time, roofline, verdict; a failed verdict is white on red.
void paintTimingBadge(QPainter* painter, const QRectF& r, const GroupTiming& t) {
  painter->setFont(smallFont(true));
  const QString text = t.text();
  const double w = std::min(r.width() + 40, painter->fontMetrics().horizontalAdvance(text) + 12.0);
  const QRectF badge(r.center().x() - w / 2, r.bottom() - kBadgeHeight / 2, w, kBadgeHeight);
  painter->setPen(QPen(t.verified ? QColor(0x80, 0x50, 0x20) : kFailRed, 1));
  painter->setBrush(t.verified ? QColor(255, 255, 255, 235) : kFailRed);
  painter->drawRoundedRect(badge, 7, 7);
  painter->setPen(t.verified ? QColor(0x30, 0x20, 0x10) : Qt::white);
  painter->drawText(badge, Qt::AlignCenter, painter->fontMetrics().elidedText(text, Qt::ElideMiddle, int(w - 6)));
}
}  // namespace

QString GroupTiming::text() const {
  if (relError >= 0) return QObject::tr("rel err %1").arg(relError, 0, 'e', 1) + (verified ? QStringLiteral(" · ✓") : QStringLiteral(" · ✗"));
  QString time = ms < 0 ? QObject::tr("not run") : ms < 1 ? QObject::tr("%1 µs").arg(ms * 1000, 0, 'f', ms < 0.01 ? 1 : 0)
                                                          : QObject::tr("%1 ms").arg(ms, 0, 'f', 2);
  QString s = time;
  if (roofline >= 0) s += QObject::tr(" · %1% of roofline").arg(100 * roofline, 0, 'f', 0);
  return s + (verified ? QStringLiteral(" · ✓") : QStringLiteral(" · ✗"));
}

NodeItem::NodeItem(const LayoutNode& node) : node_(node) {
  setPos(node.box.topLeft());
  setFlag(ItemIsSelectable);
  setCacheMode(DeviceCoordinateCache);
  setToolTip(node.tooltip);
  setZValue(2);
}

// The spotlight's halo: this far outside the node's box, this wide.
constexpr double kHaloGap = 6, kHaloWidth = 5;

QRectF NodeItem::boundingRect() const {
  const double extra = timing_ ? kBadgeHeight / 2 + 40 : 0;
  const QRectF box(-2 - extra, -2, node_.box.width() + 4 + 2 * extra, node_.box.height() + 4 + extra);
  const double halo = spotlit_ ? kHaloGap + kHaloWidth : 0;
  return box.adjusted(-halo, -halo, halo, halo);
}

void NodeItem::setSpotlit(bool on) {
  if (on == spotlit_) return;
  prepareGeometryChange();
  spotlit_ = on;
  setZValue(on ? 3 : 2);  // above its neighbours, so the halo is not hidden under them
  update();
}

void NodeItem::setTiming(const GroupTiming* timing) {
  prepareGeometryChange();
  timing_ = timing ? std::optional<GroupTiming>(*timing) : std::nullopt;
  update();
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QRectF r(0, 0, node_.box.width(), node_.box.height());
  QColor fill = timing_ ? shareColor(timing_->share) : hueColor(node_.hue);
  if (node_.mark == NodeMark::Removed) fill.setAlpha(90);  // a ghost
  const bool layer = !node_.layer.isEmpty();
  if (spotlit_) {
    painter->setPen(QPen(kSpotlight, kHaloWidth));
    painter->setBrush(Qt::NoBrush);
    painter->drawRoundedRect(r.adjusted(-kHaloGap, -kHaloGap, kHaloGap, kHaloGap), 10, 10);
  }
  painter->setPen(markPen(node_.mark, isSelected()));
  if (layer) {  // a collapsed layer: a stack of cards
    painter->setBrush(fill.lighter(108));
    painter->drawRoundedRect(r.adjusted(4, -4, 4, -4).intersected(QRectF(-2, -4, r.width() + 6, r.height())), 7, 7);
  }
  painter->setBrush(fill);
  painter->drawRoundedRect(r, node_.isGroup || layer ? 9 : 5, node_.isGroup || layer ? 9 : 5);
  const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
  if (layer && lod >= kLayerTextLod && lod < kTextLod) {
    QFont big = smallFont(true);
    big.setPointSizeF(8.5 * std::min(2.5, kTextLod / lod));
    painter->setFont(big);
    painter->setPen(QColor(0x20, 0x20, 0x20));
    painter->drawText(r.adjusted(4, 0, -4, 0), Qt::AlignCenter, painter->fontMetrics().elidedText(node_.title, Qt::ElideRight, int(r.width() - 8)));
  }
  if (lod < kTextLod) return;
  painter->setPen(node_.mark == NodeMark::Removed ? QColor(0x90, 0x30, 0x30) : QColor(0x20, 0x20, 0x20));
  const QRectF top(4, 2, r.width() - 8, r.height() / 2 - 1), bottom(4, r.height() / 2, r.width() - 8, r.height() / 2 - 2);
  painter->setFont(smallFont(true));
  painter->drawText(top, Qt::AlignCenter, painter->fontMetrics().elidedText(node_.title, Qt::ElideRight, int(top.width())));
  painter->setFont(smallFont(false));
  painter->drawText(bottom, Qt::AlignCenter,
                    painter->fontMetrics().elidedText(node_.subtitle, Qt::ElideMiddle, int(bottom.width())));
  if (timing_) paintTimingBadge(painter, r, *timing_);
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
  // A merged edge between layers is wider by how many values it stands for (1, 2-3, 4-7, 8 and more).
  const double width = 1.0 + std::min(3.0, std::floor(std::log2(double(std::max(1, edge_.count)))));
  QPen pen(edge_.ghost ? QColor(0xd0, 0x30, 0x30, 150) : QColor(0x70, 0x70, 0x70), width);
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
  setToolTip(cluster.layer.isEmpty() ? cluster.label + (cluster.collapsed ? QObject::tr(" (collapsed)") : QString())
                                     : cluster.layer + "\n" + QObject::tr("double-click to close"));
  setZValue(cluster.layer.isEmpty() ? 0 : -1);
}

QRectF ClusterItem::boundingRect() const {
  const double extra = timing_ ? kBadgeHeight / 2 + 40 : 0;
  return QRectF(-2 - extra, -2, cluster_.box.width() + 4 + 2 * extra, cluster_.box.height() + 4 + extra);
}

void ClusterItem::setTiming(const GroupTiming* timing) {
  prepareGeometryChange();
  timing_ = timing ? std::optional<GroupTiming>(*timing) : std::nullopt;
  update();
}

void ClusterItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
  const QRectF r(0, 0, cluster_.box.width(), cluster_.box.height());
  if (!cluster_.layer.isEmpty()) {  // an open layer: a quiet frame, so fusion hulls inside stay the tinted ones
    painter->setBrush(QColor(0x80, 0x80, 0x70, 18));
    painter->setPen(QPen(QColor(0x70, 0x70, 0x68, isSelected() ? 255 : 160), isSelected() ? 2.0 : 1.0, Qt::DashLine));
    painter->drawRoundedRect(r, 8, 8);
    if (timing_) paintTimingBadge(painter, r, *timing_);
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < kLayerTextLod) return;
    painter->setPen(QColor(0x40, 0x40, 0x38));
    painter->setFont(smallFont(true));
    painter->drawText(QRectF(8, 3, r.width() - 16, 16), Qt::AlignLeft | Qt::AlignVCenter, cluster_.label);
    return;
  }
  QColor tint = timing_ ? shareColor(timing_->share) : groupTint(cluster_.kind);
  QColor edge = timing_ && !timing_->verified ? kFailRed : tint.darker(timing_ ? 130 : 100);
  edge.setAlpha(isSelected() || timing_ ? 255 : 150);
  painter->setBrush(tint);
  painter->setPen(QPen(edge, isSelected() || (timing_ && !timing_->verified) ? 2.5 : 1.2));
  painter->drawRoundedRect(r, 12, 12);
  if (cluster_.collapsed) return;
  if (timing_) paintTimingBadge(painter, r, *timing_);  // drawn at every zoom: the overlay is the point
  if (option->levelOfDetailFromTransform(painter->worldTransform()) < kTextLod) return;
  painter->setPen(QColor(0x30, 0x30, 0x30));
  painter->setFont(smallFont(true));
  painter->drawText(QRectF(8, 2, r.width() - 16, 16), Qt::AlignLeft | Qt::AlignVCenter, cluster_.label);
}

}  // namespace tessera::ui
