// rfactor: the innermost loop of a reduction made data-parallel. Each iteration of the loop (a lane)
// accumulates into its own element of a register array, set to the reduction's identity before the
// reduction's loops; after them the lanes are combined into the accumulator in lane order. The reduction then
// runs as that many independent ones, which the CPU's vector path computes a vector at a time (a softmax's max
// and its sum of exp over the row). A float sum is added in another order, so it rounds differently (within the
// type's tolerance); max and min are exact.
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

// One accumulator the loop reduces into, and the lane array that takes its place.
struct Partial {
  std::string accumulator, lanes;
  std::vector<Expr> indices;
  ReduceOp op = ReduceOp::Sum;
  DType dtype = DType::F32;
  std::vector<std::string> provenance;
};

// The reduction's loops: `f` and the reduction loops around it up to the first that is not one; returns the
// outermost.
ForStmt* reductionTop(const LoopSite& site) {
  ForStmt* top = site.loop;
  for (auto it = site.enclosing.rbegin(); it != site.enclosing.rend() && (*it)->h.reduction; ++it) top = *it;
  return top;
}

// Steps 5-8: every Reduce in the loop's body folds a float register accumulator by sum, max or min at indices
// free of the reduction's loops, and no statement of the reduction reads an accumulator.
std::vector<Partial> partialsOf(const Kernel& k, const Checker& c, const ForStmt& f, const ForStmt& top) {
  std::map<std::string, int64_t> reductionLoops = loopsInside(top.body);
  reductionLoops[top.h.var] = top.h.extent;
  std::vector<Partial> out;
  walk(f.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Reduce) return;
    auto& r = static_cast<ReduceStmt&>(n);
    const Buffer* acc = k.findBuffer(r.buffer);
    c.check(5, r.op == ReduceOp::Sum || r.op == ReduceOp::Max || r.op == ReduceOp::Min,
            "it folds '" + r.buffer + "' by " + std::string(reduceOpName(r.op)) + ", not sum, max or min");
    c.check(6, acc && acc->scope == MemScope::Register && isFloat(acc->dtype),
            "'" + r.buffer + "' is not a float register accumulator");
    for (const Expr& i : r.indices)
      for (const auto& [v, extent] : reductionLoops) c.check(7, !usesVar(i, v), "'" + r.buffer + "' is indexed by loop '" + v + "'");
    for (const Partial& p : out)
      c.check(5, p.accumulator != r.buffer || p.op == r.op, "'" + r.buffer + "' is folded by two different ops");
    out.push_back({r.buffer, "", r.indices, r.op, acc->dtype, r.provenance});
  });
  c.check(5, !out.empty(), "its body folds no accumulator");
  for (const Partial& p : out)
    c.check(8, loadsOf(top.body, p.accumulator).empty(), "the reduction reads its accumulator '" + p.accumulator + "'");
  return out;
}

}  // namespace

std::vector<std::string> rfactor(Kernel& k, const std::string& loop) {
  Checker c(k, "rfactor", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  ForStmt& f = *site.loop;
  c.check(2, f.h.reduction, "not a reduction loop");
  c.check(3, !containsLoop(f.body), "not innermost");
  c.check(4, f.h.loopKind == LoopKind::Serial || f.h.loopKind == LoopKind::Unrolled,
          "loop is " + std::string(loopKindName(f.h.loopKind)) + ", not serial or unrolled");
  ForStmt* top = reductionTop(site);
  std::vector<Partial> partials = partialsOf(k, c, f, *top);
  std::map<std::string, std::string> lanesOf;
  for (Partial& p : partials) {
    if (!lanesOf.count(p.accumulator)) {
      lanesOf[p.accumulator] = freshName(k, p.accumulator + "_lanes");
      k.buffers.push_back({lanesOf[p.accumulator], p.dtype, {f.h.extent}, MemScope::Register, BufferRole::Temp, "", "", true, {}});
    }
    p.lanes = lanesOf.at(p.accumulator);
  }
  walk(f.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Reduce) return;
    auto& r = static_cast<ReduceStmt&>(n);
    r.buffer = lanesOf.at(r.buffer);
    r.indices = {var(f.h.var)};
  });
  f.h.reduction = false;
  // The lanes' identities before the reduction, their fold into the accumulators after it, in lane order.
  LoopHeader init = f.h, fold = f.h;
  init.var = freshName(k, f.h.var + "_init");
  init.loopKind = LoopKind::Serial;
  fold.var = freshName(k, f.h.var + "_fold");
  fold.loopKind = LoopKind::Serial;
  fold.reduction = true;
  std::vector<Stmt> head, sets, folds;
  std::set<std::string> done;
  for (const Partial& p : partials) {
    if (!done.insert(p.lanes).second) continue;
    head.push_back(AllocateStmt::make(p.lanes));
    sets.push_back(StoreStmt::make(p.lanes, {var(init.var)}, reduceInit(p.op, p.dtype)));
    folds.push_back(ReduceStmt::make(p.op, p.accumulator, p.indices, Load::make(p.lanes, p.dtype, {var(fold.var)})));
    sets.back()->provenance = folds.back()->provenance = p.provenance;
  }
  LoopSite topSite = *findLoop(k, top->h.var);
  head.push_back(ForStmt::make(init, BlockStmt::make(sets)));
  head.push_back(*topSite.slot);
  head.push_back(ForStmt::make(fold, BlockStmt::make(folds)));
  *topSite.slot = BlockStmt::make(head);
  std::vector<std::string> out = {init.var, fold.var};
  for (const auto& [acc, lanes] : lanesOf) out.push_back(lanes);
  return out;
}

}  // namespace tessera::kernel::sched
