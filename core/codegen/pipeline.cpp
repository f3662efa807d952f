// Software-pipelined loops on the GPU (docs/kernel-ir.md, Pipelines; docs/codegen.md, Pipelines). A loop
// marked pipeline(S) whose body starts with the asynchronous fills of shared caches allocated there gets S
// copies of each cache (iteration i uses copy i % S), a prologue issuing the fills of iterations 0 .. S-2, and
// in iteration i the fills of iteration i + S - 1 before the wait for iteration i's: cp.async copies, of 16
// bytes where a thread's run of lanes is provably contiguous and aligned. A body of any other shape runs as
// written: copies synchronous, one copy of each cache, the markers no-ops (the IR's serial meaning).
#include <set>

#include "codegen/generator.h"
#include "codegen/vector_access.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

// The body of a pipelined loop as the generator can pipeline it: allocations of shared caches and their
// asynchronous fills, then a commit; after that nothing copies into or writes those caches.
struct PipelineShape {
  std::vector<std::string> caches;  // allocated and filled at the start of the body, in allocation order
  std::vector<Stmt> fills;
  size_t rest = 0;  // index of the first statement after the fills (the commit)
};

namespace {

bool containsKind(const Stmt& s, StmtKind kind) {
  bool found = false;
  walk(s, [&](StmtNode& n) { found = found || n.kind == kind; });
  return found;
}

std::set<std::string> asyncDestinations(const Stmt& s) {
  std::set<std::string> out;
  walk(s, [&](StmtNode& n) {
    if (n.kind == StmtKind::AsyncCopy) out.insert(static_cast<AsyncCopyStmt&>(n).dst);
  });
  return out;
}

bool writes(const Stmt& s, const std::set<std::string>& buffers) {
  bool found = false;
  walk(s, [&](StmtNode& n) {
    if (n.kind == StmtKind::Store) found = found || buffers.count(static_cast<StoreStmt&>(n).buffer);
    if (n.kind == StmtKind::Reduce) found = found || buffers.count(static_cast<ReduceStmt&>(n).buffer);
    if (n.kind == StmtKind::AsyncCopy) found = found || buffers.count(static_cast<AsyncCopyStmt&>(n).dst);
  });
  return found;
}

bool isCommit(const Stmt& s) {
  return s->kind == StmtKind::PipelineMarker && !static_cast<PipelineMarkerStmt&>(*s).wait;
}

std::optional<PipelineShape> pipelineShape(const Kernel& k, const ForStmt& f) {
  if (f.body->kind != StmtKind::Block) return std::nullopt;
  const auto& stmts = static_cast<BlockStmt&>(*f.body).stmts;
  PipelineShape shape;
  std::set<std::string> caches, filled;
  size_t i = 0;
  for (; i < stmts.size() && !isCommit(stmts[i]); ++i) {
    const Stmt& s = stmts[i];
    if (s->kind == StmtKind::Allocate) {
      const Buffer* b = k.findBuffer(static_cast<AllocateStmt&>(*s).buffer);
      if (!b || b->scope != MemScope::Shared) return std::nullopt;
      caches.insert(b->name);
      shape.caches.push_back(b->name);
      continue;
    }
    std::set<std::string> dsts = asyncDestinations(s);
    if (dsts.empty() || containsKind(s, StmtKind::Sync) || containsKind(s, StmtKind::PipelineMarker) ||
        containsKind(s, StmtKind::Allocate) || containsKind(s, StmtKind::Store) || containsKind(s, StmtKind::Reduce))
      return std::nullopt;
    filled.insert(dsts.begin(), dsts.end());
    shape.fills.push_back(s);
  }
  if (i == stmts.size() || shape.fills.empty() || filled != caches) return std::nullopt;
  for (size_t j = i; j < stmts.size(); ++j)
    if (writes(stmts[j], caches)) return std::nullopt;
  shape.rest = i;
  return shape;
}

// True when no comparison in `cond` changes over the lanes 0..width-1 of `lane`.
bool laneInvariant(const Expr& cond, const std::string& lane, int64_t width) {
  if (!usesVar(cond, lane)) return true;
  if (cond->kind != ExprKind::Binary) return false;
  const auto& b = static_cast<const Binary&>(*cond);
  if (b.op == BinaryOp::And) return laneInvariant(b.a, lane, width) && laneInvariant(b.b, lane, width);
  bool compares = b.op == BinaryOp::Lt || b.op == BinaryOp::Le || b.op == BinaryOp::Gt || b.op == BinaryOp::Ge ||
                  b.op == BinaryOp::Eq || b.op == BinaryOp::Ne;
  if (!compares) return false;
  auto l = laneForm(b.a, lane, width), r = laneForm(b.b, lane, width);
  if (!l || !r) return false;
  if (l->coef == 0 && r->coef == 0) return true;
  // base + c·lane < bound (or >=), base and bound multiples of c·width: the lanes span one run of c·width that
  // lies wholly on one side (a gemm's columns past N = 196 in runs of 4 lanes).
  bool laneLeft = r->coef == 0 && l->coef > 0, laneRight = l->coef == 0 && r->coef > 0;
  if (!laneLeft && !laneRight) return false;
  const LaneForm& x = laneLeft ? *l : *r;
  const LaneForm& bound = laneLeft ? *r : *l;
  BinaryOp op = b.op;
  if (laneRight) op = op == BinaryOp::Gt ? BinaryOp::Lt : op == BinaryOp::Le ? BinaryOp::Ge : BinaryOp::Eq;  // bound > x: x < bound
  int64_t run = x.coef * width;
  return (op == BinaryOp::Lt || op == BinaryOp::Ge) && x.divisor % run == 0 && bound.divisor % run == 0;
}

// The indices with the lane variable at `lane`.
std::vector<Expr> shiftedLanes(const std::vector<Expr>& idx, const std::string& laneVar, int64_t lane) {
  std::vector<Expr> out;
  for (const Expr& e : idx) out.push_back(substitute(e, {{laneVar, intImm(lane)}}));
  return out;
}

std::string sharedAddress(const std::string& pointer) {
  return "\"r\"((unsigned)__cvta_generic_to_shared(" + pointer + "))";
}

}  // namespace

