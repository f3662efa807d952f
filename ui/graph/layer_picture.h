#pragma once
// The graph picture of a model with layers (core/layers): collapsed layers as boxes with their counts, open
// layers as frames around what they hold, merged edges between them, and fusion groups drawn where all their
// nodes show inside one layer. placeLayers lays each open layer out on its own and caches what did not change.
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>

#include "ui/graph/graph_layout.h"

namespace tessera::ui {

// The description (no positions) of `step` with `tree`'s layers; step.open (or the fitting depth) says which
// are open.
GraphLayout describeLayers(const StepPicture& step, std::shared_ptr<const LayerTree> tree);
// Whether `graph` is drawn with layers: its names give some, and it has more than the ~80 boxes a first
// picture holds (a small model is drawn flat, with its removed nodes as ghosts).
bool drawsLayers(const LayerTree& tree, const Graph& graph);
// The layers the picture opens with when nothing was chosen: the deepest depth that fits about 80 boxes.
OpenLayers defaultOpenLayers(const LayerTree& tree, size_t graphInputs);

// Placements of open layers keyed by what they hold (ids, sizes, edges): expanding one layer lays out only that
// layer and the layers around it; the others come from here. Used from the one layout thread only.
class LayerPlacementCache {
 public:
  struct Placement {
    QSizeF size;
    std::vector<QRectF> boxes;     // per sub-node, relative to the layer's interior
    std::vector<QRectF> clusters;  // per fusion group drawn inside it
  };
  const Placement* find(uint64_t key);
  void store(uint64_t key, Placement placement);
  size_t hits = 0, misses = 0;

 private:
  static constexpr size_t kLimit = 4096;
  std::unordered_map<uint64_t, Placement> entries_;
  std::list<uint64_t> order_;  // oldest first
};

// Positions for a description from describeLayers (a flat one goes to placeWithDot whole).
void placeLayers(GraphLayout& layout, LayerPlacementCache* cache = nullptr);

}  // namespace tessera::ui
