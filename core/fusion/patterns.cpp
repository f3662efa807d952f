#include "fusion/patterns.h"

#include <set>
#include <string>
#include <unordered_map>

namespace tessera::fusion_detail {
namespace {

const Node* reader(const Value* v, const char* op, int slot = -1) {
  if (!v) return nullptr;
  for (const Use& u : v->uses())
    if (u.node->op() == op && (slot < 0 || u.index == slot)) return u.node;
  return nullptr;
}

const Value* out(const Node* n) { return n ? n->output(0) : nullptr; }

// ReduceMax → Sub → Exp → ReduceSum → Div (or Log → Sub for log-softmax).
std::vector<const Node*> softmaxAt(const Node* max) {
  const Node* sub = reader(out(max), "Sub", 1);
  const Node* exp = reader(out(sub), "Exp");
  const Node* sum = reader(out(exp), "ReduceSum", 0);
  if (!sum) return {};
  if (const Node* div = reader(out(sum), "Div", 1)) return {max, sub, exp, sum, div};
  const Node* log = reader(out(sum), "Log");
  const Node* last = reader(out(log), "Sub", 1);
  if (!last) return {};
  return {max, sub, exp, sum, log, last};
}

// ReduceMean → Sub → Mul(d, d) → ReduceMean → Add ε → Sqrt → Div, then the scale Mul and bias Add if present.
std::vector<const Node*> layernormAt(const Node* mean) {
  const Node* sub = reader(out(mean), "Sub", 1);
  const Node* sq = reader(out(sub), "Mul");
  if (!sq) sq = reader(out(sub), "Pow", 0);
  const Node* var = reader(out(sq), "ReduceMean", 0);
  const Node* eps = reader(out(var), "Add");
  const Node* sqrt = reader(out(eps), "Sqrt");
  const Node* div = reader(out(sqrt), "Div", 1);
  if (!div || div->input(0) != out(sub)) return {};
  std::vector<const Node*> nodes{mean, sub, sq, var, eps, sqrt, div};
  if (const Node* scale = reader(out(div), "Mul")) {
    nodes.push_back(scale);
    if (const Node* bias = reader(out(scale), "Add")) nodes.push_back(bias);
  }
  return nodes;
}

// The decisions by consumer id, so that labelling a pattern looks only at its own nodes' decisions (a scan of
// every decision for each pattern took minutes on a 50,000-node model).
using DecisionsByConsumer = std::unordered_map<std::string, std::vector<FusionDecision*>>;

void label(const Partitioner& part, const std::vector<const Node*>& nodes, const char* rule, DecisionsByConsumer& byConsumer) {
  if (nodes.empty()) return;
  int g = part.groupOf(part.indexOf(nodes.front()));
  std::set<std::string> ids;
  for (const Node* n : nodes) {
    if (part.groupOf(part.indexOf(n)) != g) return;  // the pattern did not end up in one kernel
    ids.insert(n->id());
  }
  for (const std::string& consumer : ids) {
    auto it = byConsumer.find(consumer);
    if (it == byConsumer.end()) continue;
    for (FusionDecision* d : it->second)
      if (d->fused && !d->forced && d->rule != "attention" && ids.count(d->producer)) {
        d->rule = rule;
        d->reason = std::string(rule == std::string("softmax-pattern") ? "softmax" : "layer normalization") +
                    " along the rows: " + d->reason;
      }
  }
}

}  // namespace

void labelPatterns(const Partitioner& part, std::vector<FusionDecision>& decisions) {
  DecisionsByConsumer byConsumer;
  for (FusionDecision& d : decisions) byConsumer[d.consumer].push_back(&d);
  for (const Node* n : part.order()) {
    if (n->op() == "ReduceMax") label(part, softmaxAt(n), "softmax-pattern", byConsumer);
    if (n->op() == "ReduceMean") label(part, layernormAt(n), "layernorm-pattern", byConsumer);
  }
}

}  // namespace tessera::fusion_detail
