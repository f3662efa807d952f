// GraphView's layers: opening and closing, revealing what search and selection find, the time overlay summed
// over collapsed layers, the readable first zoom and the breadcrumbs.
#include <QKeyEvent>
#include <QLabel>
#include <QScrollBar>
#include <algorithm>

#include "ui/graph/graph_view.h"
#include "ui/graph/overview_map.h"

namespace tessera::ui {

void GraphView::setOpenLayers(OpenLayers open) {
  open_ = std::move(open);
  openChosen_ = true;
  relayout();
}

void GraphView::setLayerOpen(const QString& path, bool open) {
  const LayerTree* tree = layers();
  const int layer = tree ? tree->find(path.toStdString()) : -1;
  if (layer <= 0) return;
  setOpenLayers(open ? openLayer(*tree, open_, layer) : closeLayer(*tree, open_, layer));
}

void GraphView::openToDepth(int depth) {
  if (const LayerTree* tree = layers()) setOpenLayers(tessera::openToDepth(*tree, depth));
}

bool GraphView::revealNode(const QString& id, bool centre) {
  const LayerTree* tree = layers();
  const int node = tree ? tree->nodeIndex(id.toStdString()) : -1;
  if (node < 0) return false;
  OpenLayers open = reveal(*tree, open_, node);
  if (open == open_) return false;  // drawn already, or not in this picture
  pendingSelect_ = id;
  pendingCentre_ = centre;
  setOpenLayers(std::move(open));
  return true;
}

// The next node (in topological order, after the last hit) whose id or op contains the text, opening the
// layers around it; layers whose name matches count as hits too (the layer is shown opened).
bool GraphView::searchLayers(const QString& text) {
  const LayerTree& tree = *layers();
  if (text != lastSearch_) searchCursor_ = -1;
  lastSearch_ = text;
  const auto& ids = tree.nodeIds();
  const std::string needle = text.toStdString();
  for (size_t k = 1; k <= ids.size(); ++k) {
    const size_t i = (size_t(searchCursor_ + 1) + k - 1) % ids.size();
    const Node* n = step_.graph->findNode(ids[i]);
    const QString id = QString::fromStdString(ids[i]);
    if (!id.contains(text, Qt::CaseInsensitive) && !QString::fromStdString(n->op()).contains(text, Qt::CaseInsensitive))
      continue;
    searchCursor_ = int(i);
    if (!selectNode(id, true)) return false;
    if (pendingSelect_.isEmpty() && transform().m11() < 0.6) {  // drawn already: make it readable
      setTransform(QTransform::fromScale(0.9, 0.9));
      for (QGraphicsItem* item : scene_->selectedItems()) centerOn(item);
    }
    emit nodeClicked(id);
    return true;
  }
  for (int l : tree.findByName(needle)) {
    setOpenLayers(openLayer(tree, open_, l));
    return true;
  }
  return false;
}

std::map<QString, GroupTiming> GraphView::layerTimes() const {
  std::map<QString, GroupTiming> out;
  const LayerTree* tree = layers();
  if (!tree || overlay_.empty() || !step_.fusion) return out;
  std::vector<double> ms(tree->nodeIds().size(), 0), share(ms.size(), 0);
  std::vector<double> failed(ms.size(), 0);
  for (const FusedGroup& g : step_.fusion->groups) {
    auto it = overlay_.find(QString::fromStdString(g.id));
    if (it == overlay_.end() || it->second.ms < 0 || g.nodes.empty()) continue;
    for (const GroupNode& gn : g.nodes)
      if (int n = tree->nodeIndex(gn.id); n >= 0) {
        ms[size_t(n)] = it->second.ms / double(g.nodes.size());
        share[size_t(n)] = it->second.share / double(g.nodes.size());
        failed[size_t(n)] = it->second.verified ? 0 : 1;
      }
  }
  const std::vector<double> msSum = tree->sums(ms), shareSum = tree->sums(share), failedSum = tree->sums(failed);
  for (size_t l = 1; l < tree->layers().size(); ++l) {
    GroupTiming t;
    t.ms = msSum[l];
    t.share = shareSum[l];
    t.verified = failedSum[l] == 0;
    out[QString::fromStdString(tree->layer(int(l)).path)] = t;
  }
  return out;
}

void GraphView::applyLayerOverlay() {
  const std::map<QString, GroupTiming> times = layerTimes();
  auto find = [&times](const QString& layer) {
    auto it = times.find(layer);
    return it == times.end() ? nullptr : &it->second;
  };
  for (QGraphicsItem* item : scene_->items()) {
    if (item->type() == NodeItemType && !static_cast<NodeItem*>(item)->node().layer.isEmpty()) {
      auto* box = static_cast<NodeItem*>(item);
      box->setTiming(find(box->node().layer));
      box->setToolTip(box->node().tooltip + repeatComparison(box->node().layer, times));
    }
    if (item->type() == ClusterItemType && !static_cast<ClusterItem*>(item)->cluster().layer.isEmpty())
      static_cast<ClusterItem*>(item)->setTiming(find(static_cast<ClusterItem*>(item)->cluster().layer));
  }
}

// For one of several layers with the same op structure, how its time compares with theirs:
// "\n0.42 ms; the 5 like it: 0.40 to 0.47 ms (this one 2nd fastest)". Empty without a time or a repeat.
QString GraphView::repeatComparison(const QString& path, const std::map<QString, GroupTiming>& times) const {
  const LayerTree* tree = layers();
  const int layer = tree ? tree->find(path.toStdString()) : -1;
  auto own = times.find(path);
  if (layer <= 0 || own == times.end() || tree->layer(layer).repeatCount < 2) return {};
  std::vector<double> ms;
  for (int sibling : tree->repeatsOf(layer))
    if (auto it = times.find(QString::fromStdString(tree->layer(sibling).path)); it != times.end()) ms.push_back(it->second.ms);
  std::sort(ms.begin(), ms.end());
  const auto rank = std::lower_bound(ms.begin(), ms.end(), own->second.ms) - ms.begin() + 1;
  auto text = [](double v) { return v < 1 ? tr("%1 µs").arg(v * 1000, 0, 'f', 1) : tr("%1 ms").arg(v, 0, 'f', 2); };
  return tr("\n%1; the %2 like it: %3 to %4 (this one %5 of %2 by time, fastest first)")
      .arg(text(own->second.ms)).arg(ms.size()).arg(text(ms.front()), text(ms.back())).arg(rank);
}

// A first picture at a readable zoom: fitted when that keeps labels readable, else at 90% on the inputs (the
// top of the graph), not shrunk into a strip.
void GraphView::showReadable() {
  fit();
  if (transform().m11() >= 0.5 || !layout_ || layout_->nodes.empty()) return;
  setTransform(QTransform::fromScale(0.9, 0.9));
  QRectF top = layout_->nodes.front().box;
  for (const LayoutNode& n : layout_->nodes)
    if (n.isInput) top = top.united(n.box);
  const QSizeF view = mapToScene(viewport()->rect()).boundingRect().size();
  centerOn(QPointF(top.center().x(), top.top() - 30 + view.height() / 2));
}

QString GraphView::selectedLayerPath() const {
  for (QGraphicsItem* item : scene_->selectedItems()) {
    if (item->type() == NodeItemType) {
      const LayoutNode& n = static_cast<NodeItem*>(item)->node();
      if (!n.layer.isEmpty()) return n.layer;
      if (n.owner >= 0) return layout_->clusters[size_t(n.owner)].layer;
      return QString();
    }
    if (item->type() == ClusterItemType) return static_cast<ClusterItem*>(item)->cluster().layer;
  }
  return QString();
}

QString GraphView::breadcrumbs() const {
  const LayerTree* tree = layers();
  if (!tree) return QString();
  QStringList parts{step_.graph ? QString::fromStdString(step_.graph->name()) : QString()};
  const int layer = tree->find(selectedLayerPath().toStdString());
  if (layer > 0)
    for (int l : tree->ancestry(layer)) parts << QString::fromStdString(tree->layer(l).name);
  return parts.join(QStringLiteral(" › "));
}

// Each crumb is a link: the model's name closes every layer, a layer's name closes it.
void GraphView::updateBreadcrumbs() {
  const LayerTree* tree = layers();
  crumbs_->setVisible(tree != nullptr);
  if (!tree) return;
  QStringList links{QStringLiteral("<a href=\"\">%1</a>").arg(QString::fromStdString(step_.graph->name()).toHtmlEscaped())};
  const int layer = tree->find(selectedLayerPath().toStdString());
  if (layer > 0)
    for (int l : tree->ancestry(layer))
      links << QStringLiteral("<a href=\"%1\">%2</a>")
                   .arg(QString::fromStdString(tree->layer(l).path).toHtmlEscaped(),
                        QString::fromStdString(tree->layer(l).name).toHtmlEscaped());
  crumbs_->setText(links.join(QStringLiteral(" › ")));
  crumbs_->adjustSize();
  crumbs_->move(std::max(8, viewport()->width() - crumbs_->width() - 8), 8);
}

// Selects the first producer (up) or consumer (down) of the selected box along the drawn edges, and centres it.
bool GraphView::moveAlongEdge(bool up) {
  if (!layout_ || layout_->nodes.empty()) return false;
  for (QGraphicsItem* item : scene_->selectedItems()) {
    if (item->type() != NodeItemType) continue;
    const int at = int(&static_cast<NodeItem*>(item)->node() - layout_->nodes.data());
    for (const LayoutEdge& e : layout_->edges) {
      if ((up ? e.to : e.from) != at) continue;
      const LayoutNode& next = layout_->nodes[size_t(up ? e.from : e.to)];
      selectDrawn(next.id, true);
      updateBreadcrumbs();
      if (next.layer.isEmpty() && !next.isInput) emit nodeClicked(next.id);
      return true;
    }
  }
  return false;
}

// Enter or + opens the selected layer, Backspace or - closes the layer around the selection; Alt+Up and
// Alt+Down move to a producer and a consumer.
void GraphView::keyPressEvent(QKeyEvent* event) {
  if ((event->modifiers() & Qt::AltModifier) && (event->key() == Qt::Key_Up || event->key() == Qt::Key_Down)) {
    if (moveAlongEdge(event->key() == Qt::Key_Up)) return event->accept();
  }
  const QString path = selectedLayerPath();
  const bool openKey = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter || event->key() == Qt::Key_Plus;
  const bool closeKey = event->key() == Qt::Key_Backspace || event->key() == Qt::Key_Minus;
  if (layers() && !path.isEmpty() && (openKey || closeKey)) {
    bool selectedBox = false;
    for (QGraphicsItem* item : scene_->selectedItems())
      selectedBox = item->type() == NodeItemType && !static_cast<NodeItem*>(item)->node().layer.isEmpty();
    if (openKey && selectedBox) setLayerOpen(path, true);
    if (closeKey) setLayerOpen(path, false);
    if ((openKey && selectedBox) || closeKey) return event->accept();
  }
  QGraphicsView::keyPressEvent(event);
}

void GraphView::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  overview_->follow();
  if (crumbs_->isVisible()) crumbs_->move(std::max(8, viewport()->width() - crumbs_->width() - 8), 8);
}

}  // namespace tessera::ui
