#pragma once
// The items of the graph scene. Each keeps a pointer into the GraphLayout the view holds; painting is simple
// (one rounded rect, two lines of text skipped when too small to read) and cached per item.
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <optional>

#include "ui/graph/graph_layout.h"

namespace tessera::ui {

enum ItemType { NodeItemType = QGraphicsItem::UserType + 1, EdgeItemType, ClusterItemType };

// The timing overlay of one group after a run (shared/UI.md): its fill on one sequential scale by its share of
// the total, and a badge with its time, share of the roofline and verdict. A failed verification stays red.
struct GroupTiming {
  double ms = -1;        // measured median; -1: did not run
  double share = 0;      // of the run's total time, 0..1
  double roofline = -1;  // share of the roofline, -1 when unknown
  bool verified = false;
  double relError = -1;  // the accuracy overlay: the group's worst relative error against the reference
  QString text() const;  // "182 µs · 91% of roofline · ✓"; with relError: "rel err 3.1e-06 · ✓"
};

class NodeItem : public QGraphicsItem {
 public:
  explicit NodeItem(const LayoutNode& node);
  int type() const override { return NodeItemType; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  const LayoutNode& node() const { return node_; }
  // A collapsed group shows the overlay of its group (null: none).
  void setTiming(const GroupTiming* timing);
  QString timingText() const { return timing_ ? timing_->text() : QString(); }
  // A lesson's spotlight (GraphView::setSpotlight): a wide halo around the node, seen from the back of a room.
  void setSpotlit(bool on);
  bool spotlit() const { return spotlit_; }

 private:
  const LayoutNode& node_;
  std::optional<GroupTiming> timing_;
  bool spotlit_ = false;
};

class EdgeItem : public QGraphicsPathItem {
 public:
  explicit EdgeItem(const LayoutEdge& edge);
  int type() const override { return EdgeItemType; }
  QPainterPath shape() const override;  // wider than the line, so it is easy to hover and right-click
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  const LayoutEdge& edge() const { return edge_; }

 protected:
  void hoverEnterEvent(QGraphicsSceneHoverEvent* event) override;
  void hoverLeaveEvent(QGraphicsSceneHoverEvent* event) override;

 private:
  const LayoutEdge& edge_;
  bool hovered_ = false;
};

class ClusterItem : public QGraphicsItem {
 public:
  explicit ClusterItem(const LayoutCluster& cluster);
  int type() const override { return ClusterItemType; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  const LayoutCluster& cluster() const { return cluster_; }
  void setTiming(const GroupTiming* timing);  // null: no overlay
  QString timingText() const { return timing_ ? timing_->text() : QString(); }

 private:
  const LayoutCluster& cluster_;
  std::optional<GroupTiming> timing_;
};

}  // namespace tessera::ui
