#include "fusion/partition.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "ops/registry.h"
#include "ops/stats.h"

namespace tessera::fusion_detail {
namespace {

std::string fmt(double x, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", x, unit);
  return buf;
}

std::vector<const Node*> readers(const Value* v) {
  std::vector<const Node*> out;
  for (const Use& u : v->uses())
    if (std::find(out.begin(), out.end(), u.node) == out.end()) out.push_back(u.node);
  return out;
}

std::string kib(int64_t bytes) { return fmt(double(bytes) / 1024.0, "KiB"); }

}  // namespace

Partitioner::RowPasses Partitioner::rowPasses(const std::vector<const std::vector<int>*>& groups,
                                              const Space& space) const {
  RowPasses r;
  if (space.kind != SpaceKind::Reduction || space.windowed) return r;
  int64_t k = 1;
  for (int64_t a : space.axes) k *= space.shape[size_t(a)];
  bool rowWide = false;
  for (const auto* members : groups)
    for (int m : *members) {
      const Node* n = order_[size_t(m)];
      const Space& s = spaces_[size_t(m)];
      if (s.kind == SpaceKind::Reduction) {
        bool twoPass = opTraits(n->op()).rowNormalization;
        r.passes += twoPass ? 2 : 1;
        rowWide |= twoPass;
        if (r.rowBytes == 0 && n->numInputs() > 0 && n->input(0)) {
          r.rowBytes = k * int64_t(dtypeSize(n->input(0)->dtype()));
          r.rows = k > 0 ? numElements(space.shape) / k : 0;
        }
      } else if (s.kind == SpaceKind::Pointwise && s.shape == space.shape) {
        rowWide = true;
      }
    }
  if (r.passes > 0 && rowWide) ++r.passes;  // the row-wide outputs are computed in a last pass over the row
  return r;
}

Partitioner::Partitioner(const Graph& graph, const FusionOptions& options)
    : graph_(graph), options_(options), order_(graph.topoOrder()) {
  for (size_t i = 0; i < order_.size(); ++i) {
    index_[order_[i]] = int(i);
    spaces_.push_back(nodeSpace(*order_[i]));
    flops_.push_back(double(nodeFlops(*order_[i])));
  }
  seen_.assign(order_.size(), 0);
  attentionOf_.assign(order_.size(), -1);
  if (options_.attention) attention_ = findAttention(graph);
  for (size_t a = 0; a < attention_.size(); ++a)
    for (const Node* n : attention_[a].nodes) attentionOf_[size_t(index_.at(n))] = int(a);
}

std::vector<std::pair<int, const Value*>> Partitioner::producerEdges(int c, const Constraints& k) const {
  std::vector<std::pair<int, const Value*>> edges;
  for (const Value* v : order_[size_t(c)]->inputs()) {
    if (!v || !v->producer()) continue;
    int p = index_.at(v->producer());
    bool known = false;
    for (auto& e : edges) known |= e.first == p;
    if (!known) edges.emplace_back(p, v);
  }
  // Forced edges first, so a forced producer group is the one the consumer joins; then the latest producer
  // first: it is the closest one, and joining an earlier producer first could only end in a cycle.
  std::stable_sort(edges.begin(), edges.end(), [&](auto& a, auto& b) {
    bool fa = k.forced.count({a.first, c}) > 0, fb = k.forced.count({b.first, c}) > 0;
    return fa != fb ? fa : a.first > b.first;
  });
  return edges;
}

void Partitioner::run(const Constraints& k, PassContext* ctx) {
  groupOf_.assign(order_.size(), -1);
  groups_.clear();
  decisions_.clear();
  forcedCosts_.clear();
  for (int c = 0; c < int(order_.size()); ++c) {
    groupOf_[size_t(c)] = int(groups_.size());
    groups_.push_back({{c}, spaces_[size_t(c)], flops_[size_t(c)]});
    for (auto& [p, v] : producerEdges(c, k)) decide(p, c, v, k, ctx);
  }
  noteDeclinedAttention(k);
}

void Partitioner::decide(int p, int c, const Value* v, const Constraints& k, PassContext* ctx) {
  FusionDecision d;
  d.producer = order_[size_t(p)]->id();
  d.consumer = order_[size_t(c)]->id();
  Edge e{p, c};
  d.forced = k.forced.count(e) > 0;
  auto separate = [&](std::string rule, std::string reason) {
    d.rule = std::move(rule);
    d.reason = std::move(reason);
    decisions_.push_back(d);
  };
  int g = groupOf_[size_t(p)], t = groupOf_[size_t(c)];
  if (g == t && groups_[size_t(g)].space.kind == SpaceKind::Attention) {
    d.fused = true;
    return separate("attention", "already in the same kernel through another input; " +
                                     attention_[size_t(attentionOf_[size_t(c)])].reason());
  }
  if (g == t) {
    d.fused = true;
    MergeCheck check = mergeSpaces(groups_[size_t(g)].space, spaces_[size_t(c)]);
    return separate(check.rule, "already in the same kernel through another input; " + check.reason);
  }
  if (auto f = k.forbidden.find(e); f != k.forbidden.end()) return separate("override", f->second);
  // A forbidden pair stays apart even when the merge comes through another edge.
  for (const auto& [edge, why] : k.forbidden) {
    int a = groupOf_[size_t(edge.first)], b = groupOf_[size_t(edge.second)];
    if ((a == g && b == t) || (a == t && b == g))
      return separate("override", "would join " + order_[size_t(edge.first)]->id() + " and " +
                                      order_[size_t(edge.second)]->id() + ", which are kept apart: " + why);
  }
  if (activeAttention(p, k) >= 0 || activeAttention(c, k) >= 0) return decideAttention(d, p, c, k, ctx);
  auto sc = k.singleConsumer.find(v);
  if (!d.forced && sc != k.singleConsumer.end()) return separate("single-consumer", singleConsumerReason(v, sc->second));
  MergeCheck check = mergeSpaces(groups_[size_t(g)].space, groups_[size_t(t)].space);
  if (groups_[size_t(g)].members.size() == 1)
    if (auto folded = transposeIntoConv(*order_[size_t(p)], *order_[size_t(c)], groups_[size_t(t)].space)) check = *folded;
  if (!check.merged) return separate(check.rule, check.reason);
  if (auto why = unstorableOutput(g, t, *check.merged)) return separate("output-shape", *why);
  if (wouldCycle(g, t))
    return separate("cycle", d.consumer + " also reads, through another kernel, a value computed from " + d.producer +
                                 ", so one kernel would wait on itself");
  ForcedCost cost = profitability(g, t, check);
  if (!cost.rule.empty() && !d.forced) return separate(cost.rule, cost.reason);
  if (ctx && !ctx->tryRewrite()) return separate("fuel", "the fuel ran out before this fusion");
  if (d.forced) {
    if (cost.rule.empty() && sc != k.singleConsumer.end()) {
      cost.rule = "single-consumer";
      cost.reason = singleConsumerReason(v, sc->second);
    }
    forcedCosts_[e] = cost;
  }
  d.fused = true;
  d.rule = check.rule;
  d.reason = check.reason;
  if (d.forced) {
    d.rule = "override";
    d.reason = "forced by override (" + check.rule + ": " + check.reason + ")";
    if (!cost.rule.empty()) d.reason += "; breaks " + cost.rule + ": " + cost.reason;
  }
  d.reason += rowPassNote(g, t, *check.merged);
  decisions_.push_back(d);
  merge(g, t, check);
}

Partitioner::Traffic Partitioner::withRereads(int group) const {
  const GroupState& s = groups_[size_t(group)];
  Traffic tr = traffic(group, -1);
  tr.bytes += rowPasses({&s.members}, s.space).rereadBytes(options_.rowCacheBytes);
  return tr;
}

// Said once, on the edge that makes a row kernel read its row more than once.
std::string Partitioner::rowPassNote(int g, int t, const Space& merged) const {
  const GroupState& a = groups_[size_t(g)];
  const GroupState& b = groups_[size_t(t)];
  RowPasses rows = rowPasses({&a.members, &b.members}, merged);
  if (rows.passes < 2 || rowPasses({&a.members}, a.space).passes > 1 || rowPasses({&b.members}, b.space).passes > 1)
    return "";
  bool onChip = rows.rowBytes <= options_.rowCacheBytes;
  return "; the kernel reads each row of " + kib(rows.rowBytes) + " in " + std::to_string(rows.passes) + " passes, " +
         (onChip ? "within" : "over") + " the " + kib(options_.rowCacheBytes) + " a block keeps on chip (row-cache" +
         (onChip ? ")" : ": the later passes read DRAM again)");
}

std::string Partitioner::singleConsumerReason(const Value* v, int kernels) const {
  std::string names;
  std::vector<const Node*> rs = readers(v);
  for (size_t i = 0; i < rs.size() && i < 4; ++i) names += (i ? ", " : "") + rs[i]->id();
  if (rs.size() > 4) names += ", …";
  return "%" + v->name() + " is read by " + std::to_string(rs.size()) + " nodes in " + std::to_string(kernels) +
         " kernels (" + names + "), so it stays a kernel output written once rather than recomputed in each";
}

bool Partitioner::wouldCycle(int g, int t) const {
  const auto& a = groups_[size_t(g)].members;
  const auto& b = groups_[size_t(t)].members;
  int first = std::min(a.front(), b.front());
  ++stamp_;
  std::vector<int> stack;
  auto inMerged = [&](int n) { return groupOf_[size_t(n)] == g || groupOf_[size_t(n)] == t; };
  for (const auto* members : {&a, &b})
    for (int m : *members)
      for (const Value* v : order_[size_t(m)]->inputs())
        if (v && v->producer() && !inMerged(index_.at(v->producer()))) stack.push_back(index_.at(v->producer()));
  // A path that leaves the merged set and comes back into it would make the kernel depend on itself.
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    if (seen_[size_t(n)] == stamp_) continue;
    seen_[size_t(n)] = stamp_;
    if (inMerged(n)) return true;
    if (n < first) continue;  // topological order: nothing before the merged set can depend on it
    for (const Value* v : order_[size_t(n)]->inputs())
      if (v && v->producer()) stack.push_back(index_.at(v->producer()));
  }
  return false;
}

