#include "kernel/overhang.h"

#include <set>

#include "kernel/visit.h"

namespace tessera::kernel {
namespace {

std::set<std::string> reductionVars(const Kernel& k) {
  std::set<std::string> vars;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind == StmtKind::For && static_cast<ForStmt&>(n).h.reduction) vars.insert(static_cast<ForStmt&>(n).h.var);
  });
  return vars;
}

MemScope scopeOf(const Kernel& k, const std::string& buffer) {
  const Buffer* b = k.findBuffer(buffer);
  return b ? b->scope : MemScope::Global;
}

// The variables `e` reads.
std::set<std::string> varsOf(const Expr& e) {
  std::set<std::string> vars;
  walkExpr(e, [&](const ExprNode& x) {
    if (x.kind == ExprKind::Var) vars.insert(static_cast<const Var&>(x).name);
  });
  return vars;
}

bool readAllowed(const Kernel& k, const Load& ld, const std::set<std::string>& condVars, OverhangReads reads) {
  if (scopeOf(k, ld.buffer) != MemScope::Global) return true;
  if (reads == OverhangReads::CachesOnly) return false;
  for (const Expr& i : ld.indices)
    for (const std::string& v : condVars)
      if (usesVar(i, v)) return false;
  return true;
}

}  // namespace

bool guardOnlySkipsRegisterWork(const Kernel& k, const IfThenStmt& guard, OverhangReads reads) {
  const std::set<std::string> condVars = varsOf(guard.cond);
  for (const std::string& v : reductionVars(k))
    if (condVars.count(v)) return false;
  bool ok = true;
  walk(guard.body, [&](StmtNode& n) {
    switch (n.kind) {
      case StmtKind::For: ok &= static_cast<ForStmt&>(n).h.loopKind != LoopKind::Bound; break;
      case StmtKind::Block: case StmtKind::IfThen: case StmtKind::Compute: break;
      case StmtKind::Store: ok &= scopeOf(k, static_cast<StoreStmt&>(n).buffer) == MemScope::Register; break;
      case StmtKind::Reduce: ok &= scopeOf(k, static_cast<ReduceStmt&>(n).buffer) == MemScope::Register; break;
      default: ok = false;  // barriers, copies, allocations: not work on registers alone
    }
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind == ExprKind::Load) ok &= readAllowed(k, static_cast<const Load&>(x), condVars, reads);
      });
      return e;
    });
  });
  return ok;
}

}  // namespace tessera::kernel
