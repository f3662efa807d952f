// Loop transformations: split, tile, reorder, fuse, and the loop kinds (vectorize, unroll, parallel, bind).
#include <algorithm>

#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

std::vector<std::string> split(Kernel& k, const std::string& loop, int64_t factor) {
  Checker c(k, "split", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  LoopHeader h = site.loop->h;
  c.check(2, factor >= 1, "factor " + std::to_string(factor) + " must be at least 1");
  c.check(3, h.loopKind == LoopKind::Serial, "loop is " + std::string(loopKindName(h.loopKind)) + ", not serial");
  // A factor past the extent makes one overhanging tile (vector lanes over a 13-wide row, overcompute); past
  // the extent rounded up to 16 lanes it would only add waste.
  const int64_t widest = std::max<int64_t>(h.extent, (h.extent + 15) / 16 * 16);
  c.check(4, factor <= widest,
          "factor " + std::to_string(factor) + " exceeds the extent " + std::to_string(h.extent) +
              (widest > h.extent ? " rounded up to 16 lanes (" + std::to_string(widest) + ")" : ""));
  LoopHeader outer = h, inner = h;
  outer.var = freshName(k, h.var + "_o");
  outer.extent = (h.extent + factor - 1) / factor;
  outer.pipelineStages = inner.pipelineStages = 0;
  inner.var = freshName(k, h.var + "_i");
  inner.extent = factor;
  Expr index = add(mul(var(outer.var), intImm(factor)), var(inner.var));
  Stmt body = site.loop->body;
  substitute(body, {{h.var, index}});
  // An index divided by the factor again ((v_o*f + v_i) / f) is v_o, its remainder v_i.
  std::map<std::string, int64_t> extents = loopsInside(k.body);
  extents[outer.var] = outer.extent;
  extents[inner.var] = inner.extent;
  mapAllExprs(body, [&](const Expr& e) { return simplifyDivMod(e, extents); });
  std::vector<Expr> guards;
  if (h.extent % factor != 0) guards.push_back(Binary::make(BinaryOp::Lt, index, intImm(h.extent)));
  *site.slot = buildNest({outer, inner}, guards, body);
  return {outer.var, inner.var};
}

void reorder(Kernel& k, const std::vector<std::string>& order) {
  Checker c(k, "reorder", order.empty() ? "" : order[0]);
  c.check(1, order.size() >= 2, "needs at least two loops");
  std::vector<LoopSite> sites;
  for (const std::string& name : order) {
    c.setSubject(name);
    sites.push_back(requireLoop(k, c, 2, name));
  }
  std::set<std::string> named(order.begin(), order.end());
  c.check(3, named.size() == order.size(), "appears twice in the order");
  // The outermost named loop is the one with the fewest enclosing loops.
  auto outer = std::min_element(sites.begin(), sites.end(),
                                [](const LoopSite& a, const LoopSite& b) { return a.enclosing.size() < b.enclosing.size(); });
  std::string missing;
  auto chain = perfectChain(outer->loop, named, &missing);
  c.setSubject(missing);
  c.check(4, chain.has_value(), "is not in the perfect loop nest under '" + outer->loop->h.var + "'");
  std::vector<LoopHeader> headers;
  for (ForStmt* f : chain->loops) headers.push_back(f->h);
  // The named loops' slots, in nest order, receive the named headers in the requested order.
  size_t next = 0;
  for (LoopHeader& h : headers) {
    if (!named.count(h.var)) continue;
    const std::string& wanted = order[next++];
    for (const LoopSite& s : sites)
      if (s.loop->h.var == wanted) h = s.loop->h;
  }
  *outer->slot = buildNest(headers, chain->guards, chain->inner);
}

std::vector<std::string> tile(Kernel& k, const std::vector<std::string>& loops, const std::vector<int64_t>& factors) {
  Checker c(k, "tile", loops.empty() ? "" : loops[0]);
  c.check(1, !loops.empty() && loops.size() == factors.size(), "needs one factor per loop");
  for (size_t i = 0; i + 1 < loops.size(); ++i) {
    c.setSubject(loops[i + 1]);
    LoopSite site = requireLoop(k, c, 2, loops[i]);
    std::string missing;
    auto chain = perfectChain(site.loop, {loops[i + 1]}, &missing);
    c.check(3, chain && chain->loops.size() == 2, "is not directly inside '" + loops[i] + "'");
  }
  std::vector<std::string> outers, inners;
  for (size_t i = 0; i < loops.size(); ++i) {
    auto parts = split(k, loops[i], factors[i]);
    outers.push_back(parts[0]);
    inners.push_back(parts[1]);
  }
  std::vector<std::string> order = outers;
  order.insert(order.end(), inners.begin(), inners.end());
  if (order.size() >= 2) reorder(k, order);
  return order;
}

std::string fuse(Kernel& k, const std::string& outer, const std::string& inner) {
  Checker c(k, "fuse", outer);
  LoopSite site = requireLoop(k, c, 1, outer);
  c.setSubject(inner);
  std::string missing;
  auto chain = perfectChain(site.loop, {inner}, &missing);
  c.check(2, chain && chain->loops.size() == 2, "is not directly inside '" + outer + "'");
  const LoopHeader& ho = chain->loops[0]->h;
  const LoopHeader& hi = chain->loops[1]->h;
  c.setSubject(ho.loopKind != LoopKind::Serial ? outer : inner);
  c.check(3, ho.loopKind == LoopKind::Serial && hi.loopKind == LoopKind::Serial, "must be serial to fuse");
  c.check(4, ho.reduction == hi.reduction, "cannot fuse a reduction loop with a data-parallel loop");
  LoopHeader fused = ho;
  fused.var = freshName(k, outer + "_" + inner);
  fused.extent = ho.extent * hi.extent;
  Stmt body = chain->inner;
  std::map<std::string, Expr> subst = {{ho.var, idiv(var(fused.var), intImm(hi.extent))},
                                       {hi.var, imod(var(fused.var), intImm(hi.extent))}};
  substitute(body, subst);
  std::vector<Expr> guards;
  for (const Expr& g : chain->guards) guards.push_back(substitute(g, subst));
  *site.slot = buildNest({fused}, guards, body);
  return fused.var;
}

void vectorize(Kernel& k, const std::string& loop) {
  Checker c(k, "vectorize", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  LoopHeader& h = site.loop->h;
  // A reduction loop may be vectorized: every backend runs its lanes in order (the CUDA vector path as an
  // unrolled loop over the wide loads' registers, the C++ generator as an unrolled loop, never `omp simd`),
  // so the accumulation order, and with it the result, stays that of the serial loop.
  c.check(2, h.loopKind == LoopKind::Serial, "loop is " + std::string(loopKindName(h.loopKind)) + ", not serial");
  c.check(3, !containsLoop(site.loop->body), "is not innermost");
  c.check(4, h.extent <= 16, "extent " + std::to_string(h.extent) + " exceeds 16 lanes");
  // A guard on the lanes is a mask on the CPU (the C++ vector path loads and stores the lanes it keeps); the
  // CUDA vector path has no masks, so a GPU schedule's lanes divide their loop.
  c.check(5, k.machine == Machine::Cpu || !containsKind(site.loop->body, StmtKind::IfThen),
          "body is guarded (the extent is not divisible)");
  c.check(6, !containsKind(site.loop->body, StmtKind::Sync), "body synchronizes");
  h.loopKind = LoopKind::Vectorized;
}

void unroll(Kernel& k, const std::string& loop) {
  Checker c(k, "unroll", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  LoopHeader& h = site.loop->h;
  c.check(2, h.loopKind == LoopKind::Serial, "loop is " + std::string(loopKindName(h.loopKind)) + ", not serial");
  c.check(3, h.extent <= 256, "extent " + std::to_string(h.extent) + " exceeds 256");
  h.loopKind = LoopKind::Unrolled;
}

void parallel(Kernel& k, const std::string& loop) {
  Checker c(k, "parallel", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  LoopHeader& h = site.loop->h;
  c.check(2, h.loopKind == LoopKind::Serial, "loop is " + std::string(loopKindName(h.loopKind)) + ", not serial");
  c.check(3, !h.reduction, "is a reduction loop");
  for (ForStmt* e : site.enclosing)
    c.check(4, e->h.loopKind != LoopKind::Parallel && e->h.loopKind != LoopKind::Bound,
            "is inside '" + e->h.var + "', which is already parallel");
  h.loopKind = LoopKind::Parallel;
}

void bind(Kernel& k, const std::string& loop, ThreadTag tag) {
  Checker c(k, "bind", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  LoopHeader& h = site.loop->h;
  c.check(2, tag != ThreadTag::None, "unknown thread tag");
  c.check(3, h.loopKind == LoopKind::Serial, "loop is " + std::string(loopKindName(h.loopKind)) + ", not serial");
  c.check(4, !h.reduction || tag == ThreadTag::ThreadX,
          "a reduction loop can only be bound to threadIdx.x (a cross-thread reduction)");
  std::string tagName(threadTagName(tag));
  for (ForStmt* e : site.enclosing) {
    c.check(5, e->h.tag != tag, "'" + e->h.var + "' around it is already bound to " + tagName);
    c.check(6, !(isBlockTag(tag) && isThreadTag(e->h.tag)),
            "cannot bind to " + tagName + " inside '" + e->h.var + "', which is bound to a thread index");
  }
  walk(site.loop->body, [&](StmtNode& n) {
    if (n.kind == StmtKind::For && static_cast<ForStmt&>(n).h.tag == tag)
      c.fail(5, "'" + static_cast<ForStmt&>(n).h.var + "' inside it is already bound to " + tagName);
  });
  if (isMmaTag(tag)) {
    int64_t rows = tag == ThreadTag::MmaRow ? 16 : 8;
    c.check(9, h.extent == rows, "an mma tile loop bound to " + tagName + " has extent " + std::to_string(rows));
    bool inRow = !site.enclosing.empty() && site.enclosing.back()->h.tag == ThreadTag::MmaRow;
    c.check(9, tag == ThreadTag::MmaRow || inRow, "mma.col must be directly inside a loop bound to mma.row");
    for (ForStmt* e : site.enclosing)
      c.check(9, e->h.tag != ThreadTag::ThreadX && e->h.tag != ThreadTag::Warp,
              "the mma lanes are threadIdx.x; '" + e->h.var + "' around it already uses it");
  }
  int64_t limit = isThreadTag(tag) ? (tag == ThreadTag::Warp ? 32 : tag == ThreadTag::ThreadZ ? 64 : isMmaTag(tag) ? 16 : 1024)
                  : tag == ThreadTag::BlockX ? 2147483647 : 65535;
  c.check(7, h.extent <= limit, "extent " + std::to_string(h.extent) + " exceeds the " + tagName + " limit " + std::to_string(limit));
  for (ForStmt* e : site.enclosing)
    c.check(8, !(e->h.tag == ThreadTag::Warp && tag == ThreadTag::ThreadX && h.extent > 32),
            "extent " + std::to_string(h.extent) + " exceeds the 32 lanes of warp loop '" + e->h.var + "'");
  h.loopKind = LoopKind::Bound;
  h.tag = tag;
}

}  // namespace tessera::kernel::sched
