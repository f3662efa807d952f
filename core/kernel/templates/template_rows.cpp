#include "kernel/templates/template_util.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "kernel/schedule/schedule.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::templ {
namespace {

// The loops over the last axis inside the row body (k0, k1, ..., j), and the buffer the first one reads.
std::vector<std::string> rowLoops(Kernel& k, std::string* rowBuffer) {
  std::vector<std::string> out;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::For) return;
    const std::string& v = static_cast<ForStmt&>(n).h.var;
    if ((v.size() > 1 && v[0] == 'k' && std::isdigit(static_cast<unsigned char>(v[1]))) || v == "j") out.push_back(v);
    if (out.size() == 1 && rowBuffer && rowBuffer->empty())
      walk(static_cast<ForStmt&>(n).body, [&](StmtNode& m) {
        mapDirectExprs(m, [&](const Expr& e) {
          walkExpr(e, [&](const ExprNode& x) {
            if (x.kind == ExprKind::Load && rowBuffer->empty() && k.findBuffer(static_cast<const Load&>(x).buffer)->role == BufferRole::Input)
              *rowBuffer = static_cast<const Load&>(x).buffer;
          });
          return e;
        });
      });
  });
  return out;
}

int64_t rowExtent(Kernel& k) {
  auto loops = rowLoops(k, nullptr);
  return loops.empty() ? 1 : extentOf(k, loops[0]);
}

// One pass over the row: runs of `width` consecutive elements (a vectorized loop, which the CUDA generator
// reads as one float4 / float2 per operand where it can prove the run aligned), the runs spread over the
// threads, so a warp's threads read consecutive runs (coalesced). Returns the serial loop over a thread's runs
// ("" when every thread has one run).
std::string bindRowPass(TracedSchedule& s, const std::string& loop, int64_t threads, int64_t width) {
  if (width > 1 && extentOf(s.kernel(), loop) % width != 0)
    rejectParams(s.kernel(), "row-reduction", "vector_width",
                 "vector_width " + std::to_string(width) + " does not divide loop '" + loop + "' (extent " +
                     std::to_string(extentOf(s.kernel(), loop)) + ")");
  auto [runs, lanes] = splitBy(s, loop, width);
  if (!lanes.empty()) s.vectorize(lanes);
  if (extentOf(s.kernel(), runs) <= threads) {
    s.bind(runs, ThreadTag::ThreadX);
    return "";
  }
  auto [outer, inner] = splitBy(s, runs, threads);
  s.bind(inner, ThreadTag::ThreadX);
  return outer;
}

// The max pass of a softmax (its single statement a max=), which online_softmax merges with the sum after it.
std::string maxPass(Kernel& k, const std::vector<std::string>& loops) {
  for (const std::string& l : loops) {
    Stmt body = unwrapBlocks(detail::findLoop(k, l)->loop->body);
    if (body->kind == StmtKind::Reduce && static_cast<ReduceStmt&>(*body).op == ReduceOp::Max) return l;
  }
  return "";
}

void applyOnline(TracedSchedule& s) {
  std::string max = maxPass(s.kernel(), rowLoops(s.kernel(), nullptr));
  if (max.empty()) rejectParams(s.kernel(), "row-reduction", "online", "the kernel has no max pass to merge (not a softmax)");
  try {
    s.onlineSoftmax(max);
  } catch (const ScheduleError& e) {
    rejectParams(s.kernel(), "row-reduction", "online", e.what());
  }
}

// The elements of the row a thread keeps in registers (cache_row = 2) beyond which the template refuses: a
// thread of a 1024-thread block has 64 registers in all.
constexpr int64_t kRowRegisters = 32;

// blocks_per_row > 1: the row split over blocks (split_reduction), one phase per pass; each phase's rows and
// parts fused onto blockIdx.x, its pass over its part of the row spread over the block's threads.
void splitRows(TracedSchedule& s, const std::string& row, const TemplateParams& p) {
  int64_t blocks = p.at("blocks_per_row");
  if (p.at("cache_row"))
    rejectParams(s.kernel(), "row-reduction", "blocks_per_row",
                 "a row split over blocks reads each part once a phase: cache_row must be 0");
  try {
    s.splitReduction(row, blocks);
  } catch (const ScheduleError& e) {
    rejectParams(s.kernel(), "row-reduction", "blocks_per_row", e.what());
  }
  for (const auto& nest : topNests(s.kernel()))
    if (nest.size() == 2) s.bind(s.fuse(nest[0], nest[1]), ThreadTag::BlockX);
  for (const std::string& l : rowLoops(s.kernel(), nullptr)) bindRowPass(s, l, p.at("threads"), p.at("vector_width"));
}

