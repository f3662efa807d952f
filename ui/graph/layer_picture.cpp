// describeLayers: the items of the collapsed graph (core/layers) as layout nodes, open layers as frames.
#include "ui/graph/layer_picture.h"

#include <QLocale>
#include <QObject>
#include <QStringList>
#include <algorithm>

namespace tessera::ui {
namespace {

constexpr size_t kOpenBudget = 80;       // boxes the first picture may hold
constexpr double kLayerWidth = 210, kLayerHeight = 52;

QString q(const std::string& s) { return QString::fromStdString(s); }

QString bytesText(qint64 bytes) { return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat); }

// "1 node", "51 nodes" (QObject::tr's %n needs a translation to pick the singular).
QString counted(int n, const char* one, const char* many) {
  return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
}

// The hue of a layer: matmul/conv when it holds any, else the hue most of its nodes have.
NodeHue layerHue(const Layer& l) {
  std::map<NodeHue, int> count;
  for (const auto& [op, n] : l.opCounts) count[hueOf(op)] += n;
  if (count.count(NodeHue::MatmulConv)) return NodeHue::MatmulConv;
  NodeHue best = NodeHue::Pointwise;
  int most = -1;
  for (const auto& [hue, n] : count)
    if (hue != NodeHue::InputConstant && n > most) best = hue, most = n;
  return best;
}

QString opSummary(const Layer& l, size_t limit) {
  std::vector<std::pair<int, std::string>> ops;
  for (const auto& [op, n] : l.opCounts) ops.push_back({-n, op});
  std::sort(ops.begin(), ops.end());
  QStringList parts;
  for (size_t i = 0; i < ops.size() && i < limit; ++i) parts << QStringLiteral("%1 %2").arg(-ops[i].first).arg(q(ops[i].second));
  if (ops.size() > limit) parts << QStringLiteral("…");
  return parts.join(", ");
}

class LayerDescriber {
 public:
  LayerDescriber(const StepPicture& step, std::shared_ptr<const LayerTree> tree)
      : step_(step), graph_(*step.graph), tree_(*tree) {
    out_.layers = std::move(tree);
    out_.open = step.openSet ? step.open : defaultOpenLayers(tree_, graph_.inputs().size());
    collapsed_ = collapseGraph(graph_, tree_, out_.open);
  }

  GraphLayout run() {
    countPerLayer();
    addLayerClusters();
    for (const VisibleItem& item : collapsed_.items) addItem(item);
    addEdges();
    addGroupClusters();
    return std::move(out_);
  }

 private:
  // Kernels (a group belongs to the innermost layer holding all its nodes) and the step's changes per layer.
  void countPerLayer() {
    kernels_.assign(tree_.layers().size(), 0);
    std::vector<double> added(tree_.nodeIds().size(), 0), rewritten(added.size(), 0);
    for (const std::string& id : step_.added)
      if (int n = tree_.nodeIndex(id); n >= 0) added[size_t(n)] = 1;
    for (const std::string& id : step_.rewritten)
      if (int n = tree_.nodeIndex(id); n >= 0) rewritten[size_t(n)] = 1;
    added_ = tree_.sums(added);
    rewritten_ = tree_.sums(rewritten);
    if (!step_.fusion) return;
    groupOfNode_.assign(tree_.nodeIds().size(), -1);
    for (size_t g = 0; g < step_.fusion->groups.size(); ++g) {
      std::vector<int> nodes;
      for (const GroupNode& gn : step_.fusion->groups[g].nodes)
        if (int n = tree_.nodeIndex(gn.id); n >= 0) nodes.push_back(n), groupOfNode_[size_t(n)] = int(g);
      if (nodes.empty()) continue;
      for (int l = commonLayer(tree_, nodes); l >= 0; l = tree_.layer(l).parent) ++kernels_[size_t(l)];
    }
  }

  // The frame drawn around an open layer's contents (or -1 for the root).
  int ownerOf(int layer) const { return layer <= 0 ? -1 : clusterOfLayer_.at(layer); }

  void addLayerClusters() {
    for (int l : collapsed_.openLayers) {
      if (l == 0) continue;
      const Layer& layer = tree_.layer(l);
      LayoutCluster c;
      c.layer = q(layer.path);
      c.id = QStringLiteral("layer:") + c.layer;
      c.label = q(layerTitle(layer)) + QStringLiteral(" · ") + counted(layer.nodeCount, "node", "nodes");
      c.owner = ownerOf(layer.parent);
      clusterOfLayer_[l] = int(out_.clusters.size());
      out_.clusters.push_back(std::move(c));
    }
  }

