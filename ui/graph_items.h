#pragma once
// The items of the graph scene. Each keeps a pointer into the GraphLayout the view holds; painting is simple
// (one rounded rect, two lines of text skipped when too small to read) and cached per item.
#include <QGraphicsItem>
#include <QGraphicsPathItem>

#include "ui/graph_layout.h"

namespace tessera::ui {

enum ItemType { NodeItemType = QGraphicsItem::UserType + 1, EdgeItemType, ClusterItemType };

class NodeItem : public QGraphicsItem {
 public:
  explicit NodeItem(const LayoutNode& node);
  int type() const override { return NodeItemType; }
  QRectF boundingRect() const override;
  void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
  const LayoutNode& node() const { return node_; }

 private:
  const LayoutNode& node_;
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

 private:
  const LayoutCluster& cluster_;
};

}  // namespace tessera::ui
