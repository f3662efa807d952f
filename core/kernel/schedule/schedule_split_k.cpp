// split_k: a block's reduction spread over several blocks (split-K). A conv or gemm whose output tiles are too
// few to fill the GPU (ResNet's 7 x 7 layers at batch 1: 32 tiles for 132 SMs) runs each part of its k loop
// in a block of its own: phase 0 computes every tile's partial sums over one part and stores them to a global
// workspace; after a grid barrier, phase 1 runs the epilogue (bias, activation, residual, the output's store)
// on the sum of the parts, in the same blocks and threads as the epilogue ran before. The sums are added in
// another order than one block would, so a float result rounds differently (within the type's tolerance).
#include <algorithm>
#include <map>

#include "kernel/printer.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

constexpr int64_t kMaxParts = 16;

// The nest around the reduction: block-bound loops, each the only statement of the one outside it, the
// outermost the kernel's only top-level statement; `body` is the innermost one's statement list.
struct BlockNest {
  std::vector<ForStmt*> loops;
  std::shared_ptr<BlockStmt> body;
  size_t reduction = 0;  // the reduction loop's index in body
};

BlockNest blockNest(Kernel& k, const Checker& c, const LoopSite& site) {
  BlockNest nest;
  c.check(3, !site.enclosing.empty(), "is not inside the blocks' loops");
  for (ForStmt* f : site.enclosing) {
    c.check(3, f->h.loopKind == LoopKind::Bound && isBlockTag(f->h.tag),
            "loop '" + f->h.var + "' around it is not bound to blocks (apply split_k after binding the blocks and hoisting the reduction)");
    nest.loops.push_back(f);
  }
  c.check(3, unwrapBlocks(k.body).get() == site.enclosing.front(), "its blocks' nest is not the kernel's only top-level statement");
  for (size_t i = 0; i + 1 < nest.loops.size(); ++i)
    c.check(3, unwrapBlocks(nest.loops[i]->body).get() == nest.loops[i + 1], "the blocks' loops are not a perfect nest");
  nest.body = std::static_pointer_cast<BlockStmt>(asBlock(unwrapBlocks(nest.loops.back()->body)));
  nest.loops.back()->body = nest.body;
  bool found = false;
  for (size_t i = 0; i < nest.body->stmts.size(); ++i)
    if (nest.body->stmts[i].get() == site.loop) {
      nest.reduction = i;
      found = true;
    }
  c.check(3, found, "is not directly in the body of the innermost block loop (hoist the reduction to it first)");
  return nest;
}

// Steps 4-5: the accumulators the loop sums into: float register buffers, folded by sum only, never read inside.
std::vector<std::string> accumulatorsOf(const Kernel& k, const Checker& c, const ForStmt& f) {
  std::vector<std::string> out;
  walk(f.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Reduce) return;
    auto& r = static_cast<ReduceStmt&>(n);
    const Buffer* acc = k.findBuffer(r.buffer);
    c.check(4, r.op == ReduceOp::Sum, "it folds '" + r.buffer + "' by " + std::string(reduceOpName(r.op)) + ", not sum");
    c.check(4, acc && acc->scope == MemScope::Register && isFloat(acc->dtype), "'" + r.buffer + "' is not a float register accumulator");
    if (std::find(out.begin(), out.end(), r.buffer) == out.end()) out.push_back(r.buffer);
  });
  c.check(4, !out.empty(), "its body folds no accumulator");
  for (const std::string& a : out) c.check(5, loadsOf(f.body, a).empty(), "the reduction reads its accumulator '" + a + "'");
  return out;
}

bool isAccumulator(const std::vector<std::string>& accs, const std::string& b) {
  return std::find(accs.begin(), accs.end(), b) != accs.end();
}

// One accumulator's workspace: [parts, the block loops' extents, the accumulator's dims in `order`].
struct Workspace {
  Buffer buffer;
  std::vector<size_t> order;
};

// How fast a loop's variable changes across the threads that run the epilogue: along a warp's lanes
// (threadIdx.x, the mma lanes) 2, from warp to warp (threadIdx.y and z, warp) 1, within one thread 0.
int laneRank(ThreadTag t) {
  if (t == ThreadTag::ThreadX || isMmaTag(t)) return 2;
  return t == ThreadTag::ThreadY || t == ThreadTag::ThreadZ || t == ThreadTag::Warp ? 1 : 0;
}

