// Repeated layers: siblings with the same op structure ("h.0" … "h.11" of a transformer, "res4_1" … "res4_5"
// of a ResNet stage) share a signature, so the window can mark them "×12" and compare their times.
#include <algorithm>
#include <unordered_map>

#include "ir/fnv.h"
#include "layers/layer_tree.h"

namespace tessera {
namespace {

constexpr uint64_t kOutside = ~0ull, kConstant = ~0ull - 1, kAbsent = ~0ull - 2;

void addString(Fnv1a& h, const std::string& s) {
  h.addU64(s.size());
  h.add(s.data(), s.size());
}

}  // namespace

// The signature of a layer hashes, for each node below it in topological order, its op, the layer it sits in
// (numbered in the subtree's preorder, so names do not count) and where each input comes from: a node of the
// layer by its position, something outside (a producer or a graph input: the first block reads the input, the next ones
// the block before), or a constant. Shapes do not count: a stage's blocks
// differ in width but not in structure.
void LayerTree::markRepeats(const Graph& graph) {
  std::vector<const Node*> nodes;
  nodes.reserve(nodeIds_.size());
  for (const std::string& id : nodeIds_) nodes.push_back(graph.findNode(id));
  for (size_t l = 0; l < layers_.size(); ++l) {
    std::unordered_map<int, uint64_t> localLayer;  // preorder number of each layer in the subtree
    std::vector<int> stack{int(l)};
    while (!stack.empty()) {
      const int at = stack.back();
      stack.pop_back();
      localLayer[at] = localLayer.size();
      const auto& kids = layers_[size_t(at)].children;
      stack.insert(stack.end(), kids.rbegin(), kids.rend());
    }
    const std::vector<int> under = nodesUnder(int(l));
    std::unordered_map<const Node*, uint64_t> position;
    for (size_t i = 0; i < under.size(); ++i) position[nodes[size_t(under[i])]] = i;
    Fnv1a h;
    for (int n : under) {
      const Node& node = *nodes[size_t(n)];
      addString(h, node.op());
      h.addU64(localLayer[nodeLayer_[size_t(n)]]);
      for (const Value* v : node.inputs()) {
        if (!v) h.addU64(kAbsent);
        else if (v->producer()) {
          auto it = position.find(v->producer());
          h.addU64(it == position.end() ? kOutside : it->second);
        } else h.addU64(v->initializer() ? kConstant : kOutside);  // a graph input is outside like a producer
      }
    }
    layers_[l].signature = h.value;
  }
  for (Layer& parent : layers_) {
    std::unordered_map<uint64_t, std::vector<int>> bySignature;
    for (int c : parent.children) bySignature[layers_[size_t(c)].signature].push_back(c);
    for (auto& [signature, same] : bySignature)
      for (size_t i = 0; i < same.size(); ++i) {
        layers_[size_t(same[i])].repeatCount = int(same.size());
        layers_[size_t(same[i])].repeatIndex = int(i);
      }
  }
}

}  // namespace tessera
