#include "fusion/fusion.h"

#include <algorithm>
#include <queue>

#include "fusion/partition.h"
#include "fusion/patterns.h"
#include "ir/error.h"

namespace tessera {
namespace {

using namespace fusion_detail;

GroupKind kindOf(const Space& s) {
  switch (s.kind) {
    case SpaceKind::Pointwise: return GroupKind::Pointwise;
    case SpaceKind::Reduction: return GroupKind::Reduction;
    case SpaceKind::Gemm: return GroupKind::GemmEpilogue;
    case SpaceKind::Conv: return GroupKind::ConvEpilogue;
    case SpaceKind::Move: return GroupKind::DataMovement;
    case SpaceKind::Attention: return GroupKind::Attention;
    case SpaceKind::Opaque: return GroupKind::Opaque;
  }
  return GroupKind::Opaque;
}

bool feeds(const Node* p, const Node* c) {
  for (const Value* v : c->inputs())
    if (v && v->producer() == p) return true;
  return false;
}

// Runs the partition until the single-consumer rule stops learning (each round only adds values).
void settle(Partitioner& part, Constraints& k, int& iterations) {
  do {
    part.run(k, nullptr);
    ++iterations;
  } while (part.learnSingleConsumer(k) > 0 && iterations < 64);
}

// Live groups in topological order of the groups (ties: earliest first node), as indices.
std::vector<int> groupOrder(const Partitioner& part) {
  const auto& groups = part.groups();
  std::vector<std::vector<int>> succ(groups.size());
  std::vector<int> indeg(groups.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g)
    for (int m : groups[g].members)
      for (const Value* v : part.order()[size_t(m)]->inputs()) {
        if (!v || !v->producer()) continue;
        int from = part.groupOf(part.indexOf(v->producer()));
        if (from == int(g) || std::count(succ[size_t(from)].begin(), succ[size_t(from)].end(), int(g))) continue;
        succ[size_t(from)].push_back(int(g));
        ++indeg[g];
      }
  using Item = std::pair<int, int>;  // first member, group
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (size_t g = 0; g < groups.size(); ++g)
    if (!groups[g].members.empty() && indeg[g] == 0) ready.push({groups[g].members.front(), int(g)});
  std::vector<int> out;
  while (!ready.empty()) {
    int g = ready.top().second;
    ready.pop();
    out.push_back(g);
    for (int s : succ[size_t(g)])
      if (--indeg[size_t(s)] == 0) ready.push({groups[size_t(s)].members.front(), s});
  }
  return out;
}

FusedGroup describeGroup(const Partitioner& part, int g, const std::string& id) {
  const GroupState& s = part.groups()[size_t(g)];
  FusedGroup out;
  out.id = id;
  out.kind = kindOf(s.space);
  for (int m : s.members) {
    const Node* n = part.order()[size_t(m)];
    out.nodes.push_back({n->id(), n->op()});
    for (const Value* v : n->inputs())
      if (v && (!v->producer() || part.groupOf(part.indexOf(v->producer())) != g) &&
          std::find(out.inputs.begin(), out.inputs.end(), v->name()) == out.inputs.end())
        out.inputs.push_back(v->name());
    for (const Value* v : n->outputs()) {
      bool written = v->isGraphOutput();
      for (const Use& u : v->uses()) written |= part.groupOf(part.indexOf(u.node)) != g;
      if (written) out.outputs.push_back(v->name());
    }
  }
  out.estimatedUs = part.estimateUs(g);
  return out;
}

struct Resolved {
  Constraints constraints;
  std::vector<OverrideStatus> statuses;  // fusion overrides only, in order
  std::vector<size_t> splits;            // indices into statuses
};

Resolved resolveEdges(const Graph& graph, const Partitioner& part, const std::vector<Override>& overrides) {
  Resolved r;
  for (const Override& o : overrides) {
    if (o.kind == OverrideKind::DisablePass) continue;
    OverrideStatus st;
    st.override = o;
    st.status = OverrideState::Applied;
    if (o.kind == OverrideKind::Split) {
      r.splits.push_back(r.statuses.size());
      r.statuses.push_back(st);
      continue;
    }
    const Node* p = graph.findNode(o.producer);
    const Node* c = graph.findNode(o.consumer);
    if (!p || !c || !feeds(p, c)) {
      st.status = OverrideState::Stale;
      st.detail = !p   ? "no node '" + o.producer + "' in this graph"
                  : !c ? "no node '" + o.consumer + "' in this graph"
                       : "'" + o.producer + "' does not feed '" + o.consumer + "' in this graph";
    } else {
      Edge e{part.indexOf(p), part.indexOf(c)};
      if (o.kind == OverrideKind::ForceFuse) r.constraints.forced.insert(e);
      else r.constraints.forbidden[e] = "forbidden by override";
    }
    r.statuses.push_back(st);
  }
  return r;
}

// Split targets are read on the partition without splits: the group of a node id, else a group id "kN".
void applySplits(const Graph& graph, Partitioner& part, Resolved& r) {
  std::vector<int> order = groupOrder(part);
  for (size_t i : r.splits) {
    OverrideStatus& st = r.statuses[i];
    int g = -1;
    if (const Node* n = graph.findNode(st.override.group)) g = part.groupOf(part.indexOf(n));
    else if (st.override.group.size() > 1 && st.override.group[0] == 'k') {
      size_t pos = 0;
      try {
        size_t k = std::stoul(st.override.group.substr(1), &pos);
        if (pos + 1 == st.override.group.size() && k < order.size()) g = order[k];
      } catch (const std::exception&) {
      }
    }
    if (g < 0) {
      st.status = OverrideState::Stale;
      st.detail = "no node or group '" + st.override.group + "' in this graph";
      continue;
    }
    const auto& members = part.groups()[size_t(g)].members;
    st.detail = "split " + std::to_string(members.size()) + " nodes into their own kernels";
    for (int c : members)
      for (const Value* v : part.order()[size_t(c)]->inputs())
        if (v && v->producer() && part.groupOf(part.indexOf(v->producer())) == g)
          r.constraints.forbidden[{part.indexOf(v->producer()), c}] =
              "split by override (the group of '" + st.override.group + "')";
  }
}

void reportForced(const Partitioner& part, const FusionResult& result, Resolved& r) {
  for (OverrideStatus& st : r.statuses) {
    if (st.status != OverrideState::Applied || st.override.kind != OverrideKind::ForceFuse) continue;
    const FusionDecision* d = result.decision(st.override.producer, st.override.consumer);
    if (!d) continue;
    if (!d->fused) {
      st.status = OverrideState::Refused;
      st.rule = d->rule;
      st.detail = d->reason;
      continue;
    }
    for (const auto& [edge, cost] : part.forcedCosts())
      if (part.order()[size_t(edge.first)]->id() == st.override.producer &&
          part.order()[size_t(edge.second)]->id() == st.override.consumer) {
        st.rule = cost.rule;
        st.detail = cost.rule.empty() ? "fused as asked" : "breaks " + cost.rule + ": " + cost.reason;
        st.duplicatedNodes = cost.duplicatedNodes;
        st.extraFlops = cost.extraFlops;
      }
  }
}

}  // namespace

std::string_view groupKindName(GroupKind kind) {
  switch (kind) {
    case GroupKind::Pointwise: return "pointwise";
    case GroupKind::Reduction: return "reduction";
    case GroupKind::GemmEpilogue: return "gemm+epilogue";
    case GroupKind::ConvEpilogue: return "conv+epilogue";
    case GroupKind::DataMovement: return "data-movement";
    case GroupKind::Attention: return "attention";
    case GroupKind::Opaque: return "opaque";
  }
  return "?";
}

const FusedGroup* FusionResult::groupOf(const std::string& nodeId) const {
  for (const FusedGroup& g : groups)
    for (const GroupNode& n : g.nodes)
      if (n.id == nodeId) return &g;
  return nullptr;
}

const FusionDecision* FusionResult::decision(const std::string& producer, const std::string& consumer) const {
  for (const FusionDecision& d : decisions)
    if (d.producer == producer && d.consumer == consumer) return &d;
  return nullptr;
}

FusionResult fuseGraph(const Graph& graph, const FusionOptions& options, const std::vector<Override>& overrides,
                       PassContext* context) {
  Partitioner part(graph, options);
  Resolved r = resolveEdges(graph, part, overrides);
  FusionResult result;
  settle(part, r.constraints, result.iterations);
  if (!r.splits.empty()) {
    applySplits(graph, part, r);
    settle(part, r.constraints, result.iterations);
  }
  part.run(r.constraints, context);  // the recorded run, spending fuel
  ++result.iterations;
  labelPatterns(part, part.decisions());
  std::vector<int> order = groupOrder(part);
  for (size_t i = 0; i < order.size(); ++i)
    result.groups.push_back(describeGroup(part, order[i], std::string(1, 'k').append(std::to_string(i))));
  result.decisions = part.decisions();
  reportForced(part, result, r);
  result.overrides = std::move(r.statuses);
  return result;
}

namespace {

class FusionPass : public Pass {
 public:
  FusionPass(std::shared_ptr<FusionResult> sink, FusionOptions options, std::vector<Override> overrides)
      : sink_(std::move(sink)), options_(options), overrides_(std::move(overrides)) {}
  std::string name() const override { return "fuse"; }
  std::string summary() const override { return "partition the graph into kernels (groups) and record why"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"groups", "kernels after fusion"},
            {"fused-edges", "producer → consumer edges inside a kernel"},
            {"separate-edges", "edges between kernels"},
            {"iterations", "partitions run until the single-consumer rule settled"}};
  }
  void run(Graph& graph, PassContext& context) override {
    FusionResult result = fuseGraph(graph, options_, overrides_, &context);
    context.count("groups", int64_t(result.groups.size()));
    for (const FusionDecision& d : result.decisions) context.count(d.fused ? "fused-edges" : "separate-edges");
    context.count("iterations", result.iterations);
    if (sink_) *sink_ = std::move(result);
  }

 private:
  std::shared_ptr<FusionResult> sink_;
  FusionOptions options_;
  std::vector<Override> overrides_;
};

}  // namespace

std::unique_ptr<Pass> createFusionPass(std::shared_ptr<FusionResult> sink, FusionOptions options,
                                       std::vector<Override> overrides) {
  return std::make_unique<FusionPass>(std::move(sink), options, std::move(overrides));
}

}  // namespace tessera
