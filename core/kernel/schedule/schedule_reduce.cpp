// hoist_reduction: moves a reduction loop out of the data-parallel loops around it, so that one step of the
// reduction serves a whole tile of outputs (the shape a gemm needs before its operand tiles can be cached at
// the k-outer loop and shared by the threads of a block).
#include <algorithm>

#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

constexpr int64_t kRegistersPerThread = 256;
// The CPU keeps the whole tile in one local array (128 KiB of f32 at the limit: a wgmma block's 128 x 256 tile,
// well inside the 2 MiB stacks of OpenMP's threads).
constexpr int64_t kAccumulatorElements = 32768;

bool isThreadBound(const LoopHeader& h) { return h.loopKind == LoopKind::Bound && isThreadTag(h.tag); }

// Gives every access of `buffer` the leading indices `lead`.
void prefixAccesses(const Stmt& s, const std::string& buffer, const std::vector<Expr>& lead) {
  auto prefixed = [&](const std::vector<Expr>& idx) {
    std::vector<Expr> out = lead;
    out.insert(out.end(), idx.begin(), idx.end());
    return out;
  };
  walk(s, [&](StmtNode& n) {
    if (n.kind == StmtKind::Store && static_cast<StoreStmt&>(n).buffer == buffer)
      static_cast<StoreStmt&>(n).indices = prefixed(static_cast<StoreStmt&>(n).indices);
    if (n.kind == StmtKind::Reduce && static_cast<ReduceStmt&>(n).buffer == buffer)
      static_cast<ReduceStmt&>(n).indices = prefixed(static_cast<ReduceStmt&>(n).indices);
  });
  mapAllExprs(s, [&](const Expr& e) -> Expr {
    if (e->kind != ExprKind::Load || static_cast<const Load&>(*e).buffer != buffer) return e;
    return Load::make(buffer, e->dtype, prefixed(static_cast<const Load&>(*e).indices));
  });
}

// A copy of the data-parallel nest around `inner`, its loops renamed `<var>_<suffix>` (fresh in the kernel).
Stmt renamedNest(const Kernel& k, std::vector<LoopHeader> headers, const std::vector<Expr>& guards,
                 std::vector<Stmt> inner, const std::string& suffix, std::vector<std::string>& names) {
  std::map<std::string, Expr> rename;
  for (LoopHeader& h : headers) {
    std::string fresh = freshName(k, h.var + "_" + suffix);
    rename[h.var] = var(fresh);
    h.var = fresh;
    names.push_back(fresh);
  }
  Stmt body = BlockStmt::make(std::move(inner));
  std::vector<Expr> renamedGuards;
  for (const Expr& g : guards) renamedGuards.push_back(substitute(g, rename));
  substitute(body, rename);
  return buildNest(headers, renamedGuards, body);
}

// Steps 4 to 7: the data-parallel loops strictly between `at` and the reduction, a perfect nest from `at` down.
Chain loopsBetween(Checker& c, const LoopSite& red, const LoopSite& at, const std::string& reduction,
                   const std::string& loop, std::vector<ForStmt*>& between) {
  auto pos = std::find(red.enclosing.begin(), red.enclosing.end(), at.loop);
  c.check(4, pos != red.enclosing.end(), "does not enclose reduction loop '" + reduction + "'");
  between.assign(pos + 1, red.enclosing.end());
  c.check(5, !between.empty(), "no loops lie between it and '" + reduction + "'");
  for (ForStmt* f : between) {
    c.setSubject(f->h.var);
    c.check(6, !f->h.reduction, "is a reduction loop between '" + loop + "' and '" + reduction + "'");
  }
  c.setSubject(loop);
  std::set<std::string> names;
  for (ForStmt* f : between) names.insert(f->h.var);
  std::string missing;
  auto chain = perfectChain(at.loop, names, &missing);
  c.check(7, chain && chain->loops.size() == between.size() + 1,
          "the loops down to '" + reduction + "' are not a perfect nest (statements beside '" + missing + "')");
  return *chain;
}

// Step 8: the statement list holding the reduction, inside single-statement blocks and guards (appended to
// `guards`).
BlockStmt& listHolding(const Checker& c, const Chain& chain, std::vector<Expr>& guards) {
  Stmt list = chain.inner;
  for (;;) {
    if (list->kind == StmtKind::IfThen) {
      guards.push_back(static_cast<IfThenStmt&>(*list).cond);
      list = static_cast<IfThenStmt&>(*list).body;
    } else if (list->kind == StmtKind::Block && static_cast<BlockStmt&>(*list).stmts.size() == 1 &&
               static_cast<BlockStmt&>(*list).stmts[0]->kind != StmtKind::For) {
      list = static_cast<BlockStmt&>(*list).stmts[0];
    } else {
      break;
    }
  }
  c.check(8, list->kind == StmtKind::Block, "is not in a statement list of its enclosing loop");
  return static_cast<BlockStmt&>(*list);  // held by the chain's nest
}

// What runs before the reduction: its register accumulators' allocations and their initial values.
struct Setup {
  std::vector<std::string> accumulators;
  std::vector<Stmt> allocs, init;
};