void rowReduction(TracedSchedule& s, const TemplateParams& p) {
  int64_t threads = p.at("threads"), width = p.at("vector_width"), cache = p.at("cache_row");
  if (p.at("online")) applyOnline(s);
  std::string row = fuseAll(s, outerChain(s.kernel()));
  if (p.at("blocks_per_row") > 1) return splitRows(s, row, p);
  std::string buffer;
  std::vector<std::string> loops = rowLoops(s.kernel(), &buffer);
  if (!row.empty()) s.bind(row, ThreadTag::BlockX);
  if (cache == 2 && (row.empty() || buffer.empty()))
    rejectParams(s.kernel(), "row-reduction", "cache_row", "cache_row 2 needs a row loop and an input read along the row");
  int64_t perThread = (rowExtent(s.kernel()) + threads - 1) / threads;
  if (cache == 2 && perThread > kRowRegisters)
    rejectParams(s.kernel(), "row-reduction", "cache_row",
                 "cache_row 2 keeps " + std::to_string(perThread) + " elements a thread in registers (limit " +
                     std::to_string(kRowRegisters) + "): use more threads or the shared cache");
  if (cache == 1 && !row.empty() && !buffer.empty()) {
    auto fill = s.cacheRead(row, buffer, MemScope::Shared);  // the cache's name, then its fill loops
    if (fill.size() > 1) bindRowPass(s, fill.back(), threads, width);  // a scalar's cache has no fill loop
  }
  for (const std::string& l : loops) {
    std::string runs = bindRowPass(s, l, threads, width);
    // Registers stay registers only when every index is a constant: the runs are unrolled.
    if (cache == 2 && !runs.empty()) s.unroll(runs);
  }
  if (cache != 2) return;
  try {
    s.keepInRegisters(row, buffer);
  } catch (const ScheduleError& e) {
    rejectParams(s.kernel(), "row-reduction", "cache_row", e.what());
  }
}

// The indices of the first pass's reads of the row buffer, as affine forms in the pass's loop (nullopt for
// one that is not: several reduced axes that a flat index maps onto by division).
std::vector<std::vector<std::optional<detail::Affine>>> rowReads(Kernel& k) {
  std::string buffer;
  auto loops = rowLoops(k, &buffer);
  std::vector<std::vector<std::optional<detail::Affine>>> out;
  if (loops.empty() || buffer.empty()) return out;
  walk(detail::findLoop(k, loops[0])->loop->body, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind != ExprKind::Load || static_cast<const Load&>(x).buffer != buffer) return;
        out.emplace_back();
        for (const Expr& i : static_cast<const Load&>(x).indices) out.back().push_back(detail::affine(i, {loops[0]}));
      });
      return e;
    });
  });
  return out;
}

// A row can be staged in shared memory when the first pass reads it at indices affine in the pass's loop.
bool rowCacheable(Kernel& k) {
  auto reads = rowReads(k);
  bool affine = !reads.empty();
  for (const auto& r : reads)
    for (const auto& i : r) affine = affine && i.has_value();
  return affine;
}

// The row is read in memory order: only the last index of each read moves with the pass, one element a step
// (a reduction over trailing axes). Only then do vector lanes touch consecutive elements.
bool rowContiguous(Kernel& k) {
  auto reads = rowReads(k);
  if (reads.empty()) return false;
  bool contiguous = true;
  std::string loop = rowLoops(k, nullptr)[0];
  for (const auto& r : reads)
    for (size_t d = 0; d < r.size(); ++d) {
      int64_t step = r[d] && r[d]->coef.count(loop) ? r[d]->coef.at(loop) : 0;
      contiguous = contiguous && r[d] && step == (d + 1 == r.size() ? 1 : 0);
    }
  return contiguous;
}

// Every buffer the kernel reads or writes in global memory holds f16 or bf16.
bool sixteenBitBuffers(const Kernel& k) {
  return std::all_of(k.buffers.begin(), k.buffers.end(), [](const Buffer& b) {
    return b.role == BufferRole::Temp || b.dtype == DType::F16 || b.dtype == DType::BF16;
  });
}

// The widest run (8 for 16-bit rows, else 4; then 2, 1: 16 bytes a step at most) that divides the row and still
// gives every one of `threads` threads a run. Attention's softmax over 2048 bf16 columns read 8 bytes a step
// with 4.
int64_t defaultWidth(Kernel& k, int64_t rowLength, int64_t threads) {
  if (!rowContiguous(k)) return 1;
  for (int64_t w : {8, 4, 2}) {
    if (w == 8 && !sixteenBitBuffers(k)) continue;
    if (rowLength % w == 0 && threads * w <= rowLength) return w;
  }
  return 1;
}

// Rows too few to give each of the H200's 132 SMs a block, each long enough to split: the fewest blocks per row
// (a power of two up to 32) that do, while every part keeps 8192 elements (a launch per pass costs a few
// microseconds, which short parts do not repay).
int64_t defaultBlocksPerRow(Kernel& k, int64_t rowLength) {
  int64_t rows = 1;
  for (const std::string& l : outerChain(k)) rows *= extentOf(k, l);
  int64_t blocks = 1;
  while (blocks < 32 && rows * blocks < kDefaultSms && rowLength % (blocks * 2) == 0 && rowLength / (blocks * 2) >= 8192)
    blocks *= 2;
  return blocks;
}

