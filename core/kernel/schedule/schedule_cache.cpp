// Memory-scope primitives: cache_read, cache_write, compute_at; and set_param (pipeline: schedule_pipeline.cpp).
#include <algorithm>

#include "kernel/launch.h"
#include "kernel/printer.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

constexpr int64_t kRegisterElements = 256;

void forEachExprOf(const Stmt& s, const std::function<void(const ExprNode&)>& f) {
  walk(s, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, f);
      return e;
    });
  });
}

struct Footprint {
  std::vector<Expr> base;
  Shape extent;
};

// The box of `buffer` touched by `accesses`, relative to the loops inside the cache's loop (step `step`).
Footprint footprintOf(const Checker& c, int step, const std::string& buffer,
                      const std::vector<std::vector<Expr>>& accesses, const std::map<std::string, int64_t>& local) {
  LocalTerms terms(local);
  Footprint fp;
  for (const auto& idx : accesses) {
    if (fp.base.empty()) {
      fp.base.resize(idx.size());
      fp.extent.assign(idx.size(), 1);
    }
    for (size_t d = 0; d < idx.size(); ++d) {
      auto a = affine(terms.withAtoms(idx[d]), terms.vars());
      if (!a) c.fail(step, "index " + std::to_string(d) + " of '" + buffer + "' (" + printExpr(idx[d]) + ") is not affine in the loops inside");
      int64_t ext = 1;
      for (auto& [v, k] : a->coef) {
        if (k < 0) c.fail(step, "index " + std::to_string(d) + " of '" + buffer + "' decreases with '" + v + "'");
        ext += k * (terms.extent(v) - 1);
      }
      if (!fp.base[d]) fp.base[d] = a->rest;
      else if (printExpr(fp.base[d]) != printExpr(a->rest))
        c.fail(step, "accesses of '" + buffer + "' start at different offsets in dimension " + std::to_string(d));
      fp.extent[d] = std::max(fp.extent[d], ext);
    }
  }
  return fp;
}

void checkSize(const Checker& c, int step, MemScope scope, const Footprint& fp, DType t) {
  int64_t n = 1;
  for (int64_t e : fp.extent) n *= e;
  if (scope == MemScope::Shared)
    c.check(step, n * int64_t(dtypeSize(t)) <= kSharedBytesLimit,
            "the cache needs " + std::to_string(n * int64_t(dtypeSize(t))) + " bytes of shared memory (limit " +
                sharedLimitText() + ")");
  else c.check(step, n <= kRegisterElements, "the cache needs " + std::to_string(n) + " registers (limit 256)");
}

bool mayBeNegative(const Expr& e) {
  bool neg = false;
  walkExpr(e, [&](const ExprNode& n) {
    neg |= n.kind == ExprKind::Binary && static_cast<const Binary&>(n).op == BinaryOp::Sub;
    neg |= n.kind == ExprKind::IntImm && static_cast<const IntImm&>(n).value < 0;
  });
  return neg;
}

// The copy loops between `buffer` (at base + ax) and the cache (at ax), guarded where the box may leave the buffer.
Stmt copyNest(Kernel& k, const std::string& cache, const Buffer& buf, const Footprint& fp,
              const std::map<std::string, int64_t>& outerExtents, bool toCache, std::vector<std::string>& loopNames,
              bool zeroOutside = false) {
  std::vector<LoopHeader> headers;
  std::vector<Expr> cacheIdx, bufIdx, guards;
  for (size_t d = 0; d < fp.extent.size(); ++d) {
    LoopHeader h;
    h.var = freshName(k, cache + "_ax" + std::to_string(d));
    loopNames.push_back(h.var);
    h.extent = fp.extent[d];
    headers.push_back(h);
    Expr at = add(fp.base[d], var(h.var));
    cacheIdx.push_back(var(h.var));
    bufIdx.push_back(at);
    auto ub = upperBound(fp.base[d], outerExtents);
    if (!ub || *ub + fp.extent[d] > buf.shape[d]) guards.push_back(Binary::make(BinaryOp::Lt, at, intImm(buf.shape[d])));
    if (mayBeNegative(fp.base[d])) guards.push_back(Binary::make(BinaryOp::Ge, at, intImm(0)));
  }
  Stmt copy = toCache ? StoreStmt::make(cache, cacheIdx, Load::make(buf.name, buf.dtype, bufIdx))
                      : StoreStmt::make(buf.name, bufIdx, Load::make(cache, buf.dtype, cacheIdx));
  if (zeroOutside && !guards.empty()) {  // every entry written: the source's, or 0 outside it
    Expr inside = guards[0];
    for (size_t i = 1; i < guards.size(); ++i) inside = Binary::make(BinaryOp::And, inside, guards[i]);
    copy = StoreStmt::make(cache, cacheIdx, Select::make(inside, Load::make(buf.name, buf.dtype, bufIdx), FloatImm::make(0, buf.dtype)));
    guards.clear();
  }
  return buildNest(headers, guards, copy);
}

