// The overcompute primitive: an overhanging tile computed whole on registers, only its stores guarded
// (kernel/overhang.h says which guards qualify; docs/kernel-ir.md, Overhanging tiles).
#include "kernel/overhang.h"
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

}  // namespace tessera::kernel::sched
