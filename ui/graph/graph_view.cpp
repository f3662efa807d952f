#include "ui/graph/graph_view.h"

#include <QContextMenuEvent>
#include <QElapsedTimer>
#include <QLabel>
#include <QImage>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>

#include "ui/graph/graph_items.h"
#include "ui/graph/overview_map.h"
#include "ui/graph/palette.h"

namespace tessera::ui {

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent), scene_(new QGraphicsScene(this)), runner_(new LayoutRunner(this)), legend_(new QLabel(this)),
      crumbs_(new QLabel(this)), overview_(new OverviewMap(this)) {
  setObjectName("graphView");
  setScene(scene_);
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(ScrollHandDrag);
  setTransformationAnchor(AnchorUnderMouse);
  setViewportUpdateMode(SmartViewportUpdate);
  setBackgroundBrush(QColor(0xfb, 0xfb, 0xf9));
  scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  legend_->setObjectName("graphLegend");
  legend_->setText(legendHtml());
  legend_->setStyleSheet("QLabel { background: rgba(255,255,255,220); border: 1px solid #ccc; padding: 4px; font-size: 8pt; }");
  legend_->move(8, 8);
  legend_->adjustSize();
  crumbs_->setObjectName("graphBreadcrumbs");
  crumbs_->setStyleSheet("QLabel { background: rgba(255,255,255,230); border: 1px solid #ccc; padding: 3px 6px; }");
  crumbs_->hide();
  connect(crumbs_, &QLabel::linkActivated, this, [this](const QString& path) {
    if (path.isEmpty()) openToDepth(0);
    else setLayerOpen(path, false);
  });
  connect(runner_, &LayoutRunner::layoutReady, this, &GraphView::acceptLayout);
  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
}

GraphView::~GraphView() { runner_->waitForDone(); }

void GraphView::showStep(StepPicture step) {
  step_ = std::move(step);
  step_.collapsed = collapsed_;
  if (fitOnNextLayout_) openChosen_ = false;  // a new model opens at the depth that fits
  relayout();
}

void GraphView::relayout() {
  step_.open = open_;
  step_.openSet = openChosen_;
  if (step_.graph) runner_->request(step_);
}

void GraphView::setGroupCollapsed(const QString& group, bool collapsed) {
  if (collapsed) collapsed_.insert(group);
  else collapsed_.erase(group);
  step_.collapsed = collapsed_;
  relayout();
}

void GraphView::acceptLayout(quint64, std::shared_ptr<const GraphLayout> layout) {
  // Keep the selected node selected across steps when it still exists.
  QString selected;
  for (QGraphicsItem* item : scene_->selectedItems())
    if (item->type() == NodeItemType) selected = static_cast<NodeItem*>(item)->node().id;
  layout_ = std::move(layout);
  if (layers()) {
    open_ = layout_->open;
    openChosen_ = true;
  }
  QElapsedTimer timer;
  timer.start();
  buildScene();
  if (fitOnNextLayout_) showReadable();
  fitOnNextLayout_ = false;
  if (!pendingSelect_.isEmpty()) {
    selectNode(std::exchange(pendingSelect_, QString()), pendingCentre_);
  } else if (!selected.isEmpty()) {
    selectDrawn(selected, false);  // a node a closed layer now hides stays hidden
  }
  updateBreadcrumbs();
  sceneMs_ = double(timer.nsecsElapsed()) / 1e6;
  emit layoutShown(layout_->layoutMs, sceneMs_);
}

void GraphView::buildScene() {
  syncing_ = true;
  scene_->clear();
  const GraphLayout& l = *layout_;
  for (const LayoutCluster& c : l.clusters) scene_->addItem(new ClusterItem(c));
  for (const LayoutEdge& e : l.edges) scene_->addItem(new EdgeItem(e));
  for (const LayoutNode& n : l.nodes) scene_->addItem(new NodeItem(n));
  scene_->setSceneRect(l.bounds.adjusted(-40, -40, 40, 40));
  applyOverlay();
  setSpotlight(spotlight_);
  overview_->refresh();
  syncing_ = false;
}

void GraphView::setTimeOverlay(std::map<QString, GroupTiming> overlay) {
  overlay_ = std::move(overlay);
  applyOverlay();
}

void GraphView::applyOverlay() {
  auto find = [this](const QString& group) {
    auto it = overlay_.find(group);
    return it == overlay_.end() ? nullptr : &it->second;
  };
  for (QGraphicsItem* item : scene_->items()) {
    if (item->type() == ClusterItemType) {
      auto* c = static_cast<ClusterItem*>(item);
      c->setTiming(find(c->cluster().id));
    } else if (item->type() == NodeItemType && static_cast<NodeItem*>(item)->node().isGroup) {
      auto* n = static_cast<NodeItem*>(item);
      n->setTiming(find(n->node().id));
    }
  }
  if (layers()) applyLayerOverlay();
}

