#include "kernel/attention_nest.h"

#include "kernel/visit.h"
#include "ops/attention_form.h"

namespace tessera::kernel {
namespace {

std::vector<Stmt> statementsOf(const Stmt& s) {
  Stmt b = unwrapBlocks(s);
  if (b->kind == StmtKind::Block) return static_cast<BlockStmt&>(*b).stmts;
  return {b};
}

const ForStmt* asFor(const Stmt& s) { return s->kind == StmtKind::For ? static_cast<const ForStmt*>(s.get()) : nullptr; }

// The loads in `e`, in order.
std::vector<const Load*> loadsIn(const Expr& e) {
  std::vector<const Load*> out;
  walkExpr(e, [&](const ExprNode& x) {
    if (x.kind == ExprKind::Load) out.push_back(static_cast<const Load*>(&x));
  });
  return out;
}

bool usesAny(const std::vector<Expr>& idx, const std::string& v) {
  for (const Expr& e : idx)
    if (usesVar(e, v)) return true;
  return false;
}

// The score's sum over the head: s += q[.., c] · kᵀ[c, j], q the load that does not use the key variable.
bool readProduct(AttentionNest& n, const std::string& keyVar) {
  std::vector<Stmt> body = statementsOf(n.depth->body);
  if (body.size() != 1 || body[0]->kind != StmtKind::Reduce) return false;
  auto& r = static_cast<const ReduceStmt&>(*body[0]);
  std::vector<const Load*> loads = loadsIn(r.value);
  if (r.op != ReduceOp::Sum || loads.size() != 2) return false;
  n.score = r.buffer;
  bool firstKeyed = usesAny(loads[0]->indices, keyVar);
  n.q = firstKeyed ? loads[1] : loads[0];
  n.k = firstKeyed ? loads[0] : loads[1];
  return !usesAny(n.q->indices, keyVar) && usesAny(n.k->indices, keyVar);
}

// The key loop's body after the score: the chain f(s), m_new = max(m, f(s)), alpha, p, the stores of l and m,
// and the loop over the values.
bool readKeyBody(const Kernel& k, AttentionNest& n) {
  std::vector<Stmt> body = statementsOf(n.keys->body);
  size_t at = 0;
  while (at < body.size() && !(asFor(body[at]) && asFor(body[at])->h.reduction)) ++at;
  if (at == body.size()) return false;
  n.depth = asFor(body[at]);
  if (!readProduct(n, n.keys->h.var)) return false;
  for (++at; at < body.size() && body[at]->kind == StmtKind::Compute; ++at) {
    auto& c = static_cast<const ComputeStmt&>(*body[at]);
    const Expr& v = c.value;
    if (v->kind == ExprKind::Binary && static_cast<const Binary&>(*v).op == BinaryOp::Max &&
        static_cast<const Binary&>(*v).a->kind == ExprKind::Load) {
      n.maximum = static_cast<const Load&>(*static_cast<const Binary&>(*v).a).buffer;
      n.x = static_cast<const Binary&>(*v).b;
      break;
    }
    n.chain.push_back(body[at]);
  }
  if (!n.x) return false;
  for (; at < body.size(); ++at)
    if (body[at]->kind == StmtKind::Store && static_cast<const StoreStmt&>(*body[at]).buffer != n.maximum)
      n.sum = static_cast<const StoreStmt&>(*body[at]).buffer;
  n.values = asFor(body.back());
  if (n.sum.empty() || !n.values) return false;
  std::vector<Stmt> update = statementsOf(n.values->body);
  if (update.size() != 1 || update[0]->kind != StmtKind::Store) return false;
  n.context = static_cast<const StoreStmt&>(*update[0]).buffer;
  for (const Load* l : loadsIn(static_cast<const StoreStmt&>(*update[0]).value)) {
    const Buffer* b = k.findBuffer(l->buffer);
    if (b && b->role == BufferRole::Input) n.v = l;
  }
  return n.v != nullptr;
}

// Whether `load` reads rows contiguous along `var`: its last index is the variable, which no other index uses,
// and the buffer's last dimension is the loop's extent.
bool rowsAlong(const Kernel& k, const Load& load, const ForStmt& loop) {
  const Buffer* b = k.findBuffer(load.buffer);
  const Expr& last = load.indices.back();
  if (!b || b->shape.empty() || b->shape.back() != loop.h.extent || last->kind != ExprKind::Var ||
      static_cast<const Var&>(*last).name != loop.h.var)
    return false;
  for (size_t i = 0; i + 1 < load.indices.size(); ++i)
    if (usesVar(load.indices[i], loop.h.var)) return false;
  return true;
}

std::string headRefusal(const char* what, int64_t extent) {
  if (ops::tensorCoreAttentionHead(extent)) return "";
  return std::string(what) + " of " + std::to_string(extent) + " is not a multiple of 16 from 16 to 128";
}

}  // namespace

std::optional<AttentionNest> attentionNest(const Kernel& k, const Stmt& rowBody) {
  AttentionNest n;
  Stmt s = unwrapBlocks(rowBody);
  while (s->kind == StmtKind::IfThen) {
    n.guards.push_back(static_cast<IfThenStmt&>(*s).cond);
    s = unwrapBlocks(static_cast<IfThenStmt&>(*s).body);
  }
  for (const Stmt& st : statementsOf(s)) {
    const ForStmt* f = asFor(st);
    if (f && f->h.reduction) n.keys = f;
    else if (f && n.keys) n.output = f;
  }
  if (!n.keys || !n.output || !readKeyBody(k, n)) return std::nullopt;
  return n;
}

std::string tensorCoreRefusal(const Kernel& k, const AttentionNest& n) {
  DType t = k.findBuffer(n.q->buffer)->dtype;
  if (!ops::tensorCoreAttentionType(t)) return "q is " + std::string(dtypeName(t)) + ", not bf16 or f16";
  if (k.findBuffer(n.k->buffer)->dtype != t || k.findBuffer(n.v->buffer)->dtype != t)
    return "q, k and v are not all " + std::string(dtypeName(t));
  if (std::string r = headRefusal("the head", n.depth->h.extent); !r.empty()) return r;
  if (std::string r = headRefusal("v's head", n.values->h.extent); !r.empty()) return r;
  if (!rowsAlong(k, *n.q, *n.depth)) return "q's rows are not contiguous along the head";
  if (!rowsAlong(k, *n.k, *n.depth)) return "kᵀ is not read from k's rows (a Transpose of k folded into the loads)";
  if (!rowsAlong(k, *n.v, *n.values)) return "v's rows are not contiguous along its head";
  for (const Load* l : {n.k, n.v})
    if (usesAny(l->indices, "i")) return "the keys or values differ from query row to query row";
  return "";
}

const ForStmt* attentionRowLoop(const Kernel& k) {
  const ForStmt* found = nullptr;
  walk(k.body, [&](StmtNode& s) {
    if (!found && s.kind == StmtKind::For && static_cast<ForStmt&>(s).h.var == "i") found = static_cast<ForStmt*>(&s);
  });
  return found;
}

}  // namespace tessera::kernel