// A pointwise kernel's nest runs over its widest output; every other value it stores must be those elements
// without leading 1s, as a value broadcast into the nest has no loop of its own to be stored by. Values read
// by nodes not visited yet count as stored: if such a reader joins later, that merge is checked again.
std::optional<std::string> Partitioner::unstorableOutput(int g, int t, const Space& merged) const {
  if (merged.kind != SpaceKind::Pointwise) return std::nullopt;
  std::vector<const Value*> stored;
  for (int grp : {g, t})
    for (int m : groups_[size_t(grp)].members)
      for (const Value* v : order_[size_t(m)]->outputs()) {
        bool out = v->isGraphOutput();
        for (const Use& u : v->uses()) out |= !inGroups(u.node, g, t);
        if (out) stored.push_back(v);
      }
  const Value* widest = nullptr;
  for (const Value* v : stored)
    if (!widest || v->shape().size() > widest->shape().size()) widest = v;
  for (const Value* v : stored) {
    const Shape &s = v->shape(), &w = widest->shape();
    size_t lead = w.size() - s.size();
    bool ones = std::all_of(w.begin(), w.begin() + long(lead), [](int64_t e) { return e == 1; });
    if (ones && std::equal(s.begin(), s.end(), w.begin() + long(lead))) continue;
    return "%" + v->name() + " " + shapeToString(s) + " leaves the kernel (" +
           (v->isGraphOutput() ? "a graph output" : "read outside it") + "), but the kernel's nest would run over %" +
           widest->name() + " " + shapeToString(w) + ", where it is a broadcast slice with no loop to store it by";
  }
  return std::nullopt;
}