void GraphView::setSpotlight(const QStringList& nodeIds) {
  spotlight_ = nodeIds;
  for (QGraphicsItem* item : scene_->items())
    if (item->type() == NodeItemType) {
      auto* n = static_cast<NodeItem*>(item);
      n->setSpotlit(spotlight_.contains(n->node().id));
    }
}

QStringList GraphView::spotlitDrawn() const {
  QStringList out;
  for (QGraphicsItem* item : scene_->items())
    if (item->type() == NodeItemType && static_cast<NodeItem*>(item)->spotlit()) out << static_cast<NodeItem*>(item)->node().id;
  return out;
}

std::map<QString, QString> GraphView::overlayTexts() const {
  std::map<QString, QString> out;
  for (QGraphicsItem* item : scene_->items()) {
    if (item->type() == ClusterItemType && !static_cast<ClusterItem*>(item)->timingText().isEmpty())
      out[static_cast<ClusterItem*>(item)->cluster().id] = static_cast<ClusterItem*>(item)->timingText();
    if (item->type() == NodeItemType && !static_cast<NodeItem*>(item)->timingText().isEmpty())
      out[static_cast<NodeItem*>(item)->node().id] = static_cast<NodeItem*>(item)->timingText();
  }
  return out;
}

void GraphView::fit() {
  if (scene_->items().isEmpty()) return;
  fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
  // Never blow a tiny graph up past its natural size.
  if (transform().m11() > 1.0) setTransform(QTransform());
}

void GraphView::zoomBy(double factor) {
  const double scale = transform().m11() * factor;
  if (scale < 0.02 || scale > 8) return;
  this->scale(factor, factor);
}

void GraphView::wheelEvent(QWheelEvent* event) {
  zoomBy(event->angleDelta().y() > 0 ? 1.15 : 1 / 1.15);
  event->accept();
}

bool GraphView::selectNode(const QString& id, bool centre) { return selectDrawn(id, centre) || revealNode(id, centre); }

bool GraphView::selectDrawn(const QString& id, bool centre) {
  for (QGraphicsItem* item : scene_->items()) {
    if (item->type() != NodeItemType) continue;
    const LayoutNode& n = static_cast<NodeItem*>(item)->node();
    if (n.id != id) continue;
    syncing_ = true;
    scene_->clearSelection();
    item->setSelected(true);
    syncing_ = false;
    if (centre) centerOn(item);
    return true;
  }
  return false;
}

bool GraphView::search(const QString& text) {
  if (!layout_ || text.isEmpty()) return false;
  if (layers()) return searchLayers(text);
  if (text != lastSearch_) searchCursor_ = -1;
  lastSearch_ = text;
  const auto& nodes = layout_->nodes;
  for (size_t k = 1; k <= nodes.size(); ++k) {
    const size_t i = (size_t(searchCursor_ + 1) + k - 1) % nodes.size();
    const LayoutNode& n = nodes[i];
    if (!n.id.contains(text, Qt::CaseInsensitive) && !n.title.contains(text, Qt::CaseInsensitive)) continue;
    searchCursor_ = int(i);
    if (selectNode(n.id, true)) {
      if (transform().m11() < 0.6) {  // make the found node readable
        setTransform(QTransform::fromScale(0.9, 0.9));
        centerOn(n.box.center());
      }
      emit nodeClicked(n.id);
      return true;
    }
  }
  return false;
}