// Steps 9 and 10: what runs before the reduction only sets up register accumulators, and the reduction only
// updates them.
Setup accumulatorSetup(const Kernel& k, const Checker& c, const std::vector<Stmt>& before, const ForStmt& red) {
  Setup setup;
  for (const Stmt& s : before) {
    if (s->kind == StmtKind::Allocate) {
      const Buffer* b = k.findBuffer(static_cast<AllocateStmt&>(*s).buffer);
      c.check(9, b && b->scope == MemScope::Register, "a statement before it allocates a non-register buffer");
      setup.accumulators.push_back(b->name);
      setup.allocs.push_back(s);
    } else {
      c.check(9, s->kind == StmtKind::Store, "a statement before it is not an accumulator's allocation or initial value");
      setup.init.push_back(s);
    }
  }
  c.check(9, !setup.accumulators.empty(), "no register accumulator is allocated before it");
  const auto& accs = setup.accumulators;
  walk(red.body, [&](StmtNode& n) {
    std::string target = n.kind == StmtKind::Reduce ? static_cast<ReduceStmt&>(n).buffer
                         : n.kind == StmtKind::Store ? static_cast<StoreStmt&>(n).buffer : "";
    if (!target.empty() && std::find(accs.begin(), accs.end(), target) == accs.end())
      c.fail(10, "it writes '" + target + "', which is not one of its accumulators");
    c.check(10, n.kind != StmtKind::Compute && n.kind != StmtKind::Allocate && n.kind != StmtKind::Sync,
            "its body defines values or synchronizes; only accumulating statements can be hoisted");
  });
  return setup;
}

// Step 11: each accumulator, grown by the tile of the loops between, fits the registers of a thread and the
// CPU's local array.
void checkAccumulatorSizes(const Kernel& k, const Checker& c, const std::vector<ForStmt*>& between,
                           const std::vector<std::string>& accumulators) {
  int64_t tile = 1, perThread = 1;
  for (ForStmt* f : between) {
    tile *= f->h.extent;
    if (!isThreadBound(f->h)) perThread *= f->h.extent;
    else if (isMmaTag(f->h.tag)) perThread *= 2;  // a lane holds 2 of an mma tile's 16 rows (8 columns)
  }
  for (const std::string& a : accumulators) {
    int64_t n = numElements(k.findBuffer(a)->shape);
    c.check(11, n * perThread <= kRegistersPerThread,
            "accumulator '" + a + "' would need " + std::to_string(n * perThread) + " registers per thread (limit 256)");
    c.check(11, n * tile <= kAccumulatorElements,
            "accumulator '" + a + "' would hold " + std::to_string(n * tile) + " elements (limit " + std::to_string(kAccumulatorElements) + ")");
  }
}

// The accumulators gain one leading dimension per loop between (`headers`), indexed by those loops.
void widenAccumulators(Kernel& k, const std::vector<std::string>& accumulators, const std::vector<LoopHeader>& headers,
                       const Stmt& inner) {
  std::vector<Expr> lead;
  for (const LoopHeader& h : headers) lead.push_back(var(h.var));
  for (const std::string& a : accumulators) {
    Buffer* b = k.findBuffer(a);
    Shape shape;
    for (const LoopHeader& h : headers) shape.push_back(h.extent);
    shape.insert(shape.end(), b->shape.begin(), b->shape.end());
    b->shape = shape;
    prefixAccesses(inner, a, lead);
  }
}

}  // namespace

std::vector<std::string> hoistReduction(Kernel& k, const std::string& reduction, const std::string& loop) {
  Checker c(k, "hoist_reduction", reduction);
  LoopSite red = requireLoop(k, c, 1, reduction);
  c.check(2, red.loop->h.reduction, "is not a reduction loop");
  c.check(2, red.loop->h.loopKind != LoopKind::Bound, "is bound to threads (a cross-thread reduction)");
  c.setSubject(loop);
  LoopSite at = requireLoop(k, c, 3, loop);
  std::vector<ForStmt*> between;
  Chain chain = loopsBetween(c, red, at, reduction, loop, between);
  c.setSubject(reduction);
  std::vector<Expr> guards = chain.guards;
  auto& stmts = listHolding(c, chain, guards).stmts;
  auto it = std::find_if(stmts.begin(), stmts.end(), [&](const Stmt& s) { return s.get() == red.loop; });
  c.check(8, it != stmts.end(), "is not directly in the body of '" + between.back()->h.var + "'");
  Setup setup = accumulatorSetup(k, c, std::vector<Stmt>(stmts.begin(), it), *red.loop);
  checkAccumulatorSizes(k, c, between, setup.accumulators);
  // Rewrite: the accumulators grow, then the body splits into three nests over the loops between: initial
  // values, the reduction (which moves outside), and what follows it.
  std::vector<LoopHeader> headers;
  for (ForStmt* f : between) headers.push_back(f->h);
  widenAccumulators(k, setup.accumulators, headers, chain.inner);
  std::vector<Stmt> after(it + 1, stmts.end());
  Stmt reductionBody = red.loop->body;
  LoopHeader reductionHeader = red.loop->h;
  std::vector<std::string> created;
  std::vector<Stmt> out = setup.allocs;
  out.push_back(renamedNest(k, headers, guards, setup.init, "init", created));
  // The reduction nest keeps the original loop names (later primitives name them); the copies are renamed.
  out.push_back(ForStmt::make(reductionHeader, asBlock(buildNest(headers, guards, reductionBody))));
  out.push_back(renamedNest(k, headers, guards, after, "epi", created));
  for (const Stmt& s : out)
    if (s->provenance.empty()) s->provenance = red.loop->provenance;
  at.loop->body = BlockStmt::make(out);
  return created;
}

}  // namespace tessera::kernel::sched