std::map<std::string, int64_t> enclosingExtents(const LoopSite& site) {
  std::map<std::string, int64_t> out;
  for (ForStmt* f : site.enclosing) out[f->h.var] = f->h.extent;
  out[site.loop->h.var] = site.loop->h.extent;
  return out;
}

std::vector<Expr> relative(const std::vector<Expr>& idx, const std::map<std::string, int64_t>& local) {
  LocalTerms terms(local);
  std::vector<Expr> out;
  for (const Expr& i : idx) out.push_back(terms.withoutAtoms(linearPart(*affine(terms.withAtoms(i), terms.vars()))));
  return out;
}

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (e->kind == ExprKind::Binary && static_cast<const Binary&>(*e).op == BinaryOp::And) {
    conjuncts(static_cast<const Binary&>(*e).a, out);
    conjuncts(static_cast<const Binary&>(*e).b, out);
  } else {
    out.push_back(e);
  }
}

// The load of `buffer` that select(cond, load, 0) masks by its own bounds: every term of cond is
// `idx[d] >= 0` or `idx[d] < shape[d]` of that load (a conv's padding). Null for any other select.
const Load* boundsMaskedLoad(const ExprNode& e, const Buffer& buf) {
  if (e.kind != ExprKind::Select) return nullptr;
  const auto& s = static_cast<const Select&>(e);
  const Expr& f = s.f->kind == ExprKind::Cast ? static_cast<const Cast&>(*s.f).a : s.f;
  const Expr& t = s.t->kind == ExprKind::Cast ? static_cast<const Cast&>(*s.t).a : s.t;
  if (f->kind != ExprKind::FloatImm || static_cast<const FloatImm&>(*f).value != 0.0) return nullptr;
  if (t->kind != ExprKind::Load || static_cast<const Load&>(*t).buffer != buf.name) return nullptr;
  const auto& load = static_cast<const Load&>(*t);
  std::vector<Expr> terms;
  conjuncts(s.cond, terms);
  for (const Expr& term : terms) {
    if (term->kind != ExprKind::Binary) return nullptr;
    const auto& b = static_cast<const Binary&>(*term);
    if (b.b->kind != ExprKind::IntImm) return nullptr;
    int64_t bound = static_cast<const IntImm&>(*b.b).value;
    bool matched = false;
    for (size_t d = 0; d < load.indices.size() && !matched; ++d)
      matched = printExpr(b.a) == printExpr(load.indices[d]) &&
                ((b.op == BinaryOp::Ge && bound == 0) || (b.op == BinaryOp::Lt && bound == buf.shape[d]));
    if (!matched) return nullptr;
  }
  return &load;
}

bool hasBoundsMasks(const Stmt& body, const Buffer& buf) {
  bool found = false;
  forEachExprOf(body, [&](const ExprNode& n) {
    found |= boundsMaskedLoad(n, buf) != nullptr;
  });
  return found;
}

// Drops the selects masking reads of `buffer` by its bounds inside `body` (the cache's fill writes 0 there).
void dropBoundsMasks(const Stmt& body, const Buffer& buf) {
  mapAllExprs(body, [&](const Expr& e) -> Expr { return boundsMaskedLoad(*e, buf) ? static_cast<const Select&>(*e).t : e; });
}

bool isSharedCache(const Kernel& k, const std::string& name) {
  const Buffer* b = k.findBuffer(name);
  return b && b->scope == MemScope::Shared && !b->cacheOf.empty() && b->cacheIsRead;
}

// The block starts with the allocation of a shared read cache (and so with its fill and barrier).
bool startsWithSharedFill(const Kernel& k, const BlockStmt& block) {
  return !block.stmts.empty() && block.stmts[0]->kind == StmtKind::Allocate &&
         isSharedCache(k, static_cast<AllocateStmt&>(*block.stmts[0]).buffer);
}

