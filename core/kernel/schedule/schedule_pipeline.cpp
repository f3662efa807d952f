// The pipeline primitive: a serial loop whose body starts by filling shared read caches runs software-pipelined,
// each cache `stages` copies filled by asynchronous copies (docs/kernel-ir.md, Pipelines).
#include <algorithm>
#include <set>

#include "kernel/launch.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

// The shared read caches the loop body allocates: what a pipeline multi-buffers.
std::set<std::string> sharedCachesOf(const Kernel& k, const BlockStmt& block) {
  std::set<std::string> caches;
  for (const Stmt& s : block.stmts) {
    if (s->kind != StmtKind::Allocate) continue;
    const Buffer* b = k.findBuffer(static_cast<AllocateStmt&>(*s).buffer);
    if (b && b->scope == MemScope::Shared && b->cacheIsRead && !b->cacheOf.empty()) caches.insert(b->name);
  }
  return caches;
}

// The block's shared memory once each cache becomes `stages` copies (one per iteration in flight).
int64_t pipelinedSharedBytes(const Kernel& k, const std::set<std::string>& caches, int stages) {
  int64_t extra = 0;
  for (const std::string& cache : caches) {
    const Buffer& b = *k.findBuffer(cache);
    extra += (stages - 1) * numElements(b.shape) * int64_t(dtypeSize(b.dtype));
  }
  return sharedBytesPerBlock(k) + extra;
}

// Turns a fill's stores of plain loads into asynchronous copies, and a zero-filled halo's select(inside, load,
// 0) into copies that write 0 outside (any other computed value stays a store: a generator then keeps the loop
// unpipelined).
void asyncFills(const Kernel& k, const std::set<std::string>& caches, Stmt& slot) {
  if (slot->kind == StmtKind::Store && caches.count(static_cast<StoreStmt&>(*slot).buffer)) {
    auto& st = static_cast<StoreStmt&>(*slot);
    Expr inside, value = st.value;
    if (value->kind == ExprKind::Select && k.findBuffer(st.buffer)->cacheZeroOutside) {
      const auto& sel = static_cast<const Select&>(*value);
      if (sel.f->kind == ExprKind::FloatImm && static_cast<const FloatImm&>(*sel.f).value == 0.0) {
        inside = sel.cond;
        value = sel.t;
      }
    }
    if (value->kind != ExprKind::Load) return;
    const auto& ld = static_cast<const Load&>(*value);
    slot = AsyncCopyStmt::make(st.buffer, st.indices, ld.buffer, ld.indices, inside);
    return;
  }
  forEachChild(*slot, [&](Stmt& child) { asyncFills(k, caches, child); });
}

}  // namespace

void pipeline(Kernel& k, const std::string& loop, int stages) {
  Checker c(k, "pipeline", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  LoopHeader& h = site.loop->h;
  c.check(2, h.loopKind == LoopKind::Serial, "loop is " + std::string(loopKindName(h.loopKind)) + ", not serial");
  c.check(3, stages >= 2 && stages <= 8, "stages " + std::to_string(stages) + " must be between 2 and 8");
  c.check(4, h.extent >= stages, "extent " + std::to_string(h.extent) + " is less than the stages");
  c.check(5, h.pipelineStages == 0, "is already pipelined");
  auto block = std::static_pointer_cast<BlockStmt>(asBlock(site.loop->body));
  std::set<std::string> caches = sharedCachesOf(k, *block);
  c.check(6, !caches.empty(), "its body fills no shared read cache (apply cache_read with scope shared first)");
  int64_t total = pipelinedSharedBytes(k, caches, stages);
  c.check(7, total <= kSharedBytesLimit, std::to_string(stages) + " stages need " + std::to_string(total) +
                                            " bytes of shared memory per block (limit " + sharedLimitText() + ")");
  auto isFill = [&](const Stmt& s) {
    return std::any_of(caches.begin(), caches.end(), [&](const std::string& cache) { return !writesOf(s, cache).empty(); });
  };
  // The markers follow the last fill of the run of fills and cache allocations the body starts with.
  size_t lastFill = block->stmts.size();
  for (size_t i = 0; i < block->stmts.size(); ++i) {
    const Stmt& s = block->stmts[i];
    if (isFill(s)) lastFill = i;
    else if (s->kind != StmtKind::Allocate) break;
  }
  c.check(8, lastFill < block->stmts.size(), "its body does not start with the fills of its shared caches");
  std::vector<Stmt> out;
  for (size_t i = 0; i < block->stmts.size(); ++i) {
    Stmt s = block->stmts[i];
    if (isFill(s)) asyncFills(k, caches, s);
    out.push_back(s);
    if (i == lastFill) {
      out.push_back(PipelineMarkerStmt::make(false, 0));
      out.push_back(PipelineMarkerStmt::make(true, stages - 1));
    }
  }
  block->stmts = out;
  site.loop->body = block;
  h.pipelineStages = stages;
}

}  // namespace tessera::kernel::sched
