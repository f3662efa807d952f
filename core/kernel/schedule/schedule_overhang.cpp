// Overhanging tiles (docs/kernel-ir.md): overcompute computes the overhang on registers, only the stores
// guarded (kernel/overhang.h says which guards qualify); version gives a guarded loop an unguarded copy for
// the tiles that lie wholly inside.
#include "kernel/overhang.h"
#include "kernel/printer.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {
namespace {

// Replaces each qualifying guard under `s` by its body; returns how many were dropped.
int dropRegisterGuards(const Kernel& k, Stmt& s) {
  int dropped = 0;
  while (s->kind == StmtKind::IfThen &&
      guardOnlySkipsRegisterWork(k, static_cast<IfThenStmt&>(*s), OverhangReads::CachesAndGuardFreeGlobals)) {
    s = static_cast<IfThenStmt&>(*s).body;
    ++dropped;
  }
  forEachChild(*s, [&](Stmt& child) { dropped += dropRegisterGuards(k, child); });
  return dropped;
}

}  // namespace

void overcompute(Kernel& k, const std::string& loop) {
  detail::Checker c(k, "overcompute", loop);
  detail::LoopSite site = detail::requireLoop(k, c, 1, loop);
  int dropped = dropRegisterGuards(k, site.loop->body);
  c.check(2, dropped > 0,
          "no guard inside only leaves out work on registers (each writes memory, reads a global buffer at the "
          "guarded index, or cuts a reduction)");
}

namespace {

// `cond` holds at every iteration of `v` once it holds at the last: each conjunct is free of `v`, or
// `a < b` / `a <= b` with `a` affine in `v` by a non-negative step and `b` free of it (a tile's guard).
bool holdsUpToLast(const Expr& cond, const std::string& v) {
  if (!usesVar(cond, v)) return true;
  if (cond->kind != ExprKind::Binary) return false;
  const auto& b = static_cast<const Binary&>(*cond);
  if (b.op == BinaryOp::And) return holdsUpToLast(b.a, v) && holdsUpToLast(b.b, v);
  if ((b.op != BinaryOp::Lt && b.op != BinaryOp::Le) || usesVar(b.b, v)) return false;
  auto a = detail::affine(b.a, {v});
  return a && a->coef.count(v) && a->coef.at(v) >= 0;
}

}  // namespace

std::string version(Kernel& k, const std::string& loop) {
  detail::Checker c(k, "version", loop);
  detail::LoopSite site = detail::requireLoop(k, c, 1, loop);
  const ForStmt& f = *site.loop;
  c.check(2, f.h.loopKind == LoopKind::Serial || f.h.loopKind == LoopKind::Unrolled,
          "loop is " + std::string(loopKindName(f.h.loopKind)) + ", not serial or unrolled");
  Stmt inner = unwrapBlocks(f.body);
  c.check(3, inner->kind == StmtKind::IfThen, "its body is not one guarded statement");
  const auto& guard = static_cast<const IfThenStmt&>(*inner);
  c.check(4, holdsUpToLast(guard.cond, f.h.var),
          "the guard (" + printExpr(guard.cond) + ") is not known to hold at every iteration once it holds at the last");
  Expr whole = substitute(guard.cond, {{f.h.var, intImm(f.h.extent - 1)}});
  LoopHeader h = f.h;
  h.var = detail::freshName(k, f.h.var + "_whole");
  h.loopKind = LoopKind::Serial;
  Stmt body = cloneStmt(guard.body);
  substitute(body, {{f.h.var, var(h.var)}});
  Stmt fast = IfThenStmt::make(whole, detail::asBlock(ForStmt::make(h, detail::asBlock(body))));
  Stmt slow = IfThenStmt::make(Unary::make(UnaryOp::Not, whole), detail::asBlock(*site.slot));
  *site.slot = BlockStmt::make({fast, slow});
  return h.var;
}

}  // namespace tessera::kernel::sched