  void addItem(const VisibleItem& item) {
    if (item.kind == ItemKind::Input) {
      out_.nodes.push_back(describeInput(*graph_.inputs()[size_t(item.index)]));
    } else if (item.kind == ItemKind::Node) {
      const std::string& id = tree_.nodeIds()[size_t(item.index)];
      LayoutNode n = describeNode(*graph_.findNode(id), markOf(id));
      n.owner = ownerOf(tree_.layerOfNode(item.index));
      if (!groupOfNode_.empty() && groupOfNode_[size_t(item.index)] >= 0)
        n.group = q(step_.fusion->groups[size_t(groupOfNode_[size_t(item.index)])].id);
      out_.nodes.push_back(std::move(n));
    } else {
      out_.nodes.push_back(describeLayer(item.index));
    }
  }

  LayoutNode describeLayer(int index) const {
    const Layer& l = tree_.layer(index);
    LayoutNode n;
    n.layer = q(l.path);
    n.id = QStringLiteral("layer:") + n.layer;
    n.title = q(layerTitle(l));
    QStringList parts{counted(l.nodeCount, "node", "nodes")};
    if (step_.fusion) parts << counted(kernels_[size_t(index)], "kernel", "kernels");
    const int added = int(added_[size_t(index)]), rewritten = int(rewritten_[size_t(index)]);
    if (added || rewritten) parts << QStringLiteral("+%1 ~%2").arg(added).arg(rewritten);
    n.subtitle = parts.join(QStringLiteral(" · "));
    n.tooltip = q(l.path) + "\n" + opSummary(l, 6);
    if (l.runLength > 0)
      n.tooltip += "\n" + QObject::tr("%1 consecutive layers with the same op structure").arg(l.runLength);
    else if (l.repeatCount > 1)
      n.tooltip += "\n" + QObject::tr("%1 of %2 layers with the same op structure").arg(l.repeatIndex + 1).arg(l.repeatCount);
    n.tooltip += "\n" + QObject::tr("double-click to open");
    n.hue = layerHue(l);
    n.mark = added || rewritten ? NodeMark::Rewritten : NodeMark::None;
    n.owner = ownerOf(l.parent);
    n.size = QSizeF(kLayerWidth, kLayerHeight);
    return n;
  }

  NodeMark markOf(const std::string& id) const {
    if (std::find(step_.added.begin(), step_.added.end(), id) != step_.added.end()) return NodeMark::Added;
    if (std::find(step_.rewritten.begin(), step_.rewritten.end(), id) != step_.rewritten.end()) return NodeMark::Rewritten;
    return NodeMark::None;
  }

  void addEdges() {
    for (const MergedEdge& m : collapsed_.edges) {
      LayoutEdge e;
      e.from = m.from;
      e.to = m.to;
      e.value = q(m.value);
      e.count = m.count;
      e.bytes = m.bytes;
      const Value* v = graph_.findValue(m.value);
      e.tooltip = m.count == 1 && v ? valueTooltip(*v)
                                    : QObject::tr("%1 values · %2, the first %%3").arg(m.count).arg(bytesText(m.bytes), e.value);
      e.producerId = m.producer.empty() ? e.value : q(m.producer);
      e.consumerId = q(m.consumer);
      out_.edges.push_back(std::move(e));
    }
  }

  // A fusion group is drawn as a hull when all its nodes show inside the same frame.
  void addGroupClusters() {
    if (!step_.fusion) return;
    for (const FusedGroup& g : step_.fusion->groups) {
      LayoutCluster c;
      c.id = q(g.id);
      c.label = c.id + QStringLiteral(" · ") + q(std::string(groupKindName(g.kind)));
      c.kind = g.kind;
      c.collapsed = step_.collapsed.count(c.id) > 0;
      bool drawn = !g.nodes.empty();
      for (const GroupNode& gn : g.nodes) {
        const int n = tree_.nodeIndex(gn.id);
        const int item = n < 0 ? -1 : collapsed_.itemOfNode[size_t(n)];
        drawn = drawn && item >= 0 && collapsed_.items[size_t(item)].kind == ItemKind::Node;
        if (!drawn) break;
        c.members.push_back(item);
      }
      if (!drawn) continue;
      c.owner = out_.nodes[size_t(c.members.front())].owner;
      for (int m : c.members) drawn = drawn && out_.nodes[size_t(m)].owner == c.owner;
      if (drawn) out_.clusters.push_back(std::move(c));
    }
  }

  const StepPicture& step_;
  const Graph& graph_;
  const LayerTree& tree_;
  GraphLayout out_;
  CollapsedGraph collapsed_;
  std::map<int, int> clusterOfLayer_;
  std::vector<int> kernels_, groupOfNode_;
  std::vector<double> added_, rewritten_;
};

}  // namespace

bool drawsLayers(const LayerTree& tree, const Graph& graph) {
  return tree.layers().size() > 1 && graph.inputs().size() + graph.numNodes() > kOpenBudget;
}

OpenLayers defaultOpenLayers(const LayerTree& tree, size_t graphInputs) {
  return openToDepth(tree, fittingDepth(tree, graphInputs, kOpenBudget));
}

GraphLayout describeLayers(const StepPicture& step, std::shared_ptr<const LayerTree> tree) {
  return LayerDescriber(step, std::move(tree)).run();
}

}  // namespace tessera::ui
