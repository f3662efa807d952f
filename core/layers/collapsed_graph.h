#pragma once
// The graph as it is drawn with some layers open and the rest collapsed: each node stands for itself when every
// layer around it is open, else for the outermost collapsed layer holding it; the edges between two such items
// are merged into one that carries how many values it stands for and their bytes. Which layers are open is a
// set of layer paths (the root is always open), so it survives a new step's tree.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "layers/layer_tree.h"

namespace tessera {

using OpenLayers = std::set<std::string>;

enum class ItemKind { Input, Node, Layer };

struct VisibleItem {
  ItemKind kind = ItemKind::Node;
  int index = 0;  // into graph.inputs(), LayerTree::nodeIds() or LayerTree::layers()
};

struct MergedEdge {
  int from = 0, to = 0;  // item indices
  int count = 0;         // distinct values between the two items
  int64_t bytes = 0;     // their total size
  std::string value;     // the first of them in topological order
  std::string producer, consumer;  // the node ids at the ends of that first value's edge ("" for an input)
};

struct CollapsedGraph {
  std::vector<VisibleItem> items;  // graph inputs, then in topological order of their first node
  std::vector<MergedEdge> edges;   // in order of their first value's consumer
  std::vector<int> itemOfNode;     // per node index: the item standing for it
  std::vector<int> itemOfLayer;    // per layer: its item when it is drawn collapsed, else -1
  std::vector<int> openLayers;     // layers drawn open (below open ancestors), the root first
};

CollapsedGraph collapseGraph(const Graph& graph, const LayerTree& tree, const OpenLayers& open);

// Opens the layers of depth <= `depth` (0: only the root, so its children show collapsed).
OpenLayers openToDepth(const LayerTree& tree, int depth);
// The deepest `depth` whose picture has at most `budget` items (at least 0): what the window opens with.
int fittingDepth(const LayerTree& tree, size_t graphInputs, size_t budget);
// `open` with every layer around `node` opened, so the node is drawn (search hits, --select).
OpenLayers reveal(const LayerTree& tree, OpenLayers open, int node);
// `open` with `layer` opened, and the single child layer below it too while a layer holds nothing else.
OpenLayers openLayer(const LayerTree& tree, OpenLayers open, int layer);
// `open` with `layer` and every layer below it closed.
OpenLayers closeLayer(const LayerTree& tree, OpenLayers open, int layer);
// The innermost layer holding all of `nodes` (the home of a fusion group); the root when empty.
int commonLayer(const LayerTree& tree, const std::vector<int>& nodes);

}  // namespace tessera
