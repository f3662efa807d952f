// placeLayers: each open layer's own items (its nodes, and its open child layers as boxes the size of their
// contents) laid out by dot on their own, innermost first, then placed inside their frames. A layer's placement
// is cached by what it holds, so opening one layer lays out that layer and the frames around it only.
#include <QElapsedTimer>
#include <algorithm>
#include <map>

#include "ir/fnv.h"
#include "ui/graph/layer_picture.h"

namespace tessera::ui {

const LayerPlacementCache::Placement* LayerPlacementCache::find(uint64_t key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses;
    return nullptr;
  }
  ++hits;
  return &it->second;
}

void LayerPlacementCache::store(uint64_t key, Placement placement) {
  if (entries_.count(key)) return;
  if (entries_.size() >= kLimit) {
    entries_.erase(order_.front());
    order_.pop_front();
  }
  entries_.emplace(key, std::move(placement));
  order_.push_back(key);
}

namespace {

constexpr double kPad = 12, kTitle = 22;  // a frame's margin and the room for its label

// One open layer's own picture: the layout given to dot and where each of its nodes came from.
struct Scope {
  GraphLayout sub;
  std::vector<int> node;     // sub node → layout node, or -1 for a child frame
  std::vector<int> frame;    // sub node → layout cluster of the child frame, or -1
  std::vector<int> groups;   // sub cluster → layout cluster (a fusion group)
  std::map<int, int> subOf;  // layout node or (-2 - cluster) → sub node
  LayerPlacementCache::Placement placement;
};

// The chain of frames around a layout node, innermost first, ending with -1 (the whole picture).
std::vector<int> framesAround(const GraphLayout& layout, int owner) {
  std::vector<int> chain;
  for (int k = owner; k >= 0; k = layout.clusters[size_t(k)].owner) chain.push_back(k);
  chain.push_back(-1);
  return chain;
}

uint64_t keyOf(const GraphLayout& sub) {
  Fnv1a h;
  for (const LayoutNode& n : sub.nodes) {
    h.add(n.id.utf16(), size_t(n.id.size()) * 2);
    h.addU64(uint64_t(n.size.width() * 16));
    h.addU64(uint64_t(n.size.height() * 16));
  }
  for (const LayoutEdge& e : sub.edges) h.addU64((uint64_t(e.from) << 32) | uint32_t(e.to));
  for (const LayoutCluster& c : sub.clusters) {
    h.add(c.id.utf16(), size_t(c.id.size()) * 2);
    for (int m : c.members) h.addU64(uint64_t(m));
  }
  return h.value;
}

class Placer {
 public:
  Placer(GraphLayout& layout, LayerPlacementCache* cache) : layout_(layout), cache_(cache) {}

  void run() {
    const int frames = int(layout_.clusters.size());
    for (int k = -1; k < frames; ++k)
      if (k < 0 || !layout_.clusters[size_t(k)].layer.isEmpty()) scopes_[k];
    for (size_t i = 0; i < layout_.nodes.size(); ++i) addNode(scopes_.at(layout_.nodes[i].owner), int(i), -1);
    for (const LayoutEdge& e : layout_.edges) addEdge(e);
    for (int k = 0; k < frames; ++k) addGroup(k);
    // Innermost first: a frame's size is known before the layer around it is laid out.
    std::vector<int> order;
    for (const auto& [k, scope] : scopes_) order.push_back(k);
    std::sort(order.begin(), order.end(), [this](int a, int b) { return depth(a) > depth(b); });
    for (int k : order) place(k);
    if (!layout_.error.isEmpty()) return;
    std::reverse(order.begin(), order.end());
    for (int k : order) compose(k);
    finishEdges();
  }

 private:
  int depth(int k) const { return int(framesAround(layout_, k).size()); }

  // Adds layout node `n` (or, with n < 0, the frame of cluster `frame`) to `scope`.
  void addNode(Scope& scope, int n, int frame) {
    LayoutNode sub = n >= 0 ? layout_.nodes[size_t(n)] : LayoutNode{};
    if (n < 0) sub.id = layout_.clusters[size_t(frame)].id;
    scope.subOf[n >= 0 ? n : -2 - frame] = int(scope.sub.nodes.size());
    scope.node.push_back(n);
    scope.frame.push_back(frame);
    scope.sub.nodes.push_back(std::move(sub));
  }

  // The sub node standing for layout node `n` inside the frame `k`: itself, or the child frame holding it.
  int liftInto(int k, int n) const {
    const Scope& scope = scopes_.at(k);
    int at = layout_.nodes[size_t(n)].owner;
    if (at == k) return scope.subOf.at(n);
    while (layout_.clusters[size_t(at)].owner != k) at = layout_.clusters[size_t(at)].owner;
    return -1 - at;  // resolved in place(), once the child frame has its sub node
  }