// The accumulator's dims in the workspace's order: those the epilogue indexes by a thread's own loops first,
// then those of the warps, the lanes' innermost, so a warp's partial stores and phase 1's loads are consecutive.
// In the accumulator's own order each thread's micro-tile is innermost: in the CUDA-core gemm its lanes lay 16
// floats apart and used an eighth of each sector.
std::vector<size_t> workspaceOrder(const std::vector<Stmt>& after, const std::string& acc, size_t rank) {
  std::map<std::string, int> lane;
  for (const Stmt& s : after)
    walk(s, [&](StmtNode& n) {
      if (n.kind == StmtKind::For) lane[static_cast<ForStmt&>(n).h.var] = laneRank(static_cast<ForStmt&>(n).h.tag);
    });
  std::vector<int> score(rank, 0);
  for (const Stmt& s : after)
    for (const std::vector<Expr>& idx : loadsOf(s, acc))
      for (size_t d = 0; d < idx.size() && d < rank; ++d)
        for (const auto& [v, r] : lane)
          if (r > score[d] && usesVar(idx[d], v)) score[d] = r;
  std::vector<size_t> order(rank);
  for (size_t d = 0; d < rank; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  return order;
}

// The workspace element of accumulator element `indices` for part `part`.
Expr workspaceAt(const Workspace& ws, const Expr& part, const std::vector<ForStmt*>& blocks, const std::vector<Expr>& indices) {
  std::vector<Expr> at = {part};
  for (ForStmt* f : blocks) at.push_back(var(f->h.var));
  for (size_t d : ws.order) at.push_back(indices.at(d));
  return Load::make(ws.buffer.name, ws.buffer.dtype, at);
}

// Phase 0's epilogue: the loops and guards of `s` kept, each statement that reads an accumulator replaced by
// stores of the elements it reads to the part's workspace, the others dropped.
Stmt partialStores(const Stmt& s, const std::map<std::string, Workspace>& workspaces, const Expr& part,
                   const std::vector<ForStmt*>& blocks) {
  if (s->kind == StmtKind::For || s->kind == StmtKind::IfThen || s->kind == StmtKind::Block) {
    Stmt copy = cloneStmt(s);
    if (copy->kind == StmtKind::Block) {
      std::vector<Stmt> kept;
      for (const Stmt& c : static_cast<BlockStmt&>(*copy).stmts) kept.push_back(partialStores(c, workspaces, part, blocks));
      return BlockStmt::make(kept);
    }
    forEachChild(*copy, [&](Stmt& child) { child = partialStores(child, workspaces, part, blocks); });
    return copy;
  }
  std::vector<Stmt> stores;
  std::set<std::string> seen;
  for (const auto& [acc, ws] : workspaces)
    for (const std::vector<Expr>& idx : loadsOf(s, acc)) {
      Expr element = Load::make(acc, ws.buffer.dtype, idx);
      if (!seen.insert(printExpr(element)).second) continue;
      Stmt st = StoreStmt::make(ws.buffer.name, static_cast<const Load&>(*workspaceAt(ws, part, blocks, idx)).indices, element);
      st->provenance = s->provenance;
      stores.push_back(st);
    }
  return BlockStmt::make(stores);
}

// Phase 1's epilogue: every read of an accumulator element becomes the sum of its parts.
Stmt summedEpilogue(const Stmt& s, const std::map<std::string, Workspace>& workspaces, int64_t parts,
                    const std::vector<ForStmt*>& blocks) {
  Stmt copy = cloneStmt(s);
  mapAllExprs(copy, [&](const Expr& e) {
    return mapExpr(e, [&](const Expr& n) -> Expr {
      if (n->kind != ExprKind::Load) return n;
      auto& ld = static_cast<const Load&>(*n);
      auto it = workspaces.find(ld.buffer);
      if (it == workspaces.end()) return n;
      Expr sum = workspaceAt(it->second, intImm(0), blocks, ld.indices);
      for (int64_t p = 1; p < parts; ++p)
        sum = Binary::make(BinaryOp::Add, sum, workspaceAt(it->second, intImm(p), blocks, ld.indices));
      return sum;
    });
  });
  return copy;
}

// Every loop of `s` renamed to a fresh name (phase 1's copies of phase 0's loops).
void renameLoops(const Stmt& s, Names& names, std::map<std::string, Expr>& renames) {
  walk(s, [&](StmtNode& n) {
    if (n.kind != StmtKind::For) return;
    auto& f = static_cast<ForStmt&>(n);
    std::string name = names.fresh(f.h.var + "_sum");
    renames[f.h.var] = var(name);
    f.h.var = name;
  });
}

}  // namespace