bool endsWithSync(const BlockStmt& block) {
  return !block.stmts.empty() && block.stmts.back()->kind == StmtKind::Sync;
}

std::string cacheNameFor(const Kernel& k, const std::string& buffer, MemScope scope) {
  return freshName(k, buffer + (scope == MemScope::Shared ? "_shared" : "_local"));
}

// Starts the box's last dimension at a multiple of `align` elements and rounds its extent up to whole runs; the
// shift (how many elements earlier the box now starts), which the reads add back. The start must be a multiple
// of `align` in the enclosing loops (their quotients and remainders by constants included) plus a constant (a
// conv halo's 16·(p % 2) - 1: 3 earlier).
int64_t alignBox(const Checker& c, Footprint& fp, const std::map<std::string, int64_t>& outer, int64_t align) {
  LocalTerms terms(outer);  // a fused tile loop's p % 2 and p / 2 count as variables
  auto a = affine(terms.withAtoms(fp.base.back()), terms.vars());
  bool aligned = a && a->rest->kind == ExprKind::IntImm;
  for (const auto& [v, coef] : aligned ? a->coef : std::map<std::string, int64_t>{}) aligned = aligned && coef % align == 0;
  c.check(3, aligned, "align: the box's start along the last dimension (" + printExpr(fp.base.back()) +
                          ") is not a multiple of " + std::to_string(align) + " plus a constant");
  const int64_t rest = static_cast<const IntImm&>(*a->rest).value, shift = ((rest % align) + align) % align;
  // Rebuilt as its terms plus one constant (a multiple of `align`), so that later passes see its divisor.
  fp.base.back() = terms.withoutAtoms(add(linearPart(*a), intImm(rest - shift)));
  fp.extent.back() = (fp.extent.back() + shift + align - 1) / align * align;
  return shift;
}

}  // namespace

