#include "kernel/visit.h"

namespace tessera::kernel {
namespace {

struct ChildVisitor {
  const std::function<void(Stmt&)>& f;
  void operator()(ForStmt& s) const { f(s.body); }
  void operator()(IfThenStmt& s) const { f(s.body); }
  void operator()(BlockStmt& s) const {
    for (Stmt& c : s.stmts) f(c);
  }
  void operator()(StmtNode&) const {}
};

struct ExprMapper {
  const ExprFn& f;
  void each(std::vector<Expr>& v) const {
    for (Expr& e : v) e = f(e);
  }
  void operator()(ComputeStmt& s) const { s.value = f(s.value); }
  void operator()(StoreStmt& s) const {
    each(s.indices);
    s.value = f(s.value);
  }
  void operator()(ReduceStmt& s) const {
    each(s.indices);
    s.value = f(s.value);
  }
  void operator()(IfThenStmt& s) const { s.cond = f(s.cond); }
  void operator()(AsyncCopyStmt& s) const {
    each(s.dstIndices);
    each(s.srcIndices);
    if (s.inside) s.inside = f(s.inside);
  }
  void operator()(StmtNode&) const {}
};

// Rebuilds one node from rewritten children; returns the node itself when the children are unchanged.
struct ExprRebuilder {
  const Expr& self;
  const ExprFn& f;
  Expr operator()(const Load& n) const {
    std::vector<Expr> idx;
    bool changed = false;
    for (const Expr& i : n.indices) {
      idx.push_back(mapExpr(i, f));
      changed |= idx.back() != i;
    }
    return changed ? Load::make(n.buffer, n.dtype, std::move(idx)) : self;
  }
  Expr operator()(const Unary& n) const {
    Expr a = mapExpr(n.a, f);
    return a == n.a ? self : Unary::make(n.op, a);
  }
  Expr operator()(const Binary& n) const {
    Expr a = mapExpr(n.a, f), b = mapExpr(n.b, f);
    if (a == n.a && b == n.b) return self;
    switch (n.op) {  // keep index arithmetic folded after substitution
      case BinaryOp::Add: return add(a, b);
      case BinaryOp::Sub: return sub(a, b);
      case BinaryOp::Mul: return mul(a, b);
      default: return Binary::make(n.op, a, b);
    }
  }
  Expr operator()(const Select& n) const {
    Expr c = mapExpr(n.cond, f), t = mapExpr(n.t, f), e = mapExpr(n.f, f);
    return c == n.cond && t == n.t && e == n.f ? self : Select::make(c, t, e);
  }
  Expr operator()(const Cast& n) const {
    Expr a = mapExpr(n.a, f);
    return a == n.a ? self : Cast::make(n.dtype, a);
  }
  Expr operator()(const CheckedIndex& n) const {
    Expr v = mapExpr(n.value, f), p = mapExpr(n.position, f);
    return v == n.value && p == n.position ? self : CheckedIndex::make(v, n.extent, n.check, p);
  }
  Expr operator()(const ExprNode&) const { return self; }
};

}  // namespace

void forEachChild(StmtNode& s, const std::function<void(Stmt&)>& f) { visitStmt(s, ChildVisitor{f}); }

void mapDirectExprs(StmtNode& s, const ExprFn& f) { visitStmt(s, ExprMapper{f}); }

Expr mapExpr(const Expr& e, const ExprFn& f) {
  Expr rebuilt = visitExpr(*e, ExprRebuilder{e, f});
  return f(rebuilt);
}

void walk(const Stmt& s, const std::function<void(StmtNode&)>& f) {
  f(*s);
  forEachChild(*s, [&](Stmt& c) { walk(c, f); });
}

void mapAllExprs(const Stmt& s, const ExprFn& f) {
  walk(s, [&](StmtNode& n) { mapDirectExprs(n, [&](const Expr& e) { return mapExpr(e, f); }); });
}

void walkExpr(const Expr& e, const std::function<void(const ExprNode&)>& f) {
  mapExpr(e, [&](const Expr& n) {
    f(*n);
    return n;
  });
}

Expr substitute(const Expr& e, const std::map<std::string, Expr>& vars) {
  return mapExpr(e, [&](const Expr& n) -> Expr {
    if (n->kind != ExprKind::Var) return n;
    auto it = vars.find(static_cast<const Var&>(*n).name);
    return it == vars.end() ? n : it->second;
  });
}

void substitute(const Stmt& s, const std::map<std::string, Expr>& vars) {
  mapAllExprs(s, [&](const Expr& n) -> Expr {
    if (n->kind != ExprKind::Var) return n;
    auto it = vars.find(static_cast<const Var&>(*n).name);
    return it == vars.end() ? n : it->second;
  });
}

bool usesVar(const Expr& e, const std::string& name) {
  bool found = false;
  walkExpr(e, [&](const ExprNode& n) {
    if (n.kind == ExprKind::Var && static_cast<const Var&>(n).name == name) found = true;
  });
  return found;
}

Stmt unwrapBlocks(Stmt s) {
  while (s->kind == StmtKind::Block && static_cast<BlockStmt&>(*s).stmts.size() == 1) s = static_cast<BlockStmt&>(*s).stmts[0];
  return s;
}

}  // namespace tessera::kernel
