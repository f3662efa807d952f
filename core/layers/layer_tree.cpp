#include "layers/layer_tree.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace tessera {
namespace {

bool isFloat(const Value& v) {
  return v.dtype() == DType::F32 || v.dtype() == DType::F16 || v.dtype() == DType::BF16 || v.dtype() == DType::F64;
}

// A node computing a constant from initializers only (a Caffe2 export's ConstantOfShape weights).
bool isConstantNode(const Node& n) {
  return std::all_of(n.inputs().begin(), n.inputs().end(), [](const Value* v) { return !v || v->initializer(); });
}

// The weights a node reads (or, for a constant node, makes): float initializers and constant nodes' outputs.
std::vector<const Value*> parametersOf(const Node& n) {
  std::vector<const Value*> params;
  for (const Value* v : n.inputs())
    if (v && isFloat(*v) && (v->initializer() || (v->producer() && isConstantNode(*v->producer()))))
      params.push_back(v);
  if (isConstantNode(n))
    for (const Value* v : n.outputs())
      if (v && isFloat(*v)) params.push_back(v);
  return params;
}

// The scope named by the node's id, else the common scope of its weights' names; empty when neither names one.
ScopePath namedScope(const Node& n) {
  if (ScopePath path = scopeOfNodeId(n.id()); !path.empty()) return path;
  bool first = true;
  ScopePath common;
  for (const Value* v : parametersOf(n)) {
    ScopePath path = scopeOfParameter(v->name());
    if (path.empty()) continue;
    common = first ? path : commonPrefix(common, path);
    first = false;
  }
  return common;
}

// Drops the leading segments that every named node shares (a device prefix, one wrapper module).
void stripSharedPrefix(std::vector<ScopePath>& scopes, const std::vector<bool>& named) {
  std::optional<ScopePath> shared;
  for (size_t i = 0; i < scopes.size(); ++i)
    if (named[i]) shared = shared ? commonPrefix(*shared, scopes[i]) : scopes[i];
  if (!shared || shared->empty()) return;
  for (size_t i = 0; i < scopes.size(); ++i)
    if (named[i]) scopes[i].erase(scopes[i].begin(), scopes[i].begin() + long(shared->size()));
}

// Unnamed nodes (a Relu, an Add of a residual) join the scope of their named producers, else of their named
// consumers, else the root.
void inheritScopes(const std::vector<const Node*>& order, const std::unordered_map<std::string, int>& index,
                   std::vector<ScopePath>& scopes, std::vector<bool>& named) {
  // Several producers: the latest one's scope, cut to one level above it but not above their common scope
  // (a residual Add reading its block's last conv and the previous block's output joins its block).
  auto adopt = [&](size_t i, const std::vector<const Node*>& neighbours) {
    std::optional<ScopePath> common;
    std::optional<size_t> latest;
    for (const Node* m : neighbours) {
      const size_t j = size_t(index.at(m->id()));
      if (!named[j]) continue;
      common = common ? commonPrefix(*common, scopes[j]) : scopes[j];
      if (!latest || j > *latest) latest = j;
    }
    if (!common) return false;
    const ScopePath& last = scopes[*latest];
    const size_t keep = std::max(common->size(), last.empty() ? 0 : last.size() - 1);
    scopes[i] = common->size() == last.size() ? last : ScopePath(last.begin(), last.begin() + long(keep));
    return true;
  };
  std::vector<bool> inherited(order.size(), false);
  for (size_t i = 0; i < order.size(); ++i) {
    if (named[i]) continue;
    std::vector<const Node*> producers;
    for (const Value* v : order[i]->inputs())
      if (v && v->producer()) producers.push_back(v->producer());
    inherited[i] = adopt(i, producers);
    named[i] = inherited[i];
  }
  for (size_t i = order.size(); i-- > 0;) {
    if (named[i]) continue;
    std::vector<const Node*> consumers;
    for (const Value* v : order[i]->outputs())
      if (v)
        for (const Use& u : v->uses()) consumers.push_back(u.node);
    named[i] = adopt(i, consumers);
  }
}

}  // namespace