bool Partitioner::inGroups(const Node* n, int g, int t) const {
  int grp = groupOf_[size_t(index_.at(n))];
  return grp >= 0 && (grp == g || grp == t);
}

Partitioner::Traffic Partitioner::traffic(int g, int t) const {
  // A node not visited yet has group -1: it is outside both groups (it reads their values from memory), so
  // t = -1 (one group alone) must not match it, or a lone group's outputs to later nodes would cost nothing.
  auto inside = [&](const Node* n) { return inGroups(n, g, t); };
  Traffic tr;
  std::unordered_set<const Value*> read;
  for (int grp : {g, t}) {
    if (grp < 0) continue;
    for (int m : groups_[size_t(grp)].members) {
      const Node* n = order_[size_t(m)];
      for (const Value* v : n->inputs())
        if (v && (!v->producer() || !inside(v->producer())) && read.insert(v).second) tr.bytes += v->type().bytes();
      for (const Value* v : n->outputs()) {
        bool out = v->isGraphOutput();
        for (const Use& u : v->uses()) out |= !inside(u.node);
        if (out) tr.bytes += v->type().bytes();
      }
    }
  }
  tr.inputs = int(read.size());
  return tr;
}

double Partitioner::timeUs(const Traffic& tr, double flops) const {
  return options_.launchUs + double(tr.bytes) / (options_.bandwidthGBs * 1e3) + flops / (options_.gflops * 1e3);
}