std::string stagesName(const std::string& cache) { return "tsr_stages_" + identifier(cache); }

bool Generator::pipelinedLoop(const ForStmt& f) {
  auto shape = pipelineShape(k_, f);
  if (!shape) return false;
  const LoopHeader& h = f.h;
  const auto& prov = f.provenance;
  std::string v = identifier(h.var), stages = std::to_string(h.pipelineStages);
  line("{  // loop " + v + " software-pipelined: " + stages + " stages, each a copy of its shared tiles filled by cp.async",
       prov);
  ++indent_;
  for (const std::string& c : shape->caches) {
    const Buffer& b = ep_.buffer(c);
    line(sharedArray(storageType(b.dtype, target_), stagesName(c), stages + " * " + std::to_string(numElements(b.shape)),
                     h.pipelineStages * numElements(b.shape), int64_t(dtypeSize(b.dtype)), sharedAlignment(b)) +
             "  // " + stages + " copies of " + identifier(c),
         prov);
  }
  PipelineForm form;
  form.tma = tmaFills(shape->caches);
  // TMA with wgmma and 3 stages or more: one iteration's wgmma stays in flight while the next is issued, so a
  // stage is refilled one iteration later than it could be (S - 2 ahead): its reads may still be running.
  form.wgmmaInFlight = form.tma && h.pipelineStages >= 3 && k_.params.count("wgmma") && k_.params.at("wgmma");
  form.ahead = h.pipelineStages - (form.wgmmaInFlight ? 2 : 1);
  if (form.tma) tmaBarriers(f);
  pipelinePrologue(f, *shape, form);
  pipelineIterations(f, *shape, form);
  if (form.wgmmaInFlight) line("asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");  // the last iteration's", prov);
  --indent_;
  line("}", prov);
  return true;
}

// The fills of iterations 0 .. ahead - 1, before the loop.
void Generator::pipelinePrologue(const ForStmt& f, const PipelineShape& shape, const PipelineForm& form) {
  const auto& prov = f.provenance;
  line("#pragma unroll", prov);
  line("for (int tsr_stage = 0; tsr_stage < " + std::to_string(form.ahead) + "; ++tsr_stage) {  // prologue: iterations 0.." +
           std::to_string(form.ahead - 1),
       prov);
  ++indent_;
  if (form.tma) {
    tmaStage(f, shape.caches, "tsr_stage", "tsr_stage");
  } else {
    fillStage(f, shape.caches, shape.fills, "tsr_stage", "tsr_stage");
    line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");", prov);
  }
  --indent_;
  line("}", prov);
}

