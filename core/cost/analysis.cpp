#include "cost/analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>

#include "kernel/shared_banks.h"
#include "kernel/launch.h"
#include "kernel/visit.h"

namespace tessera::cost {

using namespace kernel;

namespace {

struct Interval {
  int64_t lo = 0, hi = 0;
};

// The values an index expression takes while the named loop variables range over their intervals; any other
// variable (block indices, scalars) is held at 0. Unknown forms (loads in indices) give `fallback`.
Interval range(const Expr& e, const std::map<std::string, Interval>& vars, Interval fallback) {
  auto sub = [&](const Expr& x) { return range(x, vars, fallback); };
  switch (e->kind) {
    case ExprKind::IntImm: {
      int64_t v = static_cast<const IntImm&>(*e).value;
      return {v, v};
    }
    case ExprKind::Var: {
      auto it = vars.find(static_cast<const Var&>(*e).name);
      return it == vars.end() ? Interval{0, 0} : it->second;
    }
    case ExprKind::Cast: return sub(static_cast<const Cast&>(*e).a);
    case ExprKind::CheckedIndex: return {0, static_cast<const CheckedIndex&>(*e).extent - 1};
    case ExprKind::Select: {
      const auto& s = static_cast<const Select&>(*e);
      Interval a = sub(s.t), b = sub(s.f);
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::Binary: {
      const auto& b = static_cast<const Binary&>(*e);
      Interval x = sub(b.a), y = sub(b.b);
      switch (b.op) {
        case BinaryOp::Add: return {x.lo + y.lo, x.hi + y.hi};
        case BinaryOp::Sub: return {x.lo - y.hi, x.hi - y.lo};
        case BinaryOp::Mul: {
          int64_t c[] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
          return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
        }
        case BinaryOp::Div:
          if (y.lo == y.hi && y.lo > 0) return {x.lo / y.lo, x.hi / y.lo};
          return fallback;
        case BinaryOp::Mod:
          if (y.lo == y.hi && y.lo > 0) {
            if (x.lo >= 0 && x.hi - x.lo < y.lo && x.lo % y.lo <= x.hi % y.lo) return {x.lo % y.lo, x.hi % y.lo};
            return {0, y.lo - 1};
          }
          return fallback;
        case BinaryOp::Min: return {std::min(x.lo, y.lo), std::min(x.hi, y.hi)};
        case BinaryOp::Max: return {std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
        default: return fallback;
      }
    }
    default: return fallback;
  }
}

// The value of an index expression with the given variables set (others 0); affine parts are exact.
int64_t valueAt(const Expr& e, const std::map<std::string, Interval>& at) { return range(e, at, {0, 0}).lo; }

struct Access {
  const Buffer* buffer;
  const std::vector<Expr>* indices;
  bool write;
  std::vector<const LoopHeader*> loops;  // enclosing loops, outermost first
  const std::vector<Expr>* reduceTarget = nullptr;  // a read feeding a reduction: the accumulator's indices
  bool async = false;  // an asynchronous copy's read: in flight while the pipelined loop computes
};

bool isFloatArith(const ExprNode& n) { return (n.kind == ExprKind::Unary || n.kind == ExprKind::Binary) && isFloat(n.dtype); }

class Collector {
 public:
  explicit Collector(const Kernel& k) : k_(k) {}
  std::vector<Access> accesses;
  double flops = 0;
  // FLOPs by the loop stack they run in (for the CPU's vectorization verdict).
  std::vector<std::pair<std::vector<const LoopHeader*>, double>> flopSites;
  // Barriers and warp shuffles, by the loop stack they run in.
  std::vector<std::vector<const LoopHeader*>> syncSites;

  void visit(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::For: {
        auto& f = static_cast<ForStmt&>(*s);
        stack_.push_back(&f.h);
        visit(f.body);
        stack_.pop_back();
        return;
      }
      case StmtKind::Block:
        for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts) visit(c);
        return;
      case StmtKind::IfThen: {
        auto& i = static_cast<IfThenStmt&>(*s);
        loads(i.cond);
        visit(i.body);
        return;
      }
      case StmtKind::Compute: return value(static_cast<ComputeStmt&>(*s).value);
      case StmtKind::Store: {
        auto& st = static_cast<StoreStmt&>(*s);
        value(st.value);
        for (const Expr& e : st.indices) loads(e);
        add(st.buffer, st.indices, true);
        return;
      }
      case StmtKind::Reduce: {
        auto& r = static_cast<ReduceStmt&>(*s);
        reduceTarget_ = &r.indices;
        value(r.value);
        reduceTarget_ = nullptr;
        countFlops(executions());
        add(r.buffer, r.indices, true);
        return;
      }
      case StmtKind::AsyncCopy: {
        auto& c = static_cast<AsyncCopyStmt&>(*s);
        add(c.src, c.srcIndices, false);
        accesses.back().async = true;
        add(c.dst, c.dstIndices, true);
        accesses.back().async = true;
        return;
      }
      case StmtKind::Sync: syncSites.push_back(stack_); return;
      default: return;  // Allocate, PipelineMarker move no data
    }
  }

 private:
  double executions() const {
    double n = 1;
    for (const LoopHeader* h : stack_) n *= double(std::max<int64_t>(1, h->extent));
    return n;
  }
  void countFlops(double n) {
    flops += n;
    flopSites.push_back({stack_, n});
  }
  void value(const Expr& e) {
    walkExpr(e, [&](const ExprNode& n) {
      if (isFloatArith(n)) countFlops(executions());
    });
    loads(e);
  }
  void loads(const Expr& e) {
    walkExpr(e, [&](const ExprNode& n) {
      if (n.kind == ExprKind::Load) add(static_cast<const Load&>(n).buffer, static_cast<const Load&>(n).indices, false);
    });
  }
  void add(const std::string& name, const std::vector<Expr>& indices, bool write) {
    if (const Buffer* b = k_.findBuffer(name)) accesses.push_back({b, &indices, write, stack_, write ? nullptr : reduceTarget_});
  }
  const Kernel& k_;
  const std::vector<Expr>* reduceTarget_ = nullptr;
  std::vector<const LoopHeader*> stack_;
};

bool usedBy(const Access& a, const std::string& var) {
  for (const Expr& e : *a.indices)
    if (usesVar(e, var)) return true;
  return false;
}

// The position (in a.loops) of the innermost loop the access's indices use; -1 for none.
int innermostUsedLoop(const Access& a) {
  int innermost = -1;
  for (int i = 0; i < int(a.loops.size()); ++i)
    if (usedBy(a, a.loops[i]->var)) innermost = i;
  return innermost;
}

// How many times the access runs: every enclosing bound or parallel loop (each block and thread executes it),
// and the serial loops down to the innermost one its indices use; loops inside that are loop-invariant for the
// access, so the compiler keeps the value in a register. Unrolled and vectorized loops the indices do not use
// never multiply: their copies load the same element, which the compiler loads once.
double executionsOf(const Access& a) {
  int innermostUsed = innermostUsedLoop(a);
  double n = 1;
  for (int i = 0; i < int(a.loops.size()); ++i) {
    const LoopHeader& h = *a.loops[i];
    // The mma lanes are not threads: a 16 x 8 tile is spread over one warp's 32 lanes, and an operand the tile's
    // other dimension does not index is loaded once for it (a fragment), not once per row or column.
    if (h.loopKind == LoopKind::Bound && isMmaTag(h.tag) && !usedBy(a, h.var) && !a.write) continue;
    bool parallelHw = h.loopKind == LoopKind::Bound || h.loopKind == LoopKind::Parallel;
    bool copies = h.loopKind == LoopKind::Unrolled || h.loopKind == LoopKind::Vectorized;
    bool used = usedBy(a, h.var);
    if (used || parallelHw || a.write || (i < innermostUsed && !copies)) n *= double(std::max<int64_t>(1, h.extent));
  }
  return n;
}

// Flat element offset of the access (row-major).
int64_t flatAt(const Access& a, const std::map<std::string, Interval>& at) {
  std::vector<int64_t> strides = stridesOf(a.buffer->shape);
  int64_t off = 0;
  for (size_t d = 0; d < a.indices->size() && d < strides.size(); ++d) off += valueAt((*a.indices)[d], at) * strides[d];
  return off;
}

// The loop whose variable tells the lanes apart: threadIdx.x on the GPU, the innermost loop the access uses on
// the CPU. Returns the access's stride in elements along it (0: the same element for every lane).
int64_t laneStride(const Access& a, bool gpu) {
  std::string lane;
  for (const LoopHeader* h : a.loops) {
    if (gpu && h->loopKind == LoopKind::Bound && h->tag == ThreadTag::ThreadX) lane = h->var;
    if (!gpu && usedBy(a, h->var) && h->loopKind != LoopKind::Bound) lane = h->var;
  }
  if (lane.empty()) return 0;
  return std::llabs(flatAt(a, {{lane, {1, 1}}}) - flatAt(a, {}));
}

// The lanes of a vectorized loop around the access that reach consecutive elements of it (one wide access of
// that many elements per thread on the GPU, docs/codegen.md); 1 when there is none. An asynchronous copy's
// unrolled lanes are one wide cp.async (16 bytes) the same way.
int64_t wideLanes(const Access& a) {
  for (const LoopHeader* h : a.loops)
    if ((h->loopKind == LoopKind::Vectorized || (a.async && h->loopKind == LoopKind::Unrolled)) && h->extent > 1 &&
        usedBy(a, h->var) &&
        flatAt(a, {{h->var, {1, 1}}}) - flatAt(a, {}) == 1)
      return h->extent;
  return 1;
}

// Bytes the memory system moves per executed global access. GPU: the 32 lanes of a warp touch
// ceil(32 * stride * size / 32) sectors of 32 bytes (at least those of each lane's run when its accesses are
// one wide access of `wide` elements), shared by the 32 lanes and the `wide` copies. CPU: each access costs
// min(64, stride * size) bytes of cache line along the innermost loop.
double globalBytesPerAccess(const Access& a, bool gpu) {
  double size = double(dtypeSize(a.buffer->dtype));
  int64_t stride = laneStride(a, gpu);
  if (!gpu) return std::min(64.0, size * double(std::max<int64_t>(stride, 1)));
  double wide = double(wideLanes(a));
  double runSectors = std::ceil(wide * size / 32.0);
  return std::clamp(std::ceil(32.0 * double(stride) * size / 32.0), runSectors, 32.0 * runSectors) / wide;
}

// A read of an operand of an mma tile (inside the loops bound to the mma lanes): a warp's fragment.
bool isMmaOperand(const Access& a) {
  if (a.write || a.buffer->scope != MemScope::Shared || a.buffer->shape.empty()) return false;
  return std::any_of(a.loops.begin(), a.loops.end(), [](const LoopHeader* h) { return h->loopKind == LoopKind::Bound && isMmaTag(h->tag); });
}

// A fragment is read as 8 x 8 matrices of 16-byte rows (ldmatrix; the scalar pairs follow the same rows): the
// warp takes as many passes as the most of those 8 rows that fall in one bank. Rows `rowBytes` apart: 64 bytes
// (a 32-deep bf16 tile) put rows 0, 2, 4, 6 in the same banks (4 passes); 256 bytes (128 columns) all 8 (8);
// 80 or 272 bytes (padded by 8) none (1).
int64_t fragmentRowPasses(int64_t rowBytes) {
  std::vector<int64_t> addresses;
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t word = 0; word < 4; ++word) addresses.push_back(row * rowBytes + 4 * word);
  return sharedWavefronts(addresses);
}

// A tf32 fragment (4-byte elements: one a register, no ldmatrix) as its lanes read it (tf32FragmentPlace). Its
// loads' wavefronts (kernel/shared_banks.h),
// averaged over the registers, from the lanes' addresses with every other loop at 0 (the first tap and tile):
// the conv's halo, whose channels are a plane apart, is priced as the conv template pads it. 0 where the access
// does not use one loop bound to the mma lanes and one unrolled 8-deep loop inside it (no such fragment).
double tf32FragmentPasses(const Access& a) {
  const LoopHeader *outer = nullptr, *depth = nullptr;
  for (const LoopHeader* h : a.loops) {
    if (!usedBy(a, h->var)) continue;
    if (h->loopKind == LoopKind::Bound && isMmaTag(h->tag)) outer = h;
    else if (outer && h->loopKind == LoopKind::Unrolled && h->extent == 8) depth = h;
  }
  if (!outer || !depth) return 0;
  return tf32FragmentWavefronts(outer->tag == ThreadTag::MmaRow, [&](const FragmentPlace& at) {
    return 4 * flatAt(a, {{outer->var, {at.outer, at.outer}}, {depth->var, {at.depth, at.depth}}});
  });
}

// A shared read inside an unrolled loop over 2 or 4 consecutive elements (8 or 16 bytes): the CUDA compiler
// merges the copies into one wide load (the f32 gemm's column runs: 64 LDS.128 a k step in the SASS, none
// scalar; bench/results/2026-12-06-gpu-fgemm). Global loads stay scalar (their alignment is not known).
int64_t mergedSharedLanes(const Access& a) {
  if (a.write || a.buffer->scope != MemScope::Shared) return 1;
  const int64_t size = int64_t(dtypeSize(a.buffer->dtype));
  for (const LoopHeader* h : a.loops)
    if (h->loopKind == LoopKind::Unrolled && (h->extent * size == 8 || h->extent * size == 16) && usedBy(a, h->var) &&
        flatAt(a, {{h->var, {1, 1}}}) - flatAt(a, {}) == 1)
      return h->extent;
  return 1;
}

// Shared memory serves a warp in one pass unless lanes hit the same bank (32 banks of 4 bytes) at different
// addresses: a stride of s words costs gcd(s, 32) passes; the same word for all lanes is a broadcast.
double sharedBytesPerAccess(const Access& a) {
  double size = double(dtypeSize(a.buffer->dtype));
  if (isMmaOperand(a)) {
    const double tf32 = size == 4 ? tf32FragmentPasses(a) : 0;
    return size * (tf32 > 0 ? tf32 : double(fragmentRowPasses(a.buffer->shape.back() * int64_t(size))));
  }
  int64_t stride = laneStride(a, true), wide = std::max(wideLanes(a), mergedSharedLanes(a));
  if (wide > 1 && stride == wide) return size;  // one wide access a thread, the runs adjacent: no conflicts
  // The lanes' addresses `stride` elements apart: 2-byte elements two to a bank word.
  int64_t words = stride == 0 ? 0 : std::max<int64_t>(1, stride * int64_t(size) / 4);
  int64_t passes = words == 0 ? 1 : std::gcd(words, int64_t(32));
  return size * double(passes);
}

// The loop a CPU compiler vectorizes for code at this depth: the innermost enclosing loop with more than one
// iteration that is not unrolled (unrolled loops are expanded first, so the loop around them is the one
// vectorized). Null when there is none.
const LoopHeader* vectorLoop(const std::vector<const LoopHeader*>& loops) {
  for (size_t i = loops.size(); i-- > 0;) {
    const LoopHeader* h = loops[i];
    if (h->extent > 1 && h->loopKind != LoopKind::Unrolled) return h;
  }
  return nullptr;
}

// Per candidate vector loop, whether every access inside it allows vectorizing: loads contiguous or invariant
// along it, stores contiguous (an invariant store is a reduction, which C++ compilers keep scalar for floats
// without -ffast-math).
std::map<const LoopHeader*, bool> vectorVerdicts(const std::vector<Access>& accesses) {
  std::map<const LoopHeader*, bool> ok;
  for (const Access& a : accesses) {
    const LoopHeader* l = vectorLoop(a.loops);
    if (!l) continue;
    int64_t stride = std::llabs(flatAt(a, {{l->var, {1, 1}}}) - flatAt(a, {}));
    bool fine = a.write ? stride == 1 : stride <= 1;
    auto [it, fresh] = ok.emplace(l, fine);
    if (!fresh) it->second = it->second && fine;
  }
  return ok;
}

// Elements of the buffer one block (one parallel iteration on the CPU) touches at this access: the index ranges
// over the loops that run inside the block, block indices held fixed; at most one element per iteration of
// those loops the indices use (a grid-stride loop's range spans the buffer, its elements do not).
double footprintPerBlock(const Access& a, bool gpu) {
  std::map<std::string, Interval> inner;
  double points = 1;
  for (const LoopHeader* h : a.loops) {
    bool blockLevel = gpu ? (h->loopKind == LoopKind::Bound && isBlockTag(h->tag))
                          : (h->loopKind == LoopKind::Bound && isBlockTag(h->tag)) || h->loopKind == LoopKind::Parallel;
    if (blockLevel) continue;
    inner[h->var] = {0, std::max<int64_t>(1, h->extent) - 1};
    if (usedBy(a, h->var)) points *= double(std::max<int64_t>(1, h->extent));
  }
  double elems = 1;
  for (size_t d = 0; d < a.indices->size() && d < a.buffer->shape.size(); ++d) {
    int64_t dim = std::max<int64_t>(1, a.buffer->shape[d]);
    Interval r = range((*a.indices)[d], inner, {0, dim - 1});
    elems *= double(std::clamp<int64_t>(r.hi - r.lo + 1, 1, dim));
  }
  return std::min(elems, points);
}

// The CPU generator parallelizes `parallel` loops and the outermost block-bound loop with extent > 1.
int64_t cpuParallelIterations(const Kernel& k) {
  int64_t found = 0;
  walk(k.body, [&](StmtNode& s) {
    if (found || s.kind != StmtKind::For) return;
    const LoopHeader& h = static_cast<ForStmt&>(s).h;
    if (h.extent > 1 && (h.loopKind == LoopKind::Parallel || (h.loopKind == LoopKind::Bound && isBlockTag(h.tag))))
      found = h.extent;
  });
  return found;
}

void launchShape(const Kernel& k, KernelFigures& f) {
  if (int64_t n = cpuParallelIterations(k)) f.cpuParallelIterations = n;
  kernel::LaunchShape shape = kernel::launchShape(k);
  f.blocks = shape.blocks();
  f.launches = kernel::launchCount(k);
  f.threadsPerBlock = shape.threads();
}

// Registers: a base for indices and pointers, each thread's share of the register buffers (a buffer declared
// for the block is spread over its threads; one register per 4 bytes), and the loads an unrolled nest keeps live
// at once (capped: the compiler spills or reuses beyond that).
int estimateRegisters(const Kernel& k, const std::vector<Access>& accesses, int64_t threadsPerBlock) {
  double words = 0;
  for (const Buffer& b : k.buffers)
    if (b.scope == MemScope::Register)
      words += std::max(1.0, double(numElements(b.shape)) / double(std::max<int64_t>(1, threadsPerBlock))) *
               std::max<double>(1, double(dtypeSize(b.dtype)) / 4);
  double unrolled = 1;
  for (const Access& a : accesses) {
    if (a.write) continue;
    double u = 1;
    for (const LoopHeader* h : a.loops)
      if (h->loopKind == LoopKind::Unrolled || h->loopKind == LoopKind::Vectorized) u *= double(h->extent);
    unrolled = std::max(unrolled, u);
  }
  return int(std::min(255.0, 24 + words + std::min(64.0, unrolled)));
}

// Whether one thread runs the access's iterations of this loop one after another. Serial loops: yes. Unrolled
// loops: only where the access feeds a reduction whose accumulator does not move with the loop (a loop-carried
// chain: measured on the H200, a gemm's unrolled k loop without shared tiles takes as long per step as a rolled
// one); the copies of a register micro-tile (accumulator indexed by the loop) are independent loads issued
// together. Vectorized copies are one wide load.
bool inSequence(const LoopHeader& h, const Access& a) {
  if (h.loopKind == LoopKind::Serial) return true;
  if (h.loopKind != LoopKind::Unrolled || !a.reduceTarget) return false;
  for (const Expr& e : *a.reduceTarget)
    if (usesVar(e, h.var)) return false;
  return true;
}

// Iterations of one thread's in-sequence loops the access runs in: those it uses or that enclose a loop it
// uses (a loop-invariant inner loop keeps the value in a register). Bound and parallel loops are other threads.
double serialExecutionsOf(const Access& a) {
  int innermostUsed = innermostUsedLoop(a);
  double n = 1;
  for (int i = 0; i < int(a.loops.size()); ++i) {
    const LoopHeader& h = *a.loops[i];
    if (inSequence(h, a) && i <= innermostUsed) n *= double(std::max<int64_t>(1, h.extent));
  }
  return n;
}

const LoopHeader* innermostSerial(const std::vector<const LoopHeader*>& loops) {
  for (size_t i = loops.size(); i-- > 0;)
    if (loops[i]->loopKind == LoopKind::Serial || loops[i]->loopKind == LoopKind::Unrolled) return loops[i];
  return nullptr;
}

// One thread's chain of dependent iterations: loads in the same loop iteration issue together, so each serial
// loop counts once, at the slowest level it reads (global over shared), times the iterations it runs.
void serialChain(const std::vector<Access>& accesses, const std::vector<std::vector<const LoopHeader*>>& syncs,
                 KernelFigures& f) {
  std::map<const LoopHeader*, std::pair<double, bool>> perLoop;  // iterations, reads global memory
  for (const Access& a : accesses) {
    if (a.write || a.async || a.buffer->scope == MemScope::Register) continue;
    auto& [iterations, global] = perLoop[innermostSerial(a.loops)];
    iterations = std::max(iterations, serialExecutionsOf(a));
    global = global || a.buffer->scope == MemScope::Global;
  }
  for (const auto& [loop, entry] : perLoop) (entry.second ? f.serialGlobalLoads : f.serialSharedLoads) += entry.first;
  for (const auto& loops : syncs) {
    double n = 1;
    for (const LoopHeader* h : loops)
      if (h->loopKind == LoopKind::Serial) n *= double(std::max<int64_t>(1, h->extent));
    f.syncSteps += n;
  }
}

// The attention template's tensor-core form (codegen/flash_attention.cpp) is not the per-thread loops its IR
// states: each block copies its query rows once and every key and value tile once into shared memory (cp.async,
// one barrier a tile), its warps read the tiles there with ldmatrix, and both products run as mma tiles. So its
// figures are that form's: read from the IR, the bench attention (B32 H16 S2048 D64 bf16) was priced at 983 ms
// against the 2.21 it took on the H200 (bench/results/2026-12-04-flash).
void tensorCoreAttention(const Kernel& k, KernelFigures& f) {
  int64_t keys = 0, head = 0, values = 0;
  walk(k.body, [&](StmtNode& s) {
    if (s.kind != StmtKind::For) return;
    const LoopHeader& h = static_cast<ForStmt&>(s).h;
    if (h.var == "j" && h.reduction) keys = h.extent;
    if (h.var == "c" && h.reduction) head = h.extent;
    if (h.var == "d") values = h.extent;
  });
  const auto param = [&](const char* name, int64_t fallback) {
    auto it = k.params.find(name);
    return double(it == k.params.end() ? fallback : it->second);
  };
  if (!keys || !head || !values) return;
  const double elem = 2, rows = param("rows_per_block", 64), tiles = std::ceil(double(keys) / param("key_tile", 64));
  const double warps = double(f.blocks) * double(f.threadsPerBlock) / 32.0, kv = double(keys) * double(head + values);
  double outputs = 0;
  for (const Buffer& b : k.buffers)
    if (b.scope == MemScope::Global && b.role == BufferRole::Output) outputs += double(numElements(b.shape)) * double(dtypeSize(b.dtype));
  f.tensorFlops = f.irFlops;
  // 249 TFLOP/s of the two products on the bench case against the H200's 790 for a gemm's tiles.
  f.matrixShare = 249.0 / 790.0;
  f.l1Bytes = double(f.blocks) * (rows * double(head) + kv) * elem + outputs;
  f.l2Bytes = f.l1Bytes;
  f.sharedBytes = (warps * kv + double(f.blocks) * rows * double(head)) * elem;
  f.serialGlobalLoads = 0;
  f.serialSharedLoads = 2 * tiles;  // a tile's K, then its V, through ldmatrix
  f.syncSteps = tiles;
}

}  // namespace

