#include "ui/graph/graph_layout.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include <QLocale>
#include <QObject>
#include <QStringList>

#include "ops/registry.h"
#include "ui/graph/layer_picture.h"

namespace tessera::ui {

NodeHue hueOf(const std::string& op) {
  const OpSchema* schema = OpRegistry::instance().find(op);
  switch (schema ? schema->category : OpCategory::Other) {
    case OpCategory::Pointwise: return NodeHue::Pointwise;
    case OpCategory::Reduction: return NodeHue::Reduction;
    case OpCategory::Matmul:
    case OpCategory::Conv: return NodeHue::MatmulConv;
    case OpCategory::DataMovement: return NodeHue::DataMovement;
    case OpCategory::Constant:
    case OpCategory::Other: return NodeHue::InputConstant;
  }
  return NodeHue::InputConstant;
}

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

// "1×64×56×56 f32": the second line of a node; a sequence or optional as its type reads ("seq<f32>").
QString typeLine(const TensorType& t) {
  if (!t.isTensor()) return q(t.toString());
  QStringList dims;
  for (int64_t d : t.shape) dims << QString::number(d);
  return (dims.isEmpty() ? QStringLiteral("scalar") : dims.join(QChar(0xd7))) + " " + q(std::string(dtypeName(t.dtype)));
}

bool contains(const std::vector<std::string>& sorted, const std::string& id) {
  return std::binary_search(sorted.begin(), sorted.end(), id);
}

// Builds nodes and edges, then folds collapsed groups into one node each.
class Describer {
 public:
  explicit Describer(const StepPicture& step) : step_(step) {}

  GraphLayout run() {
    for (const Value* v : step_.graph->inputs()) addInput(*v);
    for (const Node* n : step_.graph->topoOrder()) addNode(*n, markOf(n->id()));
    if (step_.previous)
      for (const std::string& id : step_.removed)
        if (const Node* n = step_.previous->findNode(id)) addNode(*n, NodeMark::Removed);
    for (const Node* n : step_.graph->topoOrder()) addEdgesInto(*n, false);
    if (step_.previous)
      for (const std::string& id : step_.removed)
        if (const Node* n = step_.previous->findNode(id)) addGhostEdges(*n);
    if (step_.fusion) addClusters();
    return std::move(out_);
  }

 private:
  NodeMark markOf(const std::string& id) const {
    if (contains(step_.added, id)) return NodeMark::Added;
    if (contains(step_.rewritten, id)) return NodeMark::Rewritten;
    return NodeMark::None;
  }

  void addInput(const Value& v) {
    inputIndex_[v.name()] = int(out_.nodes.size());
    out_.nodes.push_back(describeInput(v));
  }

  void addNode(const Node& node, NodeMark mark) {
    auto& index = mark == NodeMark::Removed ? ghostIndex_ : nodeIndex_;
    index[node.id()] = int(out_.nodes.size());
    out_.nodes.push_back(describeNode(node, mark));
  }

  // The layout node standing for the producer of `v`, or -1 (initializers are not drawn).
  int sourceOf(const Value& v, bool preferGhost) const {
    if (v.producer()) {
      const std::string& id = v.producer()->id();
      if (preferGhost)
        if (auto it = ghostIndex_.find(id); it != ghostIndex_.end()) return it->second;
      if (auto it = nodeIndex_.find(id); it != nodeIndex_.end()) return it->second;
      if (auto it = ghostIndex_.find(id); it != ghostIndex_.end()) return it->second;
      return -1;
    }
    auto it = inputIndex_.find(v.name());
    return it == inputIndex_.end() ? -1 : it->second;
  }

  void addEdge(int from, int to, const Value& v, bool ghost) {
    if (from < 0 || to < 0) return;
    LayoutEdge e;
    e.from = from;
    e.to = to;
    e.value = q(v.name());
    e.tooltip = valueTooltip(v);
    e.producerId = out_.nodes[size_t(from)].id;
    e.consumerId = out_.nodes[size_t(to)].id;
    e.ghost = ghost;
    out_.edges.push_back(e);
  }

  void addEdgesInto(const Node& n, bool ghost) {
    const int to = ghost ? ghostIndex_.at(n.id()) : nodeIndex_.at(n.id());
    for (const Value* v : n.inputs())
      if (v) addEdge(sourceOf(*v, ghost), to, *v, ghost);
  }

  // A removed node: its inputs as they were, and edges to the consumers it had that still exist.
  void addGhostEdges(const Node& n) {
    addEdgesInto(n, true);
    const int from = ghostIndex_.at(n.id());
    for (const Value* v : n.outputs()) {
      if (!v) continue;
      for (const Use& u : v->uses())
        if (auto it = nodeIndex_.find(u.node->id()); it != nodeIndex_.end()) addEdge(from, it->second, *v, true);
    }
  }

