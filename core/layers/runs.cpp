// Long runs of repeated layers: a 50,000-node stack is 980 blocks "h.0" … "h.979" side by side, a picture no
// layout draws quickly and nobody reads. A run of more than kLongRun consecutive siblings with one op structure
// becomes groups of at most kFanOut ("h.0 … h.31 ×32", groups of groups for runs beyond 32 × 32), so every
// picture the window lays out holds a few dozen boxes. The model's layers keep their paths inside the groups.
#include <algorithm>

#include "ir/fnv.h"
#include "layers/layer_tree.h"

namespace tessera {
namespace {

constexpr size_t kLongRun = 64;  // a longer run of repeats is grouped
constexpr size_t kFanOut = 32;   // the most boxes a group holds

}  // namespace

std::string layerTitle(const Layer& layer) {
  if (layer.runLength > 0) return layer.name + " \u00d7" + std::to_string(layer.runLength);
  if (layer.repeatCount > 1) return layer.name + " \u00d7" + std::to_string(layer.repeatCount);
  return layer.name;
}

// Under each layer of the model, every run of more than kLongRun consecutive children with one signature is
// replaced by its groups. Groups are made after the repeats are marked: a block stays "h.3 ×980".
void LayerTree::groupRuns() {
  const size_t modelLayers = layers_.size();
  bool grouped = false;
  for (size_t p = 0; p < modelLayers; ++p) {
    const std::vector<int> kids = layers_[p].children;
    std::vector<int> children;
    for (size_t i = 0; i < kids.size();) {
      size_t j = i + 1;
      while (j < kids.size() && layers_[size_t(kids[j])].signature == layers_[size_t(kids[i])].signature) ++j;
      std::vector<int> run(kids.begin() + long(i), kids.begin() + long(j));
      if (run.size() > kLongRun) run = groupRun(int(p), run), grouped = true;
      children.insert(children.end(), run.begin(), run.end());
      i = j;
    }
    layers_[p].children = std::move(children);
  }
  if (grouped) renumberInPreorder();
}

// The children `parent` gets for `run`: groups of kFanOut^k layers, k the least that makes at most kFanOut of
// them (a last part of one layer stays itself); a group of more than kLongRun is grouped again inside.
std::vector<int> LayerTree::groupRun(int parent, const std::vector<int>& run) {
  size_t size = kFanOut;
  while ((run.size() + size - 1) / size > kFanOut) size *= kFanOut;
  std::vector<int> out;
  for (size_t i = 0; i < run.size(); i += size) {
    const std::vector<int> part(run.begin() + long(i), run.begin() + long(std::min(run.size(), i + size)));
    if (part.size() == 1) {
      out.push_back(part.front());
      continue;
    }
    const int group = addGroup(parent, part);
    std::vector<int> inside = part.size() > kLongRun ? groupRun(group, part) : part;
    for (int c : inside) layers_[size_t(c)].parent = group;
    layers_[size_t(group)].children = std::move(inside);
    out.push_back(group);
  }
  return out;
}

// A group layer for `members` (layers of the model, in order) under `parent`: their counts summed, no nodes of
// its own, named by the first and the last.
int LayerTree::addGroup(int parent, const std::vector<int>& members) {
  Layer g;
  g.name = layers_[size_t(members.front())].name + " \u2026 " + layers_[size_t(members.back())].name;
  g.parent = parent;
  const std::string& above = layers_[size_t(parent)].path;
  g.path = above.empty() ? g.name : above + "/" + g.name;
  g.runLength = int(members.size());
  g.firstNode = int(nodeIds_.size());
  Fnv1a h;
  for (int m : members) {
    const Layer& l = layers_[size_t(m)];
    g.nodeCount += l.nodeCount;
    g.firstNode = std::min(g.firstNode, l.firstNode);
    for (const auto& [op, n] : l.opCounts) g.opCounts[op] += n;
    h.addU64(l.signature);
  }
  g.signature = h.value;
  layers_.push_back(std::move(g));
  return int(layers_.size()) - 1;
}

// Layers in preorder again (parents before children, as collapsing reads them), depths recomputed.
void LayerTree::renumberInPreorder() {
  std::vector<int> order, stack{0};
  order.reserve(layers_.size());
  while (!stack.empty()) {
    const int l = stack.back();
    stack.pop_back();
    order.push_back(l);
    const auto& kids = layers_[size_t(l)].children;
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
  std::vector<int> newId(layers_.size(), -1);
  for (size_t i = 0; i < order.size(); ++i) newId[size_t(order[i])] = int(i);
  std::vector<Layer> sorted;
  sorted.reserve(order.size());
  for (int l : order) {
    Layer layer = std::move(layers_[size_t(l)]);
    layer.parent = layer.parent < 0 ? -1 : newId[size_t(layer.parent)];
    layer.depth = layer.parent < 0 ? 0 : sorted[size_t(layer.parent)].depth + 1;
    for (int& c : layer.children) c = newId[size_t(c)];
    sorted.push_back(std::move(layer));
  }
  for (int& l : nodeLayer_) l = newId[size_t(l)];
  layers_ = std::move(sorted);
  layerByPath_.clear();
  for (size_t l = 0; l < layers_.size(); ++l) layerByPath_[layers_[l].path] = int(l);
}

std::vector<int> LayerTree::repeatsOf(int layer) const {
  int parent = layers_.at(size_t(layer)).parent;
  while (parent > 0 && layers_[size_t(parent)].runLength > 0) parent = layers_[size_t(parent)].parent;
  if (parent < 0) return {layer};
  std::vector<int> out;
  std::vector<int> stack(layers_[size_t(parent)].children.rbegin(), layers_[size_t(parent)].children.rend());
  while (!stack.empty()) {
    const Layer& l = layers_[size_t(stack.back())];
    const int at = stack.back();
    stack.pop_back();
    if (l.runLength > 0) stack.insert(stack.end(), l.children.rbegin(), l.children.rend());
    else if (l.signature == layers_[size_t(layer)].signature) out.push_back(at);
  }
  return out;
}

}  // namespace tessera
