#include "fusion/attention.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "fusion/space.h"
#include "ops/attention_form.h"

namespace tessera::fusion_detail {
namespace {

// Read by exactly one node, and not a graph output: it can stay inside the kernel.
const Node* onlyReader(const Value* v) {
  if (!v || v->isGraphOutput() || v->uses().size() != 1) return nullptr;
  return v->uses().front().node;
}

bool isFloatValue(const Value* v) { return v && isFloat(v->dtype()); }

// Walks from the softmax's input back through pointwise nodes of the scores' shape to the MatMul that computes
// the scores; `chain` collects the pointwise nodes. The other inputs of those nodes (a scale, a mask) are read
// from memory, so they must come from outside: a pointwise node with two inputs on the path is not a chain.
const Node* scoresMatMul(const Value* v, const Shape& shape, std::vector<const Node*>& chain) {
  for (int depth = 0; depth < 8; ++depth) {
    const Node* p = v ? v->producer() : nullptr;
    if (!p || p->output(0) != v || v->shape() != shape || !isFloatValue(v)) return nullptr;
    if (p->op() == "MatMul") return p;
    if (nodeSpace(*p).kind != SpaceKind::Pointwise) return nullptr;
    const Value* next = nullptr;
    for (const Value* in : p->inputs()) {
      if (!in || !in->producer() || in->shape() != shape) continue;
      if (next) return nullptr;
      next = in;
    }
    if (onlyReader(next) != p) return nullptr;
    chain.push_back(p);
    v = next;
  }
  return nullptr;
}

// The MatMul reading the probabilities (directly or through one Cast) as its first operand.
const Node* contextMatMul(const Value* p, std::vector<const Node*>& nodes) {
  const Node* r = onlyReader(p);
  if (r && r->op() == "Cast" && isFloatValue(r->output(0))) {
    nodes.push_back(r);
    p = r->output(0);
    r = onlyReader(p);
  }
  if (!r || r->op() != "MatMul" || r->input(0) != p || r->input(1) == p) return nullptr;
  return r;
}

bool shapesFit(const AttentionMatch& m) {
  const Shape& s = m.scores->output(0)->shape();
  const Shape& y = m.context->output(0)->shape();
  const Shape& q = m.scores->input(0)->shape();
  const Shape& v = m.context->input(1)->shape();
  if (q.size() < 2 || v.size() < 2 || m.scores->input(1)->shape().size() < 2 || y.size() != s.size()) return false;
  if (!std::equal(s.begin(), s.end() - 1, y.begin())) return false;  // [batch..., S, Sk] against [batch..., S, Dv]
  return q.back() <= kAttentionMaxHead && v.back() <= kAttentionMaxHead;
}

std::optional<AttentionMatch> attentionAt(const Node& last) {
  std::optional<ops::SoftmaxForm> form = ops::lastAxisSoftmax(last);
  if (!form) return std::nullopt;
  const Value* x = form->input;
  for (const Use& u : x->uses())
    if (std::find(form->nodes.begin(), form->nodes.end(), u.node) == form->nodes.end()) return std::nullopt;
  if (x->isGraphOutput()) return std::nullopt;
  AttentionMatch m;
  m.softmax = &last;
  std::vector<const Node*> chain;
  m.scores = scoresMatMul(x, x->shape(), chain);
  if (!m.scores || onlyReader(m.scores->output(0)) == nullptr) return std::nullopt;
  m.nodes = {m.scores};
  const Value* kt = m.scores->input(1);
  if (const Node* t = kt ? kt->producer() : nullptr; t && ops::transposesKeyRows(*t) && onlyReader(kt))
    m.nodes.insert(m.nodes.begin(), t);
  m.nodes.insert(m.nodes.end(), chain.rbegin(), chain.rend());
  m.nodes.insert(m.nodes.end(), form->nodes.begin(), form->nodes.end());
  m.context = contextMatMul(form->output, m.nodes);
  if (!m.context || !shapesFit(m)) return std::nullopt;
  m.nodes.push_back(m.context);
  return m;
}

}  // namespace

std::string AttentionMatch::reason() const {
  const Value* s = scores->output(0);
  char gib[32];
  double bytes = double(s->type().bytes());
  if (bytes < 1024.0 * 1024.0) std::snprintf(gib, sizeof gib, "%.1f KiB", bytes / 1024.0);
  else std::snprintf(gib, sizeof gib, "%.1f MiB", bytes / (1024.0 * 1024.0));
  return "flash attention: " + scores->id() + " → " + softmax->id() + " → " + context->id() + " as one kernel" +
         (tensorCores() ? " on the tensor cores" : "") + ", the " +
         "softmax online over the keys, so the scores %" + s->name() + " " + shapeToString(s->shape()) + " (" + gib +
         ") are never written";
}

bool AttentionMatch::tensorCores() const {
  const Node* t = nodes.front()->op() == "Transpose" ? nodes.front() : nullptr;
  const Value* q = scores->input(0);
  const Value* v = context->input(1);
  const Value* k = t ? t->input(0) : nullptr;
  if (!k || !ops::tensorCoreAttentionType(q->dtype()) || k->dtype() != q->dtype() || v->dtype() != q->dtype()) return false;
  const Shape& qs = q->shape();
  return ops::tensorCoreAttentionHead(qs.back()) && ops::tensorCoreAttentionHead(v->shape().back()) &&
         qs[qs.size() - 2] >= 2;
}

std::vector<AttentionMatch> findAttention(const Graph& g) {
  std::vector<AttentionMatch> out;
  for (const Node* n : g.topoOrder())
    if (auto m = attentionAt(*n)) out.push_back(std::move(*m));
  return out;
}

}  // namespace tessera::fusion_detail