std::vector<std::string> splitK(Kernel& k, const std::string& loop, int64_t parts) {
  Checker c(k, "split_k", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  c.check(2, parts >= 2 && parts <= kMaxParts, "parts " + std::to_string(parts) + " must be between 2 and " + std::to_string(kMaxParts));
  c.check(2, site.loop->h.reduction && site.loop->h.loopKind != LoopKind::Bound, "is not a serial reduction loop");
  c.check(2, site.loop->h.extent % parts == 0,
          "parts " + std::to_string(parts) + " does not divide its " + std::to_string(site.loop->h.extent) + " iterations");
  BlockNest nest = blockNest(k, c, site);
  std::vector<std::string> accs = accumulatorsOf(k, c, *site.loop);
  std::vector<Stmt> before(nest.body->stmts.begin(), nest.body->stmts.begin() + nest.reduction);
  std::vector<Stmt> after(nest.body->stmts.begin() + nest.reduction + 1, nest.body->stmts.end());
  for (const Stmt& s : after)
    walk(s, [&](StmtNode& n) {
      if (n.kind == StmtKind::Reduce) c.check(6, false, "the statements after it reduce again ('" + static_cast<ReduceStmt&>(n).buffer + "')");
      if (n.kind == StmtKind::Sync) c.check(6, false, "the statements after it synchronize the block");
    });
  for (const Stmt& s : before)
    if (s->kind == StmtKind::Allocate) {
      const std::string& b = static_cast<AllocateStmt&>(*s).buffer;
      for (const Stmt& a : after)
        c.check(6, isAccumulator(accs, b) || (loadsOf(a, b).empty() && writesOf(a, b).empty()),
                "the statements after it use '" + b + "', allocated in the block");
    }

  // One workspace per accumulator: [parts, the block loops' extents, the accumulator's dims reordered].
  Names names(k);
  std::map<std::string, Workspace> workspaces;
  std::vector<std::string> created;
  for (const std::string& acc : accs) {
    const Buffer& a = *k.findBuffer(acc);
    Shape shape = {parts};
    for (ForStmt* f : nest.loops) shape.push_back(f->h.extent);
    std::vector<size_t> order = workspaceOrder(after, acc, a.shape.size());
    for (size_t d : order) shape.push_back(a.shape[d]);
    workspaces[acc] = {{names.fresh(acc + "_parts"), a.dtype, shape, MemScope::Global, BufferRole::Temp, "", "", true, {}}, order};
  }

  // Phase 1 (built first, from the unchanged nest): the block loops again, renamed, around the summed epilogue.
  std::vector<Stmt> epilogue;
  for (const Stmt& s : after) epilogue.push_back(summedEpilogue(s, workspaces, parts, nest.loops));
  std::vector<LoopHeader> headers;
  for (ForStmt* f : nest.loops) headers.push_back(f->h);
  Stmt phase1 = buildNest(headers, {}, BlockStmt::make(epilogue));
  phase1->provenance = nest.loops.front()->provenance;
  std::map<std::string, Expr> renames;
  renameLoops(phase1, names, renames);
  substitute(phase1, renames);

  // Phase 0: the part joins blockIdx.z (the z loop runs its extent x parts) or gets a z loop of its own.
  ForStmt* z = nullptr;
  for (ForStmt* f : nest.loops)
    if (f->h.tag == ThreadTag::BlockZ) z = f;
  std::string part = names.fresh(loop + "_part");
  std::vector<Stmt> body0 = before;
  int64_t chunk = site.loop->h.extent / parts;
  auto chunked = std::static_pointer_cast<ForStmt>(cloneStmt(*site.slot));
  chunked->h.extent = chunk;
  substitute(chunked->body, {{loop, add(mul(var(part), intImm(chunk)), var(loop))}});
  body0.push_back(chunked);
  for (const Stmt& s : after) body0.push_back(partialStores(s, workspaces, var(part), nest.loops));
  nest.loops.back()->body = BlockStmt::make(body0);
  Stmt phase0 = k.body;
  if (z) {
    std::string zvar = z->h.var, fused = names.fresh(zvar + "_" + part);
    int64_t extent = z->h.extent;
    z->h.var = fused;
    z->h.extent = extent * parts;
    substitute(z->body, {{zvar, Binary::make(BinaryOp::Div, var(fused), intImm(parts))},
                         {part, Binary::make(BinaryOp::Mod, var(fused), intImm(parts))}});
    created.push_back(fused);
  } else {
    LoopHeader h;
    h.var = part;
    h.extent = parts;
    h.loopKind = LoopKind::Bound;
    h.tag = ThreadTag::BlockZ;
    phase0 = ForStmt::make(h, asBlock(unwrapBlocks(k.body)));
    phase0->provenance = nest.loops.front()->provenance;
    created.push_back(part);
  }
  std::vector<Stmt> top;
  for (const auto& [acc, ws] : workspaces) top.push_back(AllocateStmt::make(ws.buffer.name));
  top.push_back(phase0);
  top.push_back(SyncStmt::makeGrid());
  top.push_back(phase1);
  k.body = BlockStmt::make(top);
  for (const auto& [acc, ws] : workspaces) {
    k.buffers.push_back(ws.buffer);
    created.push_back(ws.buffer.name);
  }
  return created;
}

}  // namespace tessera::kernel::sched