KernelFigures analyzeKernel(const Kernel& k, bool gpu) {
  KernelFigures f;
  launchShape(k, f);
  Collector c(k);
  if (k.body) c.visit(k.body);
  f.irFlops = c.flops;
  std::map<const LoopHeader*, bool> verdicts = vectorVerdicts(c.accesses);
  for (const auto& [loops, n] : c.flopSites) {
    const LoopHeader* l = vectorLoop(loops);
    if (l && l->extent >= 4 && verdicts.count(l) && verdicts.at(l)) f.vectorFlops += n;
    if (std::any_of(loops.begin(), loops.end(), [](const LoopHeader* h) { return h->loopKind == LoopKind::Bound && isMmaTag(h->tag); }))
      f.tensorFlops += n;
  }
  f.tf32 = k.params.count("tf32") && k.params.at("tf32") != 0;
  f.sharedBytesPerBlock = sharedBytesPerBlock(k);  // a pipelined loop's caches count once per stage
  for (const Buffer& b : k.buffers) {
    double bytes = double(numElements(b.shape)) * double(dtypeSize(b.dtype));
    if (b.scope != MemScope::Global) continue;
    if (b.role == BufferRole::Input) f.inputBytes += bytes;
    if (b.role != BufferRole::Temp) f.compulsoryBytes += bytes;
  }
  f.registersPerThread = estimateRegisters(k, c.accesses, gpu ? f.threadsPerBlock : 1);
  // Per-block footprint of each global buffer read: the largest over its read sites (a block's later reads of
  // the same elements hit its L1 / cache).
  std::map<std::string, double> footprint;
  double blockCount = gpu ? double(f.blocks) : double(f.cpuParallelIterations);
  for (const Access& a : c.accesses) {
    double n = executionsOf(a);
    double size = double(dtypeSize(a.buffer->dtype));
    if (a.buffer->scope == MemScope::Shared) f.sharedBytes += n * (gpu ? sharedBytesPerAccess(a) : size);
    if (a.buffer->scope != MemScope::Global) continue;
    f.l1Bytes += n * globalBytesPerAccess(a, gpu);
    if (a.write) continue;
    double& fp = footprint[a.buffer->name];
    fp = std::max(fp, footprintPerBlock(a, gpu) * size);
  }
  for (const auto& [name, bytes] : footprint) f.l2Bytes += bytes * blockCount;
  serialChain(c.accesses, c.syncSites, f);
  for (const Buffer& b : k.buffers)
    if (b.scope == MemScope::Global && b.role == BufferRole::Output) f.l2Bytes += double(numElements(b.shape)) * double(dtypeSize(b.dtype));
  if (gpu && k.kind == "attention" && k.params.count("tensor_cores") && k.params.at("tensor_cores")) tensorCoreAttention(k, f);
  return f;
}

}  // namespace tessera::cost
