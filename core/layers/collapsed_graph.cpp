#include "layers/collapsed_graph.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tessera {
namespace {

// Per layer: the outermost collapsed layer at or above it, or -1 when it and all its ancestors are open.
std::vector<int> collapsedAbove(const LayerTree& tree, const OpenLayers& open) {
  const auto& layers = tree.layers();
  std::vector<int> rep(layers.size(), -1);
  for (size_t l = 1; l < layers.size(); ++l) {  // parents come before children
    const int above = rep[size_t(layers[l].parent)];
    rep[l] = above >= 0 ? above : (open.count(layers[l].path) ? -1 : int(l));
  }
  return rep;
}

struct EdgeBuilder {
  CollapsedGraph& out;
  std::map<std::pair<int, int>, size_t> index;
  std::vector<std::unordered_set<const Value*>> seen;

  void add(int from, int to, const Value& v, const std::string& producer, const std::string& consumer) {
    if (from == to) return;
    auto [it, fresh] = index.try_emplace({from, to}, out.edges.size());
    if (fresh) {
      out.edges.push_back({from, to, 0, 0, v.name(), producer, consumer});
      seen.emplace_back();
    }
    if (!seen[it->second].insert(&v).second) return;
    MergedEdge& e = out.edges[it->second];
    ++e.count;
    e.bytes += v.type().bytes();
  }
};

void addItems(const Graph& graph, const LayerTree& tree, const std::vector<int>& rep, CollapsedGraph& out) {
  for (size_t i = 0; i < graph.inputs().size(); ++i) out.items.push_back({ItemKind::Input, int(i)});
  out.itemOfNode.assign(tree.nodeIds().size(), -1);
  out.itemOfLayer.assign(tree.layers().size(), -1);
  for (size_t n = 0; n < tree.nodeIds().size(); ++n) {
    const int collapsed = rep[size_t(tree.layerOfNode(int(n)))];
    if (collapsed < 0) {
      out.itemOfNode[n] = int(out.items.size());
      out.items.push_back({ItemKind::Node, int(n)});
      continue;
    }
    if (out.itemOfLayer[size_t(collapsed)] < 0) {
      out.itemOfLayer[size_t(collapsed)] = int(out.items.size());
      out.items.push_back({ItemKind::Layer, collapsed});
    }
    out.itemOfNode[n] = out.itemOfLayer[size_t(collapsed)];
  }
  for (size_t l = 0; l < tree.layers().size(); ++l)
    if (rep[l] < 0 && (l == 0 || rep[size_t(tree.layer(int(l)).parent)] < 0)) out.openLayers.push_back(int(l));
}

}  // namespace

CollapsedGraph collapseGraph(const Graph& graph, const LayerTree& tree, const OpenLayers& open) {
  CollapsedGraph out;
  addItems(graph, tree, collapsedAbove(tree, open), out);
  std::unordered_map<const Value*, int> inputItem;
  for (size_t i = 0; i < graph.inputs().size(); ++i) inputItem[graph.inputs()[i]] = int(i);
  EdgeBuilder edges{out, {}, {}};
  for (size_t n = 0; n < tree.nodeIds().size(); ++n) {
    const Node* node = graph.findNode(tree.nodeIds()[n]);
    for (const Value* v : node->inputs()) {
      if (!v) continue;
      if (v->producer()) {
        const int from = out.itemOfNode[size_t(tree.nodeIndex(v->producer()->id()))];
        edges.add(from, out.itemOfNode[n], *v, v->producer()->id(), node->id());
      } else if (auto it = inputItem.find(v); it != inputItem.end()) {
        edges.add(it->second, out.itemOfNode[n], *v, "", node->id());
      }
    }
  }
  return out;
}

OpenLayers openToDepth(const LayerTree& tree, int depth) {
  OpenLayers open;
  for (const Layer& l : tree.layers())
    if (l.depth <= depth && l.parent >= 0) open.insert(l.path);
  return open;
}

int fittingDepth(const LayerTree& tree, size_t graphInputs, size_t budget) {
  // Items at depth d: layers one level deeper drawn collapsed, plus the nodes sitting in open layers.
  const int maxDepth = tree.maxDepth();
  std::vector<size_t> layersAt(size_t(maxDepth) + 2, 0), nodesAt(size_t(maxDepth) + 1, 0);
  for (const Layer& l : tree.layers()) {
    ++layersAt[size_t(l.depth)];
    nodesAt[size_t(l.depth)] += l.nodes.size();
  }
  int best = 0;
  size_t openNodes = graphInputs;
  for (int d = 0; d <= maxDepth; ++d) {
    openNodes += nodesAt[size_t(d)];
    if (openNodes + layersAt[size_t(d) + 1] > budget) break;
    best = d;
  }
  return best;
}

OpenLayers reveal(const LayerTree& tree, OpenLayers open, int node) {
  if (node < 0 || node >= int(tree.nodeIds().size())) return open;
  for (int l : tree.ancestry(tree.layerOfNode(node))) open.insert(tree.layer(l).path);
  return open;
}

OpenLayers openLayer(const LayerTree& tree, OpenLayers open, int layer) {
  for (int l : tree.ancestry(layer)) open.insert(tree.layer(l).path);
  for (int l = layer; l > 0;) {
    const Layer& at = tree.layer(l);
    open.insert(at.path);
    l = at.nodes.empty() && at.children.size() == 1 ? at.children.front() : -1;
  }
  return open;
}

OpenLayers closeLayer(const LayerTree& tree, OpenLayers open, int layer) {
  for (size_t l = 0; l < tree.layers().size(); ++l)
    if (tree.isWithin(int(l), layer)) open.erase(tree.layer(int(l)).path);
  return open;
}

int commonLayer(const LayerTree& tree, const std::vector<int>& nodes) {
  if (nodes.empty()) return 0;
  std::vector<int> chain = tree.ancestry(tree.layerOfNode(nodes.front()));
  for (int n : nodes) {
    const std::vector<int> other = tree.ancestry(tree.layerOfNode(n));
    size_t k = 0;
    while (k < chain.size() && k < other.size() && chain[k] == other[k]) ++k;
    chain.resize(k);
  }
  return chain.empty() ? 0 : chain.back();
}

}  // namespace tessera
