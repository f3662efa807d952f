// Node matching (mapping, id, name, provenance) and the group changes that follow from it.
#include "compare/match.h"

#include <algorithm>
#include <set>

#include "ir/enum_names.h"
#include "passes/fingerprint.h"

namespace tessera::compare {
namespace {

using Origins = std::map<std::string, std::set<std::string>>;  // final node id → input node ids it came from

// Through the recorded steps: a node a step added came from the nodes that step removed (a rewrite), or from
// nothing before (then from itself); a node a pass folded another into keeps that one too.
Origins originsOf(const CompileResult& r) {
  Origins o;
  if (r.input)
    for (const Node* n : r.input->topoOrder()) o[n->id()] = {n->id()};
  for (const Step& s : r.steps) {
    std::set<std::string> from;
    for (const std::string& id : s.removed)
      if (auto it = o.find(id); it != o.end()) from.insert(it->second.begin(), it->second.end());
    for (const std::string& id : s.added) o[id] = from.empty() ? std::set<std::string>{id} : from;
  }
  for (const auto& [into, folded] : r.absorbed)
    for (const std::string& f : folded)
      if (auto it = o.find(f); it != o.end()) o[into].insert(it->second.begin(), it->second.end());
  return o;
}

bool overlaps(const std::set<std::string>& x, const std::set<std::string>& y) {
  return std::any_of(x.begin(), x.end(), [&](const std::string& s) { return y.count(s) > 0; });
}

struct Matcher {
  const Graph& a;
  const Graph& b;
  NodeMatching out;