// The loop: this iteration's copies, the fills of iteration + ahead, then the body after its fills, the
// markers as the copies' waits. After a TMA wait each thread has seen its tiles land: the IR's barrier after it
// is not needed.
void Generator::pipelineIterations(const ForStmt& f, const PipelineShape& shape, const PipelineForm& form) {
  const LoopHeader& h = f.h;
  const auto& prov = f.provenance;
  const auto& stmts = static_cast<BlockStmt&>(*f.body).stmts;
  std::string v = identifier(h.var), n = std::to_string(h.extent), stages = std::to_string(h.pipelineStages);
  if (h.loopKind == LoopKind::Unrolled) line("#pragma unroll", prov);
  line("for (long long " + v + " = 0; " + v + " < " + n + "; ++" + v + ") {", prov);
  ++indent_;
  for (const std::string& c : shape.caches)
    line(storageType(ep_.buffer(c).dtype, target_) + "* const " + identifier(c) + " = " + stagesName(c) + " + (" + v + " % " +
             stages + ") * " + std::to_string(numElements(ep_.buffer(c).shape)) + ";  // this iteration's copy",
         prov);
  line("const long long tsr_next = " + v + " + " + std::to_string(form.ahead) + ";", prov);
  line("if (tsr_next < " + n + ") {  // the copies of iteration " + v + " + " + std::to_string(form.ahead), prov);
  ++indent_;
  if (form.tma) tmaStage(f, shape.caches, "tsr_next", "tsr_next % " + stages);
  else fillStage(f, shape.caches, shape.fills, "tsr_next", "tsr_next % " + stages);
  --indent_;
  line("}", prov);
  wgmmaPending_ = form.wgmmaInFlight ? 1 : 0;
  bool waited = false;
  for (size_t i = shape.rest; i < stmts.size(); ++i) {
    const Stmt& s = stmts[i];
    bool barrierAfterWait = waited && s->kind == StmtKind::Sync;
    waited = false;
    if (form.tma && barrierAfterWait) continue;
    if (s->kind != StmtKind::PipelineMarker) {
      stmt(s);
      continue;
    }
    const auto& m = static_cast<PipelineMarkerStmt&>(*s);
    waited = m.wait;
    if (form.tma) {
      if (m.wait) tmaWait(f, m.provenance);
    } else if (m.wait) {
      line("asm volatile(\"cp.async.wait_group " + std::to_string(m.pending) + ";\\n\" ::: \"memory\");", m.provenance);
    } else {
      line("asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\");", m.provenance);
    }
  }
  wgmmaPending_ = 0;
  --indent_;
  line("}", prov);
}

// The fills of iteration `iteration` (a variable's name) into copy `stage` of each cache.
void Generator::fillStage(const ForStmt& f, const std::vector<std::string>& caches, const std::vector<Stmt>& fills,
                          const std::string& iteration, const std::string& stage) {
  line("{", f.provenance);
  ++indent_;
  line("const long long " + identifier(f.h.var) + " = " + iteration + ";", f.provenance);
  for (const std::string& c : caches)
    line(storageType(ep_.buffer(c).dtype, target_) + "* const " + identifier(c) + " = " + stagesName(c) + " + (" + stage +
             ") * " + std::to_string(numElements(ep_.buffer(c).shape)) + ";",
         f.provenance);
  asyncFill_ = true;
  for (const Stmt& s : fills) stmt(s);
  asyncFill_ = false;
  --indent_;
  line("}", f.provenance);
}

void Generator::asyncCopy(const AsyncCopyStmt& n) {
  const Buffer& dst = ep_.buffer(n.dst);
  const Buffer& src = ep_.buffer(n.src);
  size_t bytes = dtypeSize(dst.dtype);
  std::string dstAt = identifier(n.dst) + "[" + ep_.linear(n.dst, n.dstIndices) + "]";
  std::string srcAt = identifier(n.src) + "[" + ep_.linear(n.src, n.srcIndices) + "]";
  std::string inside = n.inside ? ep_.print(n.inside) : "";
  if (asyncFill_ && dst.dtype == src.dtype && (bytes == 4 || bytes == 8 || bytes == 16)) {
    std::string size = std::to_string(bytes);
    if (n.inside) {  // outside: 0 source bytes read, the element zero-filled; no address out of range, even unread
      line("asm volatile(\"cp.async.ca.shared.global [%0], [%1], " + size + ", %2;\\n\" :: " + sharedAddress("&" + dstAt) +
               ", \"l\"((" + inside + ") ? &" + srcAt + " : " + identifier(n.src) + "), \"r\"((" + inside + ") ? " + size +
               " : 0) : \"memory\");" + comment(n.provenance),
           n.provenance);
      return;
    }
    line("asm volatile(\"cp.async.ca.shared.global [%0], [%1], " + size + ";\\n\" :: " +
             sharedAddress("&" + dstAt) + ", \"l\"(&" + srcAt + ") : \"memory\");" + comment(n.provenance),
         n.provenance);
    return;
  }
  // A plain load: the copy completes before the barrier that follows it (2-byte elements have no cp.async).
  std::string value = ep_.toStorage(n.dst, ep_.fromStorage(n.src, srcAt));
  if (n.inside) value = "(" + inside + ") ? " + value + " : " + ep_.toStorage(n.dst, "0.0f");
  line(dstAt + " = " + value + ";" + comment(n.provenance), n.provenance);
}