double Partitioner::estimateUs(int group) const {
  return timeUs(withRereads(group), groups_[size_t(group)].flops);
}

ForcedCost Partitioner::profitability(int g, int t, const MergeCheck& check) const {
  const GroupState& a = groups_[size_t(g)];
  const GroupState& b = groups_[size_t(t)];
  ForcedCost c;
  c.duplicatedNodes = check.recompute > 1 ? int64_t(a.members.size()) : 0;
  c.extraFlops = int64_t(a.flops * (check.recompute - 1));
  size_t nodes = a.members.size() + b.members.size();
  if (int(nodes) > options_.maxGroupNodes) {
    c.rule = "group-size-limit";
    c.reason = "the kernel would hold " + std::to_string(nodes) + " nodes, over the limit of " +
               std::to_string(options_.maxGroupNodes);
    return c;
  }
  Traffic merged = traffic(g, t);
  int reductions = 0;
  for (const auto* m : {&a.members, &b.members})
    for (int n : *m) reductions += spaces_[size_t(n)].kind == SpaceKind::Reduction;
  int registers = 24 + 4 * merged.inputs + 2 * int(nodes) + 8 * reductions;
  if (registers > options_.registerLimit) {
    c.rule = "register-limit";
    c.reason = "about " + std::to_string(registers) + " registers per thread (" + std::to_string(merged.inputs) +
               " inputs, " + std::to_string(nodes) + " nodes), over the limit of " +
               std::to_string(options_.registerLimit);
    return c;
  }
  RowPasses rows = rowPasses({&a.members, &b.members}, *check.merged);
  int64_t reread = rows.rereadBytes(options_.rowCacheBytes);
  merged.bytes += reread;
  double fused = timeUs(merged, a.flops * check.recompute + b.flops);
  double apart = timeUs(withRereads(g), a.flops) + timeUs(withRereads(t), b.flops);
  if (fused > apart && reread > 0) {
    c.rule = "row-cache";
    c.reason = "the kernel would read each row of " + kib(rows.rowBytes) + " in " + std::to_string(rows.passes) +
               " passes, over the " + kib(options_.rowCacheBytes) + " a block keeps on chip, so every pass after "
               "the first reads it from DRAM again: estimated at " + fmt(fused, "µs") + " against " +
               fmt(apart, "µs") + " for the two kernels";
  } else if (fused > apart) {
    c.rule = "cost";
    c.reason = "the fused kernel is estimated at " + fmt(fused, "µs") + " against " + fmt(apart, "µs") +
               " for the two kernels, since the group's work would repeat " +
               std::to_string(int64_t(check.recompute)) + " times (+" + std::to_string(c.extraFlops) + " FLOPs)";
  }
  return c;
}

void Partitioner::merge(int g, int t, const MergeCheck& check) {
  GroupState& a = groups_[size_t(g)];
  GroupState& b = groups_[size_t(t)];
  for (int m : b.members) groupOf_[size_t(m)] = g;
  a.members.insert(a.members.end(), b.members.begin(), b.members.end());
  std::sort(a.members.begin(), a.members.end());
  a.flops = a.flops * check.recompute + b.flops;
  a.space = *check.merged;
  b.members.clear();
}

int Partitioner::learnSingleConsumer(Constraints& k) const {
  int added = 0;
  for (const Node* n : order_)
    for (const Value* v : n->outputs()) {
      if (v->isGraphOutput() || k.singleConsumer.count(v)) continue;
      std::set<int> kernels;
      for (const Node* r : readers(v)) kernels.insert(groupOf_[size_t(index_.at(r))]);
      if (kernels.size() < 2) continue;
      k.singleConsumer[v] = int(kernels.size());
      ++added;
    }
  return added;
}

}  // namespace tessera::fusion_detail