std::vector<std::string> cacheRead(Kernel& k, const std::string& loop, const std::string& buffer, MemScope scope,
                                   const std::string& cacheName, int64_t pad, int64_t padRows, int64_t align) {
  Checker c(k, "cache_read", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  const Buffer* buf = k.findBuffer(buffer);
  c.check(2, buf && buf->scope == MemScope::Global, "no global buffer named '" + buffer + "'");
  c.check(3, scope != MemScope::Global, "the cache must be in shared memory or registers");
  c.check(3, pad >= 0 && pad <= 64, "pad " + std::to_string(pad) + " must be between 0 and 64");
  c.check(3, padRows >= 0 && padRows <= 64, "pad_rows " + std::to_string(padRows) + " must be between 0 and 64");
  c.check(3, align == 0 || (align >= 2 && align <= 16), "align " + std::to_string(align) + " must be 0 or between 2 and 16");
  Stmt body = site.loop->body;
  auto loads = loadsOf(body, buffer);
  c.check(4, !loads.empty(), "'" + buffer + "' is not read inside the loop");
  c.check(5, writesOf(body, buffer).empty(), "'" + buffer + "' is written inside the loop");
  auto local = loopsInside(body);
  Footprint fp = footprintOf(c, 6, buffer, loads, local);
  const int64_t shift = align > 1 ? alignBox(c, fp, enclosingExtents(site), align) : 0;
  // Reads masked by the buffer's own bounds (select(inside, x, 0)) read the cache unmasked: its fill writes 0
  // outside the buffer (floating-point buffers; the mask's zero must be the type's).
  bool zeroOutside = isFloat(buf->dtype) && hasBoundsMasks(body, *buf);
  Footprint padded = fp;
  if (!padded.extent.empty()) padded.extent.back() += pad;
  c.check(3, padRows == 0 || padded.extent.size() >= 2, "pad_rows needs a cache of 2 dimensions or more");
  if (padRows) padded.extent[padded.extent.size() - 2] += padRows;
  checkSize(c, 7, scope, padded, buf->dtype);
  Buffer cache{cacheName.empty() ? cacheNameFor(k, buffer, scope) : cacheName, buf->dtype, padded.extent, scope,
               BufferRole::Temp, "", buffer, true, fp.base, pad, zeroOutside};
  cache.cacheRowPad = padRows;
  cache.cacheAlign = align;
  if (zeroOutside) dropBoundsMasks(body, *buf);
  mapAllExprs(body, [&](const Expr& e) -> Expr {
    if (e->kind != ExprKind::Load || static_cast<const Load&>(*e).buffer != buffer) return e;
    std::vector<Expr> at = relative(static_cast<const Load&>(*e).indices, local);
    if (shift) at.back() = add(at.back(), intImm(shift));
    return Load::make(cache.name, e->dtype, at);
  });
  Buffer source = *buf;
  k.buffers.push_back(cache);
  std::vector<std::string> outputs = {cache.name};
  Stmt fill = copyNest(k, cache.name, source, fp, enclosingExtents(site), true, outputs, zeroOutside);
  auto block = std::static_pointer_cast<BlockStmt>(asBlock(body));
  std::vector<Stmt> head = {AllocateStmt::make(cache.name), fill};
  if (scope == MemScope::Shared) {
    // One barrier serves a run of fills: a fill placed before another cache's fill shares its barrier.
    if (!startsWithSharedFill(k, *block)) head.push_back(SyncStmt::make());
    // In a loop that repeats within a block, the next iteration's fill must wait until every thread has
    // finished reading this one's.
    bool repeats = !(site.loop->h.loopKind == LoopKind::Bound && isBlockTag(site.loop->h.tag));
    if (repeats && !endsWithSync(*block)) block->stmts.push_back(SyncStmt::make());
  }
  block->stmts.insert(block->stmts.begin(), head.begin(), head.end());
  site.loop->body = block;
  return outputs;
}

std::vector<std::string> cacheWrite(Kernel& k, const std::string& loop, const std::string& buffer, MemScope scope) {
  Checker c(k, "cache_write", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  const Buffer* buf = k.findBuffer(buffer);
  c.check(2, buf && buf->scope == MemScope::Global, "no global buffer named '" + buffer + "'");
  c.check(3, scope != MemScope::Global, "the cache must be in shared memory or registers");
  Stmt body = site.loop->body;
  int reduces = 0;
  auto stores = writesOf(body, buffer, &reduces);
  c.check(4, !stores.empty(), "'" + buffer + "' is not stored inside the loop");
  c.check(5, reduces == 0 && loadsOf(body, buffer).empty(), "'" + buffer + "' is also read or reduced inside the loop");
  auto local = loopsInside(body);
  Footprint fp = footprintOf(c, 6, buffer, stores, local);
  checkSize(c, 7, scope, fp, buf->dtype);
  Buffer cache{cacheNameFor(k, buffer, scope), buf->dtype, fp.extent, scope, BufferRole::Temp, "", buffer, false, fp.base};
  walk(body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Store || static_cast<StoreStmt&>(n).buffer != buffer) return;
    auto& s = static_cast<StoreStmt&>(n);
    s.buffer = cache.name;
    s.indices = relative(s.indices, local);
  });
  Buffer target = *buf;
  k.buffers.push_back(cache);
  std::vector<std::string> outputs = {cache.name};
  Stmt back = copyNest(k, cache.name, target, fp, enclosingExtents(site), false, outputs);
  auto block = std::static_pointer_cast<BlockStmt>(asBlock(body));
  block->stmts.insert(block->stmts.begin(), AllocateStmt::make(cache.name));
  if (scope == MemScope::Shared) block->stmts.push_back(SyncStmt::make());
  block->stmts.push_back(back);
  site.loop->body = block;
  return outputs;
}