// The lanes of a fill loop as cp.async copies of 4, 8 or 16 bytes, when the loop's body is one copy (under a
// guard the lanes share, zero-filled where an `inside` the lanes share does not hold) whose lanes are
// consecutive elements from a multiple of the lane count on both sides. Out-of-range lanes (the guard false)
// are zero-filled: the copy reads 0 source bytes.
bool Generator::copyGroup(const ForStmt& f) {
  const LoopHeader& h = f.h;
  if (h.loopKind == LoopKind::Bound || h.reduction) return false;
  Stmt s = unwrapBlocks(f.body);
  Expr cond;
  if (s->kind == StmtKind::IfThen) {
    cond = static_cast<IfThenStmt&>(*s).cond;
    s = unwrapBlocks(static_cast<IfThenStmt&>(*s).body);
  }
  if (s->kind != StmtKind::AsyncCopy) return false;
  const auto& n = static_cast<const AsyncCopyStmt&>(*s);
  // A zero-filled copy (a conv halo's padding) takes runs only where its lanes are wholly inside or outside
  // together (a halo box aligned to the runs, over rows of whole runs); else asyncCopy copies each lane.
  if (n.inside && !laneInvariant(n.inside, h.var, h.extent)) return false;
  if (n.inside) cond = cond ? Binary::make(BinaryOp::And, cond, n.inside) : n.inside;
  const Buffer& dst = ep_.buffer(n.dst);
  const Buffer& src = ep_.buffer(n.src);
  int64_t size = int64_t(dtypeSize(dst.dtype)), total = size * h.extent, chunk = std::min<int64_t>(16, total);
  if (dst.dtype != src.dtype || src.scope != MemScope::Global || src.role == BufferRole::Temp) return false;
  if ((chunk != 4 && chunk != 8 && chunk != 16) || total % chunk != 0 || (numElements(dst.shape) * size) % 16 != 0)
    return false;
  if (cond && !laneInvariant(cond, h.var, h.extent)) return false;
  Buffer logical = dst;  // a swizzled tile's lanes are proven consecutive in its row-major view
  logical.swizzleBytes = 0;
  auto dstOff = alignedLaneOffset(logical, n.dstIndices, h.var, h.extent);
  auto srcOff = alignedLaneOffset(src, n.srcIndices, h.var, h.extent);
  if (!dstOff || !srcOff) return false;
  const auto& prov = n.provenance;
  std::string width = std::to_string(chunk), cache = chunk == 16 ? "cg" : "ca";
  line("{  // lanes " + identifier(h.var) + " 0.." + std::to_string(h.extent) + ": " + std::to_string(total / chunk) +
           " cp.async of " + width + " bytes" + comment(prov),
       prov);
  ++indent_;
  std::string inRange = cond ? ep_.print(substitute(cond, {{h.var, intImm(0)}})) : "";
  if (cond) line("const bool tsr_in = " + inRange + ";", prov);
  for (int64_t j = 0; j < total / chunk; ++j) {
    std::string step = j ? " + " + std::to_string(j * chunk / size) : "";
    std::string off = "(" + ep_.print(*dstOff) + ")" + step, from = "(" + ep_.print(*srcOff) + ")" + step;
    // Swizzled: each 16-byte piece lies where the swizzle puts it (the lanes of one piece stay together).
    if (dst.swizzleBytes) off = ep_.linear(n.dst, shiftedLanes(n.dstIndices, h.var, j * chunk / size));
    std::string srcPtr = identifier(n.src) + " + " + from;
    if (cond) srcPtr = "tsr_in ? " + srcPtr + " : " + identifier(n.src);  // no address out of range, even unread
    std::string tail = cond ? ", %2;\\n\" :: " : ";\\n\" :: ";
    line("asm volatile(\"cp.async." + cache + ".shared.global [%0], [%1], " + width + tail + sharedAddress(identifier(n.dst) + " + " + off) +
             ", \"l\"(" + srcPtr + ")" + (cond ? ", \"r\"(tsr_in ? " + width + " : 0)" : "") + " : \"memory\");",
         prov);
  }
  --indent_;
  line("}", prov);
  return true;
}

}  // namespace tessera::codegen::detail
