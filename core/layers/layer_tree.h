#pragma once
// The layer hierarchy of a graph, built from its names (scope_names.h): layers nest like the modules that made
// the nodes, each node sits in exactly one layer, and sibling layers with the same op structure are marked as
// repeats ("h.0 ×12"); a run of more repeats than a picture can show (980 blocks) is grouped into layers of at
// most 32 boxes ("h.0 … h.31"), which hold the model's layers under their own paths. Built once per graph (a
// step's IR); layers are known by their path, which stays the same across the steps of one model, so expansion
// state (collapsed_graph.h) is kept as a set of paths.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "layers/scope_names.h"

namespace tessera {

struct Layer {
  std::string name;           // its own segment: "h.3", "attn", "res2_0"; "" for the root
  std::string path;           // segments from the root joined by '/': "h.3/attn"; "" for the root
  int parent = -1;            // -1 for the root
  int depth = 0;              // the root is 0, its children 1, ...
  std::vector<int> children;  // child layers, in the order of their first node
  std::vector<int> nodes;     // nodes directly in it (indices into LayerTree::nodeIds()), in topological order
  int firstNode = 0;          // the smallest node index below it
  int nodeCount = 0;          // every node below it
  std::map<std::string, int> opCounts;  // op → count, every node below it
  uint64_t signature = 0;     // op structure below it (ops, wiring, nesting), not names or shapes
  int repeatCount = 1;        // siblings with its signature, itself included
  int repeatIndex = 0;        // its place among them, from 0
  int runLength = 0;          // a group of a long run of repeats ("h.0 … h.31"): the layers of the model it holds;
                              // 0 for a layer of the model
};

// A layer's name as drawn: "h.3 ×12" for one of 12 repeats, "h.0 … h.31 ×32" for a group of a run.
std::string layerTitle(const Layer& layer);

class LayerTree {
 public:
  // The hierarchy of `graph`. Leading scopes every node shares (`gpu_0`, one wrapper module) are dropped,
  // and a layer that would hold a single node holds none (the node moves up). With `names` (the tree of the
  // model as imported), a node keeps the layer it had there and a node a pass made joins its neighbours' layer:
  // passes rename weights (`n4.weight_bn`), so the layers of every step are the imported model's.
  static LayerTree build(const Graph& graph, const LayerTree* names = nullptr);

  const std::vector<Layer>& layers() const { return layers_; }
  const Layer& layer(int index) const { return layers_.at(size_t(index)); }
  const Layer& root() const { return layers_.front(); }
  // Node ids in topological order; a node's index is its place here.
  const std::vector<std::string>& nodeIds() const { return nodeIds_; }
  int nodeIndex(const std::string& id) const;  // -1 when absent
  int layerOfNode(int node) const { return nodeLayer_.at(size_t(node)); }
  int find(const std::string& path) const;     // -1 when no layer has that path
  // True when `layer` is `ancestor` or lies below it.
  bool isWithin(int layer, int ancestor) const;
  // Layers from the root's child down to `layer` (empty for the root): the breadcrumbs of a layer.
  std::vector<int> ancestry(int layer) const;
  // Every node below `layer`, in topological order.
  std::vector<int> nodesUnder(int layer) const;
  int maxDepth() const;

  // The sum of a per-node quantity over each layer (indexed like layers()): for overlays on collapsed layers.
  std::vector<double> sums(const std::vector<double>& perNode) const;
  // One line per layer down to `maxDepth`, indented by depth: "res4_1 ×5 · 10 nodes" (tests, `info --layers`).
  std::string format(int maxDepth) const;
  // Layers of the model whose name contains `text` (case-insensitive), in order; groups of runs are not named.
  std::vector<int> findByName(const std::string& text) const;
  // The layers with `layer`'s op structure among its siblings in the model (through groups of runs), in order,
  // itself included: what its time is compared with.
  std::vector<int> repeatsOf(int layer) const;

 private:
  int addLayer(int parent, const std::string& name);
  int layerFor(const ScopePath& path);
  void finish(const Graph& graph);
  void markRepeats(const Graph& graph);
  void groupRuns();
  std::vector<int> groupRun(int parent, const std::vector<int>& run);
  int addGroup(int parent, const std::vector<int>& members);
  void renumberInPreorder();

  std::vector<Layer> layers_;
  std::vector<std::string> nodeIds_;
  std::vector<int> nodeLayer_;
  std::unordered_map<std::string, int> nodeIndex_;
  std::unordered_map<std::string, int> layerByPath_;
};

}  // namespace tessera