TemplateParams rowReductionDefaults(Kernel& k) {
  int64_t K = rowExtent(k);
  int64_t bytes = K * 4;
  int phases = int(rowLoops(k, nullptr).size());
  // 512 threads for long rows: softmax over 8192 columns (float4) took 0.150 ms with 256, 0.133 with 512 and
  // 0.146 with 1024 on the H200; layernorm's tuner picked 512 there too.
  int64_t threads = K <= 1024 ? 32 : K > 4096 ? 512 : 256;
  int64_t blocks = defaultBlocksPerRow(k, K);
  // online and cache_row = 2 are offered to the tuner but not yet defaults: the defaults are the forms measured
  // on the H200 (docs/performance.md). On the cpu backend online softmax took 9.6 ms against 11.9 for three
  // passes (1024 x 4096 f32, 2 threads).
  TemplateParams p = {{"threads", threads},
                      {"cache_row", blocks == 1 && phases >= 2 && bytes <= 16 * 1024 && rowCacheable(k) ? 1 : 0},
                      {"vector_width", defaultWidth(k, K / blocks, threads)},
                      {"online", 0},
                      {"blocks_per_row", blocks}};
  return p;
}

// The CPU's row form: the rows over the cores (one parallel loop), each pass over a row in steps of `lanes`
// consecutive elements (the C++ vector path's width): a reduction pass folds into one partial per lane
// (rfactor), combined after the pass, so its lanes are a vector loop, exp included (the prelude's tsr_vexp);
// the output pass is a vector loop as it stands. The GPU's form ran here with a scalar accumulator and scalar
// expf (softmax over 256 x 1024 f32: 2.0x onnxruntime's time on one core).
void rowReductionCpu(TracedSchedule& s, const TemplateParams& p) {
  if (p.at("online")) applyOnline(s);
  std::string row = fuseAll(s, outerChain(s.kernel()));
  if (!row.empty()) s.parallel(row);
  int64_t lanes = p.at("lanes");
  if (lanes <= 1) return;
  for (const std::string& l : rowLoops(s.kernel(), nullptr)) {
    if (extentOf(s.kernel(), l) % lanes != 0)
      rejectParams(s.kernel(), "row-reduction-cpu", "lanes",
                   std::to_string(lanes) + " lanes do not divide loop '" + l + "' (extent " + std::to_string(extentOf(s.kernel(), l)) + ")");
    auto [runs, lane] = splitBy(s, l, lanes);
    if (lane.empty()) continue;
    bool reduction = detail::findLoop(s.kernel(), lane)->loop->h.reduction;
    if (reduction) {
      try {
        std::vector<std::string> made = s.rfactor(lane);
        s.vectorize(made[0]);  // the lanes' identities
      } catch (const ScheduleError&) {
        s.unroll(lane);  // a fold rfactor refuses (online softmax's pair): the lanes stay one accumulator's
        continue;
      }
    }
    s.vectorize(lane);
  }
}

// The most lanes (16, 8, 4) dividing every pass over the row; 1 (scalar passes) when none does.
TemplateParams rowReductionCpuDefaults(Kernel& k) {
  int64_t lanes = 1;
  for (int64_t w : {16, 8, 4}) {
    bool divides = true;
    for (const std::string& l : rowLoops(k, nullptr)) divides = divides && extentOf(k, l) % w == 0;
    if (divides) {
      lanes = w;
      break;
    }
  }
  return {{"lanes", lanes}, {"online", 0}};
}

}  // namespace

const TemplateDef& rowReductionCpuTemplate() {
  static const TemplateDef def = {
      rowReductionCpu,
      {{"lanes", {1, 4, 8, 16}, "consecutive elements of the row a step of each pass takes (a vector; reductions fold one partial per lane); 1: scalar passes"},
       {"online", {0, 1}, "softmax: the max and the sum of exp(x - max) in one pass over a (max, sum) pair (online softmax; its pass stays scalar)"}},
      rowReductionCpuDefaults};
  return def;
}

const TemplateDef& rowReductionTemplate() {
  static const TemplateDef def = {
      rowReduction,
      {{"threads", {32, 64, 128, 256, 512, 1024}, "threads per row: 32 is one warp per row, more is one block per row"},
       {"cache_row", {0, 1, 2}, "keep the row across the passes over it: 0 re-read it, 1 in shared memory, 2 in each thread's registers"},
       {"vector_width", {1, 2, 4, 8}, "consecutive elements a thread reads per step of each pass (vector loads; must divide the row)"},
       {"online", {0, 1}, "softmax: the max and the sum of exp(x - max) in one pass over a (max, sum) pair (online softmax)"},
       {"blocks_per_row", {1, 2, 4, 8, 16, 32}, "blocks sharing one row: above 1, each pass a launch whose blocks reduce parts of the row, combined in the next (split reduction)"}},
      rowReductionDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