  void add(const Node& na, const Node& nb, MatchBy by) {
    if (out.aToB.count(na.id()) || out.bToA.count(nb.id())) return;
    out.aToB[na.id()] = nb.id();
    out.bToA[nb.id()] = na.id();
    out.matched.push_back({na.id(), nb.id(), by, nodeFingerprint(na) != nodeFingerprint(nb)});
  }
  // Pairs every unmatched A node with the first unmatched B node `same` accepts.
  template <class Same>
  void pass(MatchBy by, Same same) {
    for (const Node* na : a.topoOrder()) {
      if (out.aToB.count(na->id())) continue;
      for (const Node* nb : b.topoOrder())
        if (!out.bToA.count(nb->id()) && same(*na, *nb)) {
          add(*na, *nb, by);
          break;
        }
    }
  }
};

std::string firstOutput(const Node& n) { return n.numOutputs() && n.output(0) ? n.output(0)->name() : std::string(); }

}  // namespace

const std::string& matchByName(MatchBy by) {
  static const EnumNames<MatchBy> names{
      {MatchBy::Mapping, "mapping"}, {MatchBy::Id, "id"}, {MatchBy::Name, "name"}, {MatchBy::Provenance, "provenance"}};
  return enumName(names, by, "match kind");
}

NodeMatching matchNodes(const CompileResult& ra, const CompileResult& rb, const std::map<std::string, std::string>& mapping) {
  if (!ra.graph || !rb.graph) return {};
  Matcher m{*ra.graph, *rb.graph, {}};
  for (const auto& [ida, idb] : mapping)
    if (const Node* na = m.a.findNode(ida); na)
      if (const Node* nb = m.b.findNode(idb)) m.add(*na, *nb, MatchBy::Mapping);
  m.pass(MatchBy::Id, [](const Node& x, const Node& y) { return x.id() == y.id(); });
  m.pass(MatchBy::Name, [](const Node& x, const Node& y) {
    return x.op() == y.op() && !firstOutput(x).empty() && firstOutput(x) == firstOutput(y);
  });
  const Origins oa = originsOf(ra), ob = originsOf(rb);
  m.pass(MatchBy::Provenance, [&](const Node& x, const Node& y) {
    auto ix = oa.find(x.id()), iy = ob.find(y.id());
    return x.op() == y.op() && ix != oa.end() && iy != ob.end() && overlaps(ix->second, iy->second);
  });
  // In A's order, so a printout reads like the graph.
  std::map<std::string, size_t> order;
  for (const Node* n : m.a.topoOrder()) order.emplace(n->id(), order.size());
  std::sort(m.out.matched.begin(), m.out.matched.end(),
            [&](const NodeMatch& x, const NodeMatch& y) { return order[x.a] < order[y.a]; });
  for (const Node* n : m.a.topoOrder())
    if (!m.out.aToB.count(n->id())) m.out.removed.push_back(n->id());
  for (const Node* n : m.b.topoOrder())
    if (!m.out.bToA.count(n->id())) m.out.added.push_back(n->id());
  return m.out;
}

namespace {

// Union-find over A's groups [0, na) and B's [na, na+nb).
struct Components {
  std::vector<size_t> parent;
  explicit Components(size_t n) : parent(n) {
    for (size_t i = 0; i < n; ++i) parent[i] = i;
  }
  size_t find(size_t i) { return parent[i] == i ? i : parent[i] = find(parent[i]); }
  void join(size_t i, size_t j) { parent[find(i)] = find(j); }
};

GroupChange::Kind kindOf(const GroupChange& c, const FusedGroup* ga, const FusedGroup* gb, const NodeMatching& m) {
  if (c.b.empty()) return GroupChange::Removed;
  if (c.a.empty()) return GroupChange::Added;
  if (c.a.size() > 1 && c.b.size() > 1) return GroupChange::Regrouped;
  if (c.b.size() > 1) return GroupChange::Split;
  if (c.a.size() > 1) return GroupChange::Merged;
  std::set<std::string> mapped, nodesB;
  for (const GroupNode& n : ga->nodes) mapped.insert(m.aToB.count(n.id) ? m.aToB.at(n.id) : "?" + n.id);
  for (const GroupNode& n : gb->nodes) nodesB.insert(n.id);
  return mapped == nodesB && ga->kind == gb->kind ? GroupChange::Same : GroupChange::Changed;
}

}  // namespace

const std::string& groupChangeName(GroupChange::Kind kind) {
  static const EnumNames<GroupChange::Kind> names{
      {GroupChange::Same, "same"},     {GroupChange::Changed, "changed"},     {GroupChange::Split, "split"},
      {GroupChange::Merged, "merged"}, {GroupChange::Regrouped, "regrouped"}, {GroupChange::Removed, "removed"},
      {GroupChange::Added, "added"}};
  return enumName(names, kind, "group change");
}

std::vector<GroupChange> matchGroups(const FusionResult& a, const FusionResult& b, const NodeMatching& m) {
  const size_t na = a.groups.size(), nb = b.groups.size();
  std::map<std::string, size_t> groupOfB;
  for (size_t j = 0; j < nb; ++j)
    for (const GroupNode& n : b.groups[j].nodes) groupOfB[n.id] = na + j;
  Components parts(na + nb);
  for (size_t i = 0; i < na; ++i)
    for (const GroupNode& n : a.groups[i].nodes)
      if (auto to = m.aToB.find(n.id); to != m.aToB.end())
        if (auto g = groupOfB.find(to->second); g != groupOfB.end()) parts.join(i, g->second);
  std::map<size_t, size_t> byRoot;  // component root → index in `out`, in order of first appearance
  std::vector<GroupChange> out;
  std::vector<std::pair<const FusedGroup*, const FusedGroup*>> firsts;
  for (size_t k = 0; k < na + nb; ++k) {
    auto [it, fresh] = byRoot.emplace(parts.find(k), out.size());
    if (fresh) {
      out.emplace_back();
      firsts.emplace_back(nullptr, nullptr);
    }
    const FusedGroup& g = k < na ? a.groups[k] : b.groups[k - na];
    (k < na ? out[it->second].a : out[it->second].b).push_back(g.id);
    auto& first = k < na ? firsts[it->second].first : firsts[it->second].second;
    if (!first) first = &g;
  }
  for (size_t c = 0; c < out.size(); ++c) out[c].kind = kindOf(out[c], firsts[c].first, firsts[c].second, m);
  return out;
}

}  // namespace tessera::compare