void GraphView::onSelectionChanged() {
  if (syncing_) return;
  const auto items = scene_->selectedItems();
  if (items.isEmpty()) return;
  QGraphicsItem* item = items.front();
  updateBreadcrumbs();
  if (item->type() == NodeItemType) {
    const LayoutNode& n = static_cast<NodeItem*>(item)->node();
    if (!n.layer.isEmpty()) return;  // a collapsed layer is no node of the graph
    if (n.isGroup) emit groupClicked(n.id);
    else emit nodeClicked(n.id);
  } else if (item->type() == EdgeItemType) {
    const LayoutEdge& e = static_cast<EdgeItem*>(item)->edge();
    emit valueClicked(e.value, e.producerId, e.consumerId);
  } else if (item->type() == ClusterItemType && static_cast<ClusterItem*>(item)->cluster().layer.isEmpty()) {
    emit groupClicked(static_cast<ClusterItem*>(item)->cluster().id);
  }
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
  QGraphicsItem* item = itemAt(event->pos());
  if (item && item->type() == NodeItemType && !static_cast<NodeItem*>(item)->node().layer.isEmpty()) {
    setLayerOpen(static_cast<NodeItem*>(item)->node().layer, true);
    return;
  }
  if (item && item->type() == ClusterItemType && !static_cast<ClusterItem*>(item)->cluster().layer.isEmpty()) {
    setLayerOpen(static_cast<ClusterItem*>(item)->cluster().layer, false);
    return;
  }
  if (item && item->type() == ClusterItemType) {
    setGroupCollapsed(static_cast<ClusterItem*>(item)->cluster().id, true);
    return;
  }
  if (item && item->type() == NodeItemType && static_cast<NodeItem*>(item)->node().isGroup) {
    setGroupCollapsed(static_cast<NodeItem*>(item)->node().id, false);
    return;
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphView::contextMenuEvent(QContextMenuEvent* event) {
  QGraphicsItem* item = itemAt(event->pos());
  if (!item) return;
  QMenu menu(this);
  fillContextMenu(item, menu);
  if (!menu.isEmpty()) menu.exec(event->globalPos());
}

void GraphView::fillContextMenu(QGraphicsItem* item, QMenu& menu) {
  QString layer;
  if (item->type() == NodeItemType) layer = static_cast<NodeItem*>(item)->node().layer;
  if (item->type() == ClusterItemType) layer = static_cast<ClusterItem*>(item)->cluster().layer;
  if (!layer.isEmpty()) {
    const bool open = item->type() == ClusterItemType;
    menu.addAction(open ? tr("Close %1").arg(layer) : tr("Open %1").arg(layer), this,
                   [this, layer, open] { setLayerOpen(layer, !open); });
    return;
  }
  if (item->type() == EdgeItemType) {
    const LayoutEdge e = static_cast<EdgeItem*>(item)->edge();
    const QString pair = e.producerId + " → " + e.consumerId;
    Override force{OverrideKind::ForceFuse, e.producerId.toStdString(), e.consumerId.toStdString(), {}, {}};
    Override forbid{OverrideKind::ForbidFuse, e.producerId.toStdString(), e.consumerId.toStdString(), {}, {}};
    menu.addAction(tr("Force fuse %1").arg(pair), this, [this, force, pair] { emit overrideRequested(force, tr("Force fuse %1").arg(pair)); });
    menu.addAction(tr("Forbid fuse %1").arg(pair), this, [this, forbid, pair] { emit overrideRequested(forbid, tr("Forbid fuse %1").arg(pair)); });
  } else {
    QString group;
    QString anchor;  // a node id in the group: stable across compiles
    if (item->type() == ClusterItemType) {
      const LayoutCluster& c = static_cast<ClusterItem*>(item)->cluster();
      group = c.id;
      if (!c.members.empty()) anchor = layout_->nodes[size_t(c.members.front())].id;
    } else if (item->type() == NodeItemType) {
      const LayoutNode& n = static_cast<NodeItem*>(item)->node();
      group = n.group;
      anchor = n.isGroup ? QString() : n.id;
    }
    if (group.isEmpty()) return;
    Override split{OverrideKind::Split, {}, {}, (anchor.isEmpty() ? group : anchor).toStdString(), {}};
    menu.addAction(tr("Split %1").arg(group), this, [this, split, group] { emit overrideRequested(split, tr("Split %1").arg(group)); });
    const bool collapsed = isCollapsed(group);
    menu.addAction(collapsed ? tr("Expand %1").arg(group) : tr("Collapse %1").arg(group), this,
                   [this, group, collapsed] { setGroupCollapsed(group, !collapsed); });
  }
}

}  // namespace tessera::ui

namespace tessera::ui {

QImage GraphView::renderWhole(QSize limit) const {
  QRectF source = scene_->sceneRect();
  if (source.isEmpty()) return {};
  // The legend goes to the left of the graph, never over it.
  const int left = legend_->width() + 16;
  double scale = std::min({1.25, (limit.width() - left) / source.width(), limit.height() / source.height()});
  if (scale < 0.4) source = readableCrop(QSizeF(limit.width() - left, limit.height()), scale);
  const QSizeF drawn = source.size() * scale;
  QImage image(QSize(left + int(drawn.width()), std::max(int(drawn.height()), legend_->height() + 16)), QImage::Format_ARGB32);
  image.fill(QColor(0xfb, 0xfb, 0xf9));
  QPainter painter(&image);
  painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  scene_->render(&painter, QRectF(QPointF(left, 0), drawn), source);
  legend_->render(&painter, QPoint(8, 8));
  return image;
}

}  // namespace tessera::ui

namespace tessera::ui {

// Where the whole graph would be a strip of unreadable boxes, the part of it around the selection (else the
// inputs at the top) at 90%, as the window shows it: `scale` becomes 0.9.
QRectF GraphView::readableCrop(QSizeF limit, double& scale) const {
  const QRectF all = scene_->sceneRect();
  scale = 0.9;
  const QSizeF want(std::min(all.width(), limit.width() / scale), std::min(all.height(), limit.height() / scale));
  QPointF focus(all.center().x(), all.top() + want.height() / 2);
  for (QGraphicsItem* item : scene_->selectedItems()) focus = item->sceneBoundingRect().center();
  QRectF crop(focus - QPointF(want.width() / 2, want.height() / 2), want);
  crop.moveLeft(std::clamp(crop.left(), all.left(), all.right() - want.width()));
  crop.moveTop(std::clamp(crop.top(), all.top(), all.bottom() - want.height()));
  return crop;
}

}  // namespace tessera::ui
