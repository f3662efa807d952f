#include "kernel/schedule/schedule_util.h"

#include "kernel/printer.h"
#include "kernel/visit.h"

namespace tessera::kernel {

ScheduleError::ScheduleError(const std::string& primitive, const std::string& kernel, const std::string& loop,
                             int step, const std::string& what)
    : Error(primitive + ": loop '" + loop + "' of kernel '" + kernel + "': step " + std::to_string(step) + ": " + what),
      primitive_(primitive),
      loop_(loop),
      step_(step) {}

namespace detail {

void Checker::check(int step, bool ok, const std::string& what) const {
  if (!ok) fail(step, what);
}
void Checker::fail(int step, const std::string& what) const {
  throw ScheduleError(primitive_, k_.id, subject_, step, what);
}

namespace {
bool find(Stmt& slot, const std::string& name, std::vector<ForStmt*>& enclosing, LoopSite& out) {
  if (slot->kind == StmtKind::For) {
    auto* f = static_cast<ForStmt*>(slot.get());
    if (f->h.var == name) {
      out = {&slot, f, enclosing};
      return true;
    }
    enclosing.push_back(f);
    bool found = find(f->body, name, enclosing, out);
    enclosing.pop_back();
    return found;
  }
  bool found = false;
  forEachChild(*slot, [&](Stmt& c) {
    if (!found) found = find(c, name, enclosing, out);
  });
  return found;
}

// Skips single-statement blocks and guards; returns the first statement that is neither.
Stmt unwrap(Stmt s, std::vector<Expr>& guards) {
  for (;;) {
    if (s->kind == StmtKind::Block && static_cast<BlockStmt&>(*s).stmts.size() == 1) {
      s = static_cast<BlockStmt&>(*s).stmts[0];
    } else if (s->kind == StmtKind::IfThen) {
      guards.push_back(static_cast<IfThenStmt&>(*s).cond);
      s = static_cast<IfThenStmt&>(*s).body;
    } else {
      return s;
    }
  }
}
}  // namespace

std::optional<LoopSite> findLoop(Kernel& k, const std::string& name) {
  LoopSite site;
  std::vector<ForStmt*> enclosing;
  if (!find(k.body, name, enclosing, site)) return std::nullopt;
  return site;
}

LoopSite requireLoop(Kernel& k, const Checker& c, int step, const std::string& name) {
  auto site = findLoop(k, name);
  if (!site) c.fail(step, "no loop named '" + name + "'");
  return *site;
}

std::optional<Chain> perfectChain(ForStmt* outer, const std::set<std::string>& needed, std::string* missing) {
  Chain chain;
  std::set<std::string> left = needed;
  ForStmt* cur = outer;
  for (;;) {
    chain.loops.push_back(cur);
    left.erase(cur->h.var);
    if (left.empty()) break;
    std::vector<Expr> guards;
    Stmt next = unwrap(cur->body, guards);
    if (next->kind != StmtKind::For) {
      if (missing) *missing = *left.begin();
      return std::nullopt;
    }
    chain.guards.insert(chain.guards.end(), guards.begin(), guards.end());
    cur = static_cast<ForStmt*>(next.get());
  }
  chain.inner = cur->body;
  return chain;
}

Stmt asBlock(Stmt s) { return s->kind == StmtKind::Block ? s : BlockStmt::make({s}); }

Stmt buildNest(const std::vector<LoopHeader>& headers, const std::vector<Expr>& guards, Stmt inner) {
  Stmt body = inner;
  if (!guards.empty()) {
    Expr cond = guards[0];
    for (size_t i = 1; i < guards.size(); ++i) cond = Binary::make(BinaryOp::And, cond, guards[i]);
    body = IfThenStmt::make(cond, asBlock(body));
  }
  for (size_t i = headers.size(); i-- > 0;) body = ForStmt::make(headers[i], asBlock(body));
  return body;
}

std::string freshName(const Kernel& k, const std::string& base) {
  std::set<std::string> used;
  for (const Buffer& b : k.buffers) used.insert(b.name);
  walk(k.body, [&](StmtNode& s) {
    if (s.kind == StmtKind::For) used.insert(static_cast<ForStmt&>(s).h.var);
    if (s.kind == StmtKind::Compute) used.insert(static_cast<ComputeStmt&>(s).name);
  });
  if (!used.count(base)) return base;
  for (int i = 1;; ++i)
    if (!used.count(base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

std::vector<std::vector<Expr>> writesOf(const Stmt& s, const std::string& buffer, int* reduces) {
  std::vector<std::vector<Expr>> out;
  walk(s, [&](StmtNode& n) {
    if (n.kind == StmtKind::Store && static_cast<StoreStmt&>(n).buffer == buffer) out.push_back(static_cast<StoreStmt&>(n).indices);
    if (n.kind == StmtKind::Reduce && static_cast<ReduceStmt&>(n).buffer == buffer && reduces) ++*reduces;
    if (n.kind == StmtKind::AsyncCopy && static_cast<AsyncCopyStmt&>(n).dst == buffer) out.push_back(static_cast<AsyncCopyStmt&>(n).dstIndices);
  });
  return out;
}

std::vector<std::vector<Expr>> loadsOf(const Stmt& s, const std::string& buffer) {
  std::vector<std::vector<Expr>> out;
  walk(s, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind == ExprKind::Load && static_cast<const Load&>(x).buffer == buffer) out.push_back(static_cast<const Load&>(x).indices);
      });
      return e;
    });
  });
  return out;
}