  void addClusters() {
    for (const FusedGroup& g : step_.fusion->groups) {
      LayoutCluster c;
      c.id = q(g.id);
      c.label = c.id + QStringLiteral(" · ") + q(std::string(groupKindName(g.kind)));
      if (auto note = step_.groupNotes.find(g.id); note != step_.groupNotes.end()) c.label += QStringLiteral(" · ") + q(note->second);
      c.kind = g.kind;
      for (const GroupNode& gn : g.nodes)
        if (auto it = nodeIndex_.find(gn.id); it != nodeIndex_.end()) {
          c.members.push_back(it->second);
          out_.nodes[size_t(it->second)].group = c.id;
        }
      if (c.members.empty()) continue;
      c.collapsed = step_.collapsed.count(c.id) > 0;
      out_.clusters.push_back(std::move(c));
    }
  }

  const StepPicture& step_;
  GraphLayout out_;
  std::unordered_map<std::string, int> nodeIndex_, ghostIndex_, inputIndex_;
};

// Replaces the members of each collapsed cluster by one group node; edges inside it disappear.
void foldCollapsed(GraphLayout& layout) {
  if (std::none_of(layout.clusters.begin(), layout.clusters.end(), [](const LayoutCluster& c) { return c.collapsed; }))
    return;
  std::vector<int> remap(layout.nodes.size());
  for (size_t i = 0; i < remap.size(); ++i) remap[i] = int(i);
  std::vector<bool> dropped(layout.nodes.size(), false);
  for (LayoutCluster& c : layout.clusters) {
    if (!c.collapsed) continue;
    LayoutNode g;
    g.id = c.id;
    g.title = c.label;
    g.subtitle = QObject::tr("%n nodes (collapsed)", nullptr, int(c.members.size()));
    g.tooltip = g.title + "\n" + QObject::tr("double-click or right-click to expand");
    g.hue = layout.nodes[size_t(c.members.front())].hue;
    g.group = c.id;
    g.isGroup = true;
    g.owner = layout.nodes[size_t(c.members.front())].owner;
    const int gi = int(layout.nodes.size());
    layout.nodes.push_back(g);
    remap.push_back(gi);
    dropped.push_back(false);
    for (int m : c.members) {
      remap[size_t(m)] = gi;
      dropped[size_t(m)] = true;
    }
    c.members = {gi};
  }
  std::vector<LayoutEdge> edges;
  for (LayoutEdge e : layout.edges) {
    e.from = remap[size_t(e.from)];
    e.to = remap[size_t(e.to)];
    if (e.from != e.to) edges.push_back(e);
  }
  // Compact: drop the folded nodes and renumber.
  std::vector<int> newIndex(layout.nodes.size(), -1);
  std::vector<LayoutNode> nodes;
  for (size_t i = 0; i < layout.nodes.size(); ++i)
    if (!dropped[i]) {
      newIndex[i] = int(nodes.size());
      nodes.push_back(std::move(layout.nodes[i]));
    }
  for (LayoutEdge& e : edges) {
    e.from = newIndex[size_t(e.from)];
    e.to = newIndex[size_t(e.to)];
  }
  for (LayoutCluster& c : layout.clusters) {
    std::vector<int> members;
    for (int m : c.members)
      if (newIndex[size_t(m)] >= 0) members.push_back(newIndex[size_t(m)]);
    c.members = members;
  }
  layout.nodes = std::move(nodes);
  layout.edges = std::move(edges);
}

}  // namespace

QString valueTooltip(const Value& v) {
  if (!v.type().isTensor())  // a sequence or optional: its size is data, known when it runs
    return QStringLiteral("%%1: %2 · held on the host").arg(q(v.name()), q(v.type().toString()));
  return QStringLiteral("%%1: %2 · %3 bytes").arg(q(v.name()), q(v.type().toString())).arg(QLocale().toString(qlonglong(v.type().bytes())));
}

LayoutNode describeInput(const Value& v) {
  LayoutNode n;
  n.id = q(v.name());
  n.title = QStringLiteral("input %") + q(v.name());
  n.subtitle = typeLine(v.type());
  n.tooltip = valueTooltip(v);
  n.hue = NodeHue::InputConstant;
  n.isInput = true;
  return n;
}

LayoutNode describeNode(const Node& node, NodeMark mark) {
  LayoutNode n;
  n.id = q(node.id());
  n.title = q(node.op());
  n.subtitle = node.output(0) ? typeLine(node.output(0)->type()) : QString();
  n.tooltip = q(node.op() + " " + node.id());
  for (const Value* v : node.outputs())
    if (v) n.tooltip += "\n" + valueTooltip(*v);
  n.hue = hueOf(node.op());
  n.mark = mark;
  return n;
}

GraphLayout describeStep(const StepPicture& step) {
  if (!step.graph) return {};
  auto tree = step.layers ? step.layers : std::make_shared<const LayerTree>(LayerTree::build(*step.graph));
  GraphLayout layout = drawsLayers(*tree, *step.graph) ? describeLayers(step, tree) : Describer(step).run();
  foldCollapsed(layout);
  return layout;
}

}  // namespace tessera::ui