namespace {

bool fillsSharedCache(const Kernel& k, const Stmt& s) {
  for (const Buffer& b : k.buffers)
    if (isSharedCache(k, b.name) && !writesOf(s, b.name).empty()) return true;
  return false;
}

// Removes a read cache: its allocation, fill and barrier go, and its reads go back to the source buffer.
void uncache(Kernel& k, const Buffer& cache) {
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Block) return;
    auto& stmts = static_cast<BlockStmt&>(n).stmts;
    // Only the block that declares the cache holds its fill (outer blocks contain it, too, deeper down).
    bool declares = std::any_of(stmts.begin(), stmts.end(), [&](const Stmt& s) {
      return s->kind == StmtKind::Allocate && static_cast<AllocateStmt&>(*s).buffer == cache.name;
    });
    if (!declares) return;
    // Drops the cache's allocation and fill; then the barriers (and pipeline markers) that followed it,
    // unless another fill still precedes them; then a trailing barrier when no shared cache is left.
    std::vector<Stmt> kept;
    bool removed = false;
    for (const Stmt& s : stmts) {
      bool isAlloc = s->kind == StmtKind::Allocate && static_cast<AllocateStmt&>(*s).buffer == cache.name;
      bool isFill = !writesOf(s, cache.name).empty();
      bool isBarrier = s->kind == StmtKind::Sync || s->kind == StmtKind::PipelineMarker;
      bool otherFillBefore = !kept.empty() && (kept.back()->kind == StmtKind::PipelineMarker || fillsSharedCache(k, kept.back()));
      if (isAlloc || isFill || (removed && isBarrier && !otherFillBefore)) {
        removed = true;
        continue;
      }
      removed = removed && isBarrier;
      kept.push_back(s);
    }
    bool cachesLeft = std::any_of(kept.begin(), kept.end(), [&](const Stmt& s) {
      return s->kind == StmtKind::Allocate && isSharedCache(k, static_cast<AllocateStmt&>(*s).buffer) &&
             static_cast<AllocateStmt&>(*s).buffer != cache.name;
    });
    if (!cachesLeft && !kept.empty() && kept.back()->kind == StmtKind::Sync) kept.pop_back();
    stmts = kept;
  });
  mapAllExprs(k.body, [&](const Expr& e) -> Expr {
    if (e->kind != ExprKind::Load || static_cast<const Load&>(*e).buffer != cache.name) return e;
    const auto& idx = static_cast<const Load&>(*e).indices;
    std::vector<Expr> back;
    for (size_t d = 0; d < idx.size(); ++d) back.push_back(add(cache.cacheBase[d], idx[d]));
    Expr load = Load::make(cache.cacheOf, e->dtype, back);
    if (!cache.cacheZeroOutside) return load;
    // The cache held 0 outside the source: the read gets its mask back.
    const Buffer& source = *k.findBuffer(cache.cacheOf);
    Expr inside;
    for (size_t d = 0; d < back.size(); ++d) {
      Expr in = Binary::make(BinaryOp::And, Binary::make(BinaryOp::Ge, back[d], intImm(0)),
                             Binary::make(BinaryOp::Lt, back[d], intImm(source.shape[d])));
      inside = inside ? Binary::make(BinaryOp::And, inside, in) : in;
    }
    return Select::make(inside, load, FloatImm::make(0, e->dtype));
  });
  k.buffers.erase(std::remove_if(k.buffers.begin(), k.buffers.end(), [&](const Buffer& b) { return b.name == cache.name; }),
                  k.buffers.end());
}

bool pipelinedAround(Kernel& k, const std::string& cache) {
  bool found = false;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind == StmtKind::For && static_cast<ForStmt&>(n).h.pipelineStages > 1 &&
        !writesOf(static_cast<ForStmt&>(n).body, cache).empty())
      found = true;
  });
  return found;
}

}  // namespace

std::vector<std::string> computeAt(Kernel& k, const std::string& cache, const std::string& loop) {
  Checker c(k, "compute_at", loop);
  const Buffer* buf = k.findBuffer(cache);
  c.check(1, buf && !buf->cacheOf.empty() && buf->cacheIsRead, "'" + cache + "' is not a read cache");
  c.check(1, !buf->cacheByIteration, "'" + cache + "' is indexed by iterations (keep_in_registers), not by a box of its source");
  LoopSite site = requireLoop(k, c, 2, loop);
  c.check(3, !loadsOf(site.loop->body, cache).empty(), "'" + cache + "' is not read inside the loop");
  c.check(4, !pipelinedAround(k, cache), "the fill of '" + cache + "' is in a pipelined loop");
  c.check(4, buf->swizzleBytes == 0, "'" + cache + "' is swizzled: move it before swizzling it");
  Kernel trial = k.clone();
  Buffer saved = *buf;
  uncache(trial, saved);
  std::vector<std::string> out;
  try {
    out = cacheRead(trial, loop, saved.cacheOf, saved.scope, saved.name, saved.cachePad, saved.cacheRowPad, saved.cacheAlign);
  } catch (const ScheduleError& e) {
    c.fail(5, std::string("the cache cannot be placed there: ") + e.what());
  }
  k = std::move(trial);
  return out;
}

void setParam(Kernel& k, const std::string& name, int64_t value) {
  Checker c(k, "set_param", name);
  bool ident = !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
  c.check(1, ident, "a parameter name is lower-case letters, digits and '_'");
  c.check(2, value >= 0, "value " + std::to_string(value) + " is negative");
  k.params[name] = value;
}

}  // namespace tessera::kernel::sched