bool containsKind(const Stmt& s, StmtKind kind) {
  bool found = false;
  walk(s, [&](StmtNode& n) { found |= n.kind == kind; });
  return found;
}

bool containsLoop(const Stmt& s) { return containsKind(s, StmtKind::For); }

std::map<std::string, int64_t> loopsInside(const Stmt& s) {
  std::map<std::string, int64_t> out;
  walk(s, [&](StmtNode& n) {
    if (n.kind == StmtKind::For) out[static_cast<ForStmt&>(n).h.var] = static_cast<ForStmt&>(n).h.extent;
  });
  return out;
}

namespace {
bool usesAny(const Expr& e, const std::set<std::string>& vars) {
  bool found = false;
  walkExpr(e, [&](const ExprNode& n) {
    if (n.kind == ExprKind::Var && vars.count(static_cast<const Var&>(n).name)) found = true;
  });
  return found;
}
}  // namespace

std::optional<Affine> affine(const Expr& e, const std::set<std::string>& local) {
  if (!usesAny(e, local)) return Affine{{}, e};
  if (e->kind == ExprKind::Var) return Affine{{{static_cast<const Var&>(*e).name, 1}}, intImm(0)};
  if (e->kind != ExprKind::Binary) return std::nullopt;
  const auto& b = static_cast<const Binary&>(*e);
  if (b.op == BinaryOp::Mul) {
    const Expr& c = b.a->kind == ExprKind::IntImm ? b.a : b.b;
    const Expr& other = c == b.a ? b.b : b.a;
    if (c->kind != ExprKind::IntImm) return std::nullopt;
    auto inner = affine(other, local);
    if (!inner) return std::nullopt;
    int64_t f = static_cast<const IntImm&>(*c).value;
    for (auto& [v, k] : inner->coef) k *= f;
    inner->rest = mul(inner->rest, c);
    return inner;
  }
  if (b.op != BinaryOp::Add && b.op != BinaryOp::Sub) return std::nullopt;
  auto l = affine(b.a, local), r = affine(b.b, local);
  if (!l || !r) return std::nullopt;
  int64_t sign = b.op == BinaryOp::Add ? 1 : -1;
  for (auto& [v, k] : r->coef) l->coef[v] += sign * k;
  l->rest = sign > 0 ? add(l->rest, r->rest) : sub(l->rest, r->rest);
  return l;
}

Expr linearPart(const Affine& a) {
  Expr e = intImm(0);
  for (auto& [v, k] : a.coef) e = add(e, mul(var(v), intImm(k)));
  return e;
}