int LayerTree::addLayer(int parent, const std::string& name) {
  Layer l;
  l.name = name;
  l.parent = parent;
  if (parent >= 0) {
    const Layer& p = layers_[size_t(parent)];
    l.depth = p.depth + 1;
    l.path = p.path.empty() ? name : p.path + "/" + name;
  }
  const int id = int(layers_.size());
  layerByPath_[l.path] = id;
  layers_.push_back(std::move(l));
  if (parent >= 0) layers_[size_t(parent)].children.push_back(id);
  return id;
}

int LayerTree::layerFor(const ScopePath& path) {
  int layer = 0;
  for (size_t depth = 1; depth <= path.size(); ++depth) {
    auto it = layerByPath_.find(joinScope(path, depth));
    layer = it != layerByPath_.end() ? it->second : addLayer(layer, path[depth - 1]);
  }
  return layer;
}

namespace {

ScopePath splitPath(const std::string& path) {
  ScopePath out;
  size_t start = 0;
  while (start < path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// A node a pass made for another (decompose's and canonicalize's ids extend the node's: `n44.strided_pixels`
// for conv `n44`) stands in that node's layer; -1 when its id extends no node `names` knows. Left to inherit
// from its producers, the Slice of a block's strided conv joined the block before (its input's producer), and
// that block no longer repeated its siblings.
int madeFor(const LayerTree& names, std::string id) {
  for (size_t dot = id.rfind('.'); dot != std::string::npos && dot > 0; dot = id.rfind('.')) {
    id.resize(dot);
    if (int known = names.nodeIndex(id); known >= 0) return known;
  }
  return -1;
}

}  // namespace

LayerTree LayerTree::build(const Graph& graph, const LayerTree* names) {
  LayerTree tree;
  const std::vector<Node*> nodes = graph.topoOrder();
  std::vector<const Node*> order(nodes.begin(), nodes.end());
  for (const Node* n : order) {
    tree.nodeIndex_[n->id()] = int(tree.nodeIds_.size());
    tree.nodeIds_.push_back(n->id());
  }
  std::vector<ScopePath> scopes(order.size());
  std::vector<bool> named(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    int known = names ? names->nodeIndex(order[i]->id()) : -1;
    if (names && known < 0) known = madeFor(*names, order[i]->id());
    if (names && known < 0) continue;  // made by a pass for no node of the import: inherits below
    scopes[i] = names ? splitPath(names->layer(names->layerOfNode(known)).path) : namedScope(*order[i]);
    named[i] = names || !scopes[i].empty();
  }
  if (!names) stripSharedPrefix(scopes, named);
  inheritScopes(order, tree.nodeIndex_, scopes, named);
  tree.addLayer(-1, "");
  for (const ScopePath& path : scopes) tree.nodeLayer_.push_back(tree.layerFor(path));
  tree.finish(graph);
  return tree;
}

}  // namespace tessera

namespace tessera {

// Drops layers that would hold a single node, then fills each layer's nodes, counts and repeats.
void LayerTree::finish(const Graph& graph) {
  std::vector<int> count(layers_.size(), 0);
  for (int l : nodeLayer_) ++count[size_t(l)];
  for (size_t l = layers_.size(); l-- > 1;) count[size_t(layers_[l].parent)] += count[l];
  std::vector<int> newId(layers_.size(), -1);
  std::vector<Layer> kept;
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (l != 0 && count[l] < 2) continue;  // ancestors of a kept layer hold as many nodes, so they are kept
    newId[l] = int(kept.size());
    Layer layer = std::move(layers_[l]);
    layer.parent = layer.parent < 0 ? -1 : newId[size_t(layer.parent)];
    layer.children.clear();
    kept.push_back(std::move(layer));
  }
  for (int& l : nodeLayer_) {
    int at = l;
    while (newId[size_t(at)] < 0) at = layers_[size_t(at)].parent;
    l = newId[size_t(at)];
  }
  layers_ = std::move(kept);
  layerByPath_.clear();
  for (size_t l = 0; l < layers_.size(); ++l) {
    layerByPath_[layers_[l].path] = int(l);
    if (l) layers_[size_t(layers_[l].parent)].children.push_back(int(l));
  }
  // Layers are ordered by their first node that computes on data: a Caffe2 export makes all its weights first.
  std::vector<int> firstComputing(layers_.size(), int(nodeIds_.size()));
  for (Layer& l : layers_) l.firstNode = int(nodeIds_.size());
  for (size_t n = 0; n < nodeIds_.size(); ++n) {
    const Node& node = *graph.findNode(nodeIds_[n]);
    const bool computes = !isConstantNode(node);
    layers_[size_t(nodeLayer_[n])].nodes.push_back(int(n));
    for (int l = nodeLayer_[n]; l >= 0; l = layers_[size_t(l)].parent) {
      Layer& layer = layers_[size_t(l)];
      ++layer.nodeCount;
      ++layer.opCounts[node.op()];
      layer.firstNode = std::min(layer.firstNode, int(n));
      if (computes) firstComputing[size_t(l)] = std::min(firstComputing[size_t(l)], int(n));
    }
  }
  const int total = int(nodeIds_.size());
  auto orderOf = [&](int l) {
    return firstComputing[size_t(l)] < total ? firstComputing[size_t(l)] : total + layers_[size_t(l)].firstNode;
  };
  for (Layer& l : layers_)
    std::sort(l.children.begin(), l.children.end(),
              [&](int a, int b) { return orderOf(a) < orderOf(b); });
  markRepeats(graph);
  groupRuns();
}

int LayerTree::nodeIndex(const std::string& id) const {
  auto it = nodeIndex_.find(id);
  return it == nodeIndex_.end() ? -1 : it->second;
}

int LayerTree::find(const std::string& path) const {
  auto it = layerByPath_.find(path);
  return it == layerByPath_.end() ? -1 : it->second;
}

bool LayerTree::isWithin(int layer, int ancestor) const {
  for (int l = layer; l >= 0; l = layers_[size_t(l)].parent)
    if (l == ancestor) return true;
  return false;
}

std::vector<int> LayerTree::ancestry(int layer) const {
  std::vector<int> chain;
  for (int l = layer; l > 0; l = layers_[size_t(l)].parent) chain.push_back(l);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::vector<int> LayerTree::nodesUnder(int layer) const {
  std::vector<int> out;
  std::vector<int> stack{layer};
  while (!stack.empty()) {
    const Layer& l = layers_[size_t(stack.back())];
    stack.pop_back();
    out.insert(out.end(), l.nodes.begin(), l.nodes.end());
    stack.insert(stack.end(), l.children.begin(), l.children.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int LayerTree::maxDepth() const {
  int depth = 0;
  for (const Layer& l : layers_) depth = std::max(depth, l.depth);
  return depth;
}

std::vector<double> LayerTree::sums(const std::vector<double>& perNode) const {
  std::vector<double> out(layers_.size(), 0.0);
  for (size_t n = 0; n < nodeLayer_.size() && n < perNode.size(); ++n)
    for (int l = nodeLayer_[n]; l >= 0; l = layers_[size_t(l)].parent) out[size_t(l)] += perNode[n];
  return out;
}

std::vector<int> LayerTree::findByName(const std::string& text) const {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  const std::string needle = lower(text);
  std::vector<int> out;
  for (size_t l = 1; l < layers_.size() && !needle.empty(); ++l)
    if (layers_[l].runLength == 0 && lower(layers_[l].name).find(needle) != std::string::npos) out.push_back(int(l));
  return out;
}

std::string LayerTree::format(int maxDepth) const {
  std::string out;
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const Layer& l = layers_[size_t(stack.back())];
    stack.pop_back();
    if (l.depth > maxDepth) continue;
    out += std::string(size_t(2 * l.depth), ' ') + (l.parent < 0 ? std::string("(root)") : layerTitle(l));
    out += " \u00b7 " + std::to_string(l.nodeCount) + " nodes\n";
    stack.insert(stack.end(), l.children.rbegin(), l.children.rend());
  }
  return out;
}

}  // namespace tessera