  // An edge belongs to the innermost frame around both its ends.
  void addEdge(const LayoutEdge& e) {
    const std::vector<int> a = framesAround(layout_, layout_.nodes[size_t(e.from)].owner);
    const std::vector<int> b = framesAround(layout_, layout_.nodes[size_t(e.to)].owner);
    int common = -1;
    for (int k : a)
      if (std::find(b.begin(), b.end(), k) != b.end()) {
        common = k;
        break;
      }
    pending_[common].push_back({liftInto(common, e.from), liftInto(common, e.to)});
  }

  void addGroup(int k) {
    const LayoutCluster& c = layout_.clusters[size_t(k)];
    if (!c.layer.isEmpty()) return;
    Scope& scope = scopes_.at(c.owner);
    LayoutCluster sub = c;
    sub.members.clear();
    for (int m : c.members) sub.members.push_back(scope.subOf.at(m));
    scope.groups.push_back(k);
    scope.sub.clusters.push_back(std::move(sub));
  }

  void place(int k) {
    Scope& scope = scopes_.at(k);
    for (auto& [child, s] : scopes_)
      if (child >= 0 && layout_.clusters[size_t(child)].owner == k) {
        addNode(scope, -1, child);
        const QSizeF inner = s.placement.size;
        scope.sub.nodes.back().size = QSizeF(inner.width() + 2 * kPad, inner.height() + 2 * kPad + kTitle);
      }
    for (auto [from, to] : pending_[k]) {
      const int f = from >= 0 ? from : scope.subOf.at(-2 - (-1 - from));
      const int t = to >= 0 ? to : scope.subOf.at(-2 - (-1 - to));
      if (f == t) continue;
      LayoutEdge e;
      e.from = f;
      e.to = t;
      scope.sub.edges.push_back(e);
    }
    const uint64_t key = keyOf(scope.sub);
    if (const auto* hit = cache_ ? cache_->find(key) : nullptr) {
      scope.placement = *hit;
      return;
    }
    placeWithDot(scope.sub);
    if (!scope.sub.error.isEmpty()) layout_.error = scope.sub.error;
    const QPointF origin = scope.sub.bounds.topLeft();
    scope.placement.size = scope.sub.bounds.size();
    for (const LayoutNode& n : scope.sub.nodes) scope.placement.boxes.push_back(n.box.translated(-origin));
    for (const LayoutCluster& c : scope.sub.clusters) scope.placement.clusters.push_back(c.box.translated(-origin));
    if (cache_) cache_->store(key, scope.placement);
  }

  void compose(int k) {
    const Scope& scope = scopes_.at(k);
    const QPointF origin = k < 0 ? QPointF(0, 0) : layout_.clusters[size_t(k)].box.topLeft() + QPointF(kPad, kPad + kTitle);
    for (size_t i = 0; i < scope.sub.nodes.size(); ++i) {
      const QRectF box = scope.placement.boxes[i].translated(origin);
      if (scope.node[i] >= 0) layout_.nodes[size_t(scope.node[i])].box = box;
      else layout_.clusters[size_t(scope.frame[i])].box = box;
    }
    for (size_t g = 0; g < scope.groups.size(); ++g)
      layout_.clusters[size_t(scope.groups[g])].box = scope.placement.clusters[g].translated(origin);
    if (k < 0) layout_.bounds = QRectF(QPointF(0, 0), scope.placement.size);
  }

  void finishEdges() {
    for (LayoutEdge& e : layout_.edges) {
      const QRectF& a = layout_.nodes[size_t(e.from)].box;
      const QRectF& b = layout_.nodes[size_t(e.to)].box;
      e.start = QPointF(a.center().x(), a.bottom());
      e.end = QPointF(b.center().x(), b.top());
    }
  }

  GraphLayout& layout_;
  LayerPlacementCache* cache_;
  std::map<int, Scope> scopes_;  // -1: the whole picture; else a frame's cluster index
  std::map<int, std::vector<std::pair<int, int>>> pending_;
};

}  // namespace

void placeLayers(GraphLayout& layout, LayerPlacementCache* cache) {
  if (!layout.layers || layout.layers->layers().size() <= 1) {
    placeWithDot(layout);
    return;
  }
  QElapsedTimer timer;
  timer.start();
  if (layout.nodes.empty()) return;
  Placer(layout, cache).run();
  layout.layoutMs = double(timer.nsecsElapsed()) / 1e6;
}

}  // namespace tessera::ui