std::optional<int64_t> upperBound(const Expr& e, const std::map<std::string, int64_t>& extents) {
  if (e->kind == ExprKind::IntImm) return static_cast<const IntImm&>(*e).value;
  if (e->kind == ExprKind::Var) {
    auto it = extents.find(static_cast<const Var&>(*e).name);
    if (it == extents.end()) return std::nullopt;
    return it->second - 1;
  }
  if (e->kind != ExprKind::Binary) return std::nullopt;
  const auto& b = static_cast<const Binary&>(*e);
  auto l = upperBound(b.a, extents);
  if (!l) return std::nullopt;
  bool rc = b.b->kind == ExprKind::IntImm;
  int64_t c = rc ? static_cast<const IntImm&>(*b.b).value : 0;
  switch (b.op) {
    case BinaryOp::Add: {
      auto r = upperBound(b.b, extents);
      return r ? std::optional<int64_t>(*l + *r) : std::nullopt;
    }
    case BinaryOp::Sub: return rc ? std::optional<int64_t>(*l - c) : std::nullopt;
    case BinaryOp::Mul: return rc && c >= 0 ? std::optional<int64_t>(*l * c) : std::nullopt;
    case BinaryOp::Div: return rc && c > 0 ? std::optional<int64_t>(*l / c) : std::nullopt;
    case BinaryOp::Mod: return rc && c > 0 ? std::optional<int64_t>(std::min(*l, c - 1)) : std::nullopt;
    default: return std::nullopt;
  }
}

Expr simplifyDivMod(const Expr& e, const std::map<std::string, int64_t>& extents) {
  std::set<std::string> loops;
  for (const auto& entry : extents) loops.insert(entry.first);
  return mapExpr(e, [&](const Expr& x) -> Expr {
    if (x->kind != ExprKind::Binary) return x;
    const auto& b = static_cast<const Binary&>(*x);
    if ((b.op != BinaryOp::Div && b.op != BinaryOp::Mod) || b.b->kind != ExprKind::IntImm) return x;
    const int64_t c = static_cast<const IntImm&>(*b.b).value;
    auto a = affine(b.a, loops);
    if (c <= 0 || !a || a->rest->kind != ExprKind::IntImm || static_cast<const IntImm&>(*a->rest).value < 0) return x;
    Expr whole = intImm(0), part = a->rest;  // a = c * whole + part
    for (auto& [v, k] : a->coef) {
      if (k < 0) return x;
      if (k % c == 0) whole = add(whole, mul(var(v), intImm(k / c)));
      else part = add(part, mul(var(v), intImm(k)));
    }
    auto top = upperBound(part, extents);
    if (!top || *top >= c) return x;
    return b.op == BinaryOp::Div ? whole : part;
  });
}

LocalTerms::LocalTerms(const std::map<std::string, int64_t>& loops) : extents_(loops) {
  for (auto& [v, e] : loops) vars_.insert(v);
}

Expr LocalTerms::withAtoms(const Expr& e) {
  return mapExpr(e, [&](const Expr& x) { return atomFor(x); });
}

Expr LocalTerms::withoutAtoms(const Expr& e) const { return substitute(e, atoms_); }

// x itself unless it is q / c or q % c for q affine in the loops and atoms, non-negative, no constant term.
Expr LocalTerms::atomFor(const Expr& x) {
  if (x->kind != ExprKind::Binary) return x;
  const auto& b = static_cast<const Binary&>(*x);
  if ((b.op != BinaryOp::Div && b.op != BinaryOp::Mod) || b.b->kind != ExprKind::IntImm) return x;
  int64_t c = static_cast<const IntImm&>(*b.b).value;
  auto q = affine(b.a, vars_);
  if (c <= 0 || !q || q->coef.empty() || upperBound(q->rest, {}) != std::optional<int64_t>(0)) return x;
  int64_t top = 0;
  for (auto& [v, k] : q->coef) {
    if (k < 0) return x;
    top += k * (extents_.at(v) - 1);
  }
  std::string text = printExpr(x);
  if (auto it = byText_.find(text); it != byText_.end()) return var(it->second);
  std::string name = "tsr_atom" + std::to_string(atoms_.size());
  atoms_[name] = substitute(x, atoms_);  // (k / 2) % 3 holds the atom of k / 2: stored expanded, one substitution undoes it
  byText_[text] = name;
  vars_.insert(name);
  extents_[name] = b.op == BinaryOp::Div ? top / c + 1 : std::min(c, top + 1);
  return var(name);
}

}  // namespace detail
}  // namespace tessera::kernel
