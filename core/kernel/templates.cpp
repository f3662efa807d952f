#include "kernel/templates.h"

#include <algorithm>
#include <set>

#include "kernel/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel {
namespace {

// The data-parallel loops of the perfect nest starting at `s`, outermost first.
std::vector<std::string> chainFrom(Stmt s) {
  std::vector<std::string> out;
  for (;;) {
    while (s->kind == StmtKind::Block && static_cast<BlockStmt&>(*s).stmts.size() == 1) s = static_cast<BlockStmt&>(*s).stmts[0];
    if (s->kind != StmtKind::For || static_cast<ForStmt&>(*s).h.reduction) return out;
    out.push_back(static_cast<ForStmt&>(*s).h.var);
    s = static_cast<ForStmt&>(*s).body;
  }
}

std::vector<std::string> outerChain(const Kernel& k) { return chainFrom(k.body); }

// The top-level loop nests of the kernel (several for Split), each as its chain of data-parallel loops.
std::vector<std::vector<std::string>> topNests(const Kernel& k) {
  std::vector<std::vector<std::string>> out;
  if (k.body->kind != StmtKind::Block) return {outerChain(k)};
  for (const Stmt& s : static_cast<BlockStmt&>(*k.body).stmts) out.push_back(chainFrom(s));
  return out;
}

int64_t extentOf(Kernel& k, const std::string& loop) {
  auto site = detail::findLoop(k, loop);
  return site ? site->loop->h.extent : 1;
}

int64_t chainExtent(Kernel& k, const std::vector<std::string>& loops) {
  int64_t n = 1;
  for (const std::string& l : loops) n *= extentOf(k, l);
  return n;
}

// The largest candidate not above `limit` that divides `extent` (or the smallest candidate).
int64_t pickDividing(const std::vector<int64_t>& candidates, int64_t extent, int64_t limit) {
  int64_t best = candidates.front();
  for (int64_t c : candidates)
    if (c <= limit && extent % c == 0) best = std::max(best, c);
  return best;
}

// The data-movement kernels whose innermost output loop is not the input's innermost index: transposes.
bool isTransposeLike(Kernel& k) {
  if (k.kind != "data-movement") return false;
  std::vector<std::string> loops = outerChain(k);
  if (loops.size() < 2) return false;
  bool transposed = false;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Compute) return;
    walkExpr(static_cast<ComputeStmt&>(n).value, [&](const ExprNode& e) {
      if (e.kind != ExprKind::Load) return;
      const auto& idx = static_cast<const Load&>(e).indices;
      if (idx.size() >= 2 && !usesVar(idx.back(), loops.back()) && usesVar(idx.back(), loops[loops.size() - 2]))
        transposed = true;
    });
  });
  return transposed;
}

// Fuses a list of nested loops into one; returns its name ("" for none).
std::string fuseAll(TracedSchedule& s, const std::vector<std::string>& loops) {
  if (loops.empty()) return "";
  std::string f = loops[0];
  for (size_t i = 1; i < loops.size(); ++i) f = s.fuse(f, loops[i]);
  return f;
}

// Splits `loop` by min(factor, extent): returns {outer, inner}, or {loop, ""} when the factor is 1.
std::pair<std::string, std::string> splitBy(TracedSchedule& s, const std::string& loop, int64_t factor) {
  factor = std::min(factor, extentOf(s.kernel(), loop));
  if (factor <= 1) return {loop, ""};
  auto parts = s.split(loop, factor);
  return {parts[0], parts[1]};
}

// Binds a loop to the threads of a block: split by `threads` when it is longer.
void bindThreads(TracedSchedule& s, const std::string& loop, int64_t threads, ThreadTag tag = ThreadTag::ThreadX) {
  if (extentOf(s.kernel(), loop) <= threads) return s.bind(loop, tag);
  auto [outer, inner] = splitBy(s, loop, threads);
  s.bind(inner, tag);
}

// ---------------------------------------------------------------- the templates

void pointwise(TracedSchedule& s, const TemplateParams& p) {
  std::string f = fuseAll(s, outerChain(s.kernel()));
  if (f.empty()) return;
  if (p.at("vector_width") > 1) {
    auto [rest, lanes] = splitBy(s, f, p.at("vector_width"));
    if (!lanes.empty()) s.vectorize(lanes);
    f = rest;
  }
  auto [grid, tx] = splitBy(s, f, p.at("block_size"));
  if (tx.empty()) return s.bind(grid, ThreadTag::ThreadX);
  std::string blk = grid;
  if (p.at("elems_per_thread") > 1 && extentOf(s.kernel(), grid) > 1) {
    auto [b, e] = splitBy(s, grid, p.at("elems_per_thread"));
    if (!e.empty()) s.unroll(e);
    blk = b;
  }
  if (p.at("grid_stride") && extentOf(s.kernel(), blk) > p.at("max_blocks")) blk = splitBy(s, blk, p.at("max_blocks")).second;
  s.bind(blk, ThreadTag::BlockX);
  s.bind(tx, ThreadTag::ThreadX);
}

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

void rowReduction(TracedSchedule& s, const TemplateParams& p) {
  int64_t threads = p.at("threads");
  std::string row = fuseAll(s, outerChain(s.kernel()));
  std::string buffer;
  std::vector<std::string> loops = rowLoops(s.kernel(), &buffer);
  if (!row.empty()) s.bind(row, ThreadTag::BlockX);
  if (p.at("cache_row") && !row.empty() && !buffer.empty()) {
    auto fill = s.cacheRead(row, buffer, MemScope::Shared);
    bindThreads(s, fill.back(), threads);
  }
  for (const std::string& l : loops) bindThreads(s, l, threads);
}

[[noreturn]] void rejectParams(Kernel& k, const std::string& param, const std::string& what) {
  throw ScheduleError("template gemm", k.id, param, 0, what);
}

// The input buffers read inside `loop`, in buffer order (the gemm's operands A and B).
std::vector<std::string> inputsReadIn(Kernel& k, const std::string& loop) {
  std::set<std::string> read;
  auto site = detail::findLoop(k, loop);
  if (!site) return {};
  walk(site->loop->body, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind == ExprKind::Load) read.insert(static_cast<const Load&>(x).buffer);
      });
      return e;
    });
  });
  std::vector<std::string> out;
  for (const Buffer& b : k.buffers)
    if (b.role == BufferRole::Input && read.count(b.name)) out.push_back(b.name);
  return out;
}

// A shared-memory fill spread over the block's ty x tx threads: its loops fused, then split into
// repeats x threadIdx.y x threadIdx.x (the repeats unrolled).
using ThreadDims = std::vector<std::pair<int64_t, ThreadTag>>;  // threads per tag, innermost (x) first

void bindFill(TracedSchedule& s, const std::vector<std::string>& fillLoops, const ThreadDims& dims) {
  std::string rest = fuseAll(s, fillLoops);
  for (auto [threads, tag] : dims) {
    if (threads <= 1) continue;
    if (extentOf(s.kernel(), rest) <= threads) return s.bind(rest, tag);
    auto [outer, inner] = splitBy(s, rest, threads);
    s.bind(inner, tag);
    rest = outer;
  }
  if (extentOf(s.kernel(), rest) <= 16) s.unroll(rest);
}

// Stages every input read inside `ko` in shared memory, filled by the block's threads; rows padded by `pad`.
void stageOperands(TracedSchedule& s, const std::string& ko, const ThreadDims& dims, int64_t pad = 0) {
  for (const std::string& operand : inputsReadIn(s.kernel(), ko)) {
    auto fill = s.cacheRead(ko, operand, MemScope::Shared, pad);
    bindFill(s, std::vector<std::string>(fill.begin() + 1, fill.end()), dims);
  }
}

// shared = 1: the reduction is hoisted out of the thread loops to the block, so that each k-outer step
// stages an A tile (block_m x block_k) and a B tile (block_k x block_n) in shared memory, filled by all the
// block's threads, and each thread accumulates a thread_m x thread_n micro-tile in registers. A thread's rows
// (columns) are a thread apart, so the threads of a warp read consecutive shared and global addresses.
void gemmShared(TracedSchedule& s, const TemplateParams& p, const std::vector<std::string>& blockTile) {
  Kernel& k = s.kernel();
  std::string rows = blockTile[2], cols = blockTile[3];
  int64_t bm = extentOf(k, rows), bn = extentOf(k, cols);
  int64_t tm = std::min(p.at("thread_m"), bm), tn = std::min(p.at("thread_n"), bn);
  auto [mi, ty] = splitBy(s, rows, (bm + tm - 1) / tm);
  auto [ni, tx] = splitBy(s, cols, (bn + tn - 1) / tn);
  int64_t threadsY = ty.empty() ? 1 : extentOf(k, ty), threadsX = tx.empty() ? 1 : extentOf(k, tx);
  std::vector<std::string> order;
  for (const std::string& l : {ty, tx, mi, ni})
    if (!l.empty()) order.push_back(l);
  if (order.size() >= 2) s.reorder(order);
  if (!ty.empty()) s.bind(ty, ThreadTag::ThreadY);
  if (!tx.empty()) s.bind(tx, ThreadTag::ThreadX);
  if (!ty.empty()) s.unroll(mi);
  if (!tx.empty()) s.unroll(ni);
  auto [ko, ki] = splitBy(s, "k", p.at("block_k"));
  s.hoistReduction(ko, blockTile[1]);
  if (!ki.empty()) {
    std::vector<std::string> inner = {ki};
    if (!ty.empty()) inner.push_back(mi);
    if (!tx.empty()) inner.push_back(ni);
    if (inner.size() >= 2) s.reorder(inner);
    s.unroll(ki);
  }
  stageOperands(s, ko, {{threadsX, ThreadTag::ThreadX}, {threadsY, ThreadTag::ThreadY}});
}

// mma = 1: as shared = 1, but each warp (threadIdx.z, threadIdx.y) computes a warp_m x warp_n tile as
// 16 x 8 tiles bound to the mma lanes, each 16-deep step of which the code generator emits as one
// tensor-core mma.sync; the accumulators stay in registers in the mma's layout.
void gemmMma(TracedSchedule& s, const TemplateParams& p, const std::vector<std::string>& blockTile) {
  Kernel& k = s.kernel();
  int64_t bm = extentOf(k, blockTile[2]), bn = extentOf(k, blockTile[3]);
  auto w = s.tile({blockTile[2], blockTile[3]}, {std::min(p.at("warp_m"), bm), std::min(p.at("warp_n"), bn)});
  int64_t warpsM = extentOf(k, w[0]), warpsN = extentOf(k, w[1]);
  s.bind(w[0], ThreadTag::ThreadZ);
  s.bind(w[1], ThreadTag::ThreadY);
  auto rowsOf = s.split(w[2], 16);  // fragment rows, rows of one mma tile
  auto colsOf = s.split(w[3], 8);   // fragment columns, columns of one mma tile
  s.reorder({rowsOf[0], colsOf[0], rowsOf[1], colsOf[1]});
  s.unroll(rowsOf[0]);
  s.unroll(colsOf[0]);
  s.bind(rowsOf[1], ThreadTag::MmaRow);
  s.bind(colsOf[1], ThreadTag::MmaCol);
  auto [ko, ki] = splitBy(s, "k", p.at("block_k"));
  s.hoistReduction(ko, blockTile[1]);
  if (!ki.empty() && extentOf(k, ki) > 16) {
    auto steps = s.split(ki, 16);  // mma steps of one k tile, depth of one mma
    s.reorder({steps[0], rowsOf[0], colsOf[0], rowsOf[1], colsOf[1], steps[1]});
    s.unroll(steps[0]);
    ki = steps[1];
  }
  if (!ki.empty()) s.unroll(ki);
  // Unpadded: padding the rows by 8 elements (distinct banks for the fragment reads) measured 12% slower at
  // 4096^3 on the H200 though 11% faster at 2048 x 256 x 2048 (docs/codegen.md); left to overrides.
  stageOperands(s, ko, {{32, ThreadTag::ThreadX}, {warpsN, ThreadTag::ThreadY}, {warpsM, ThreadTag::ThreadZ}});
}

bool sixteenBitOperands(Kernel& k) {
  auto inputs = inputsReadIn(k, "k");
  return !inputs.empty() && std::all_of(inputs.begin(), inputs.end(), [&](const std::string& b) {
    DType t = k.findBuffer(b)->dtype;
    return t == DType::F16 || t == DType::BF16;
  });
}

// The mma form's conditions, refused with the parameter at fault.
void checkMma(Kernel& k, const TemplateParams& p) {
  if (!sixteenBitOperands(k)) rejectParams(k, "mma", "tensor cores need f16 or bf16 operands (tf32 is not implemented)");
  if (!p.at("shared")) rejectParams(k, "shared", "the mma form reads its operands from shared tiles: set shared = 1");
  if (p.at("warp_m") % 16 != 0 || p.at("warp_m") == 0) rejectParams(k, "warp_m", "the mma form needs warp_m a multiple of 16");
  if (p.at("warp_n") % 8 != 0 || p.at("warp_n") == 0) rejectParams(k, "warp_n", "the mma form needs warp_n a multiple of 8");
  if (p.at("block_k") % 16 != 0) rejectParams(k, "block_k", "the mma form needs block_k a multiple of 16");
}

// Output tile per block; inside it either a grid of threads each computing a thread_m x thread_n micro-tile,
// or (warp_m, warp_n set) a grid of warps each computing a warp_m x warp_n tile with its 32 lanes, or
// (shared = 1) the tiled form of gemmShared.
void gemm(TracedSchedule& s, const TemplateParams& p) {
  std::vector<std::string> loops = outerChain(s.kernel());
  if (loops.size() < 2) return;
  std::string i = loops[loops.size() - 2], j = loops.back();
  std::vector<std::string> batch(loops.begin(), loops.end() - 2);
  int64_t bm = std::min(p.at("block_m"), extentOf(s.kernel(), i)), bn = std::min(p.at("block_n"), extentOf(s.kernel(), j));
  bool mma = p.at("mma") != 0;
  if (mma) checkMma(s.kernel(), p);
  bool warps = p.at("warp_m") > 0 && p.at("warp_n") > 0;
  bool shared = p.at("shared") != 0;
  if (shared && warps && !mma) rejectParams(s.kernel(), "warp_m", "warp tiles and shared operand tiles exclusive: set shared = 0 or warp_m = warp_n = 0");
  int64_t tm = std::min(p.at("thread_m"), bm), tn = std::min(p.at("thread_n"), bn);
  int64_t threads = warps || mma ? 32 * ((bm + p.at("warp_m") - 1) / p.at("warp_m")) * ((bn + p.at("warp_n") - 1) / p.at("warp_n"))
                          : ((bm + tm - 1) / tm) * ((bn + tn - 1) / tn);
  if (threads > 1024) rejectParams(s.kernel(), "thread_m", "a block of " + std::to_string(threads) + " threads exceeds 1024");
  auto t = s.tile({i, j}, {bm, bn});
  if (!batch.empty()) s.bind(fuseAll(s, batch), ThreadTag::BlockZ);
  s.bind(t[0], ThreadTag::BlockY);
  s.bind(t[1], ThreadTag::BlockX);
  if (mma) return gemmMma(s, p, t);
  if (shared) return gemmShared(s, p, t);
  std::string rows = t[2], cols = t[3];
  if (warps) {
    auto w = s.tile({rows, cols}, {std::min(p.at("warp_m"), bm), std::min(p.at("warp_n"), bn)});
    s.bind(s.fuse(w[0], w[1]), ThreadTag::Warp);
    rows = w[2];
    cols = w[3];
  }
  auto [iio, iii] = splitBy(s, rows, std::min(p.at("thread_m"), extentOf(s.kernel(), rows)));
  auto [jio, jii] = splitBy(s, cols, std::min(p.at("thread_n"), extentOf(s.kernel(), cols)));
  if (!iii.empty() && !jii.empty()) s.reorder({iio, jio, iii, jii});
  if (warps) {
    s.bind(s.fuse(iio, jio), ThreadTag::ThreadX);  // the lanes
  } else {
    s.bind(iio, ThreadTag::ThreadY);
    s.bind(jio, ThreadTag::ThreadX);
  }
  if (!iii.empty()) s.unroll(iii);
  if (!jii.empty()) s.unroll(jii);
  auto [ko, ki] = splitBy(s, "k", p.at("block_k"));
  if (!ki.empty()) s.unroll(ki);
}

// Conv and pool: (n, channel, spatial...) with the spatial loops fused over the threads of a block.
void windowed(TracedSchedule& s, const TemplateParams& p) {
  std::vector<std::string> loops = outerChain(s.kernel());
  if (loops.size() < 3) return;
  std::string hw = fuseAll(s, std::vector<std::string>(loops.begin() + 2, loops.end()));
  auto [b, t] = splitBy(s, hw, p.at("threads"));
  s.bind(t.empty() ? b : t, ThreadTag::ThreadX);
  if (!t.empty()) s.bind(b, ThreadTag::BlockX);
  s.bind(loops[1], ThreadTag::BlockY);
  s.bind(loops[0], ThreadTag::BlockZ);
  if (p.at("unroll_window"))
    for (const char* tap : {"kd", "kh", "kw"})
      if (detail::findLoop(s.kernel(), tap) && extentOf(s.kernel(), tap) <= 8) s.unroll(tap);
}

void transpose(TracedSchedule& s, const TemplateParams& p) {
  std::vector<std::string> loops = outerChain(s.kernel());
  std::string a = loops[loops.size() - 2], b = loops.back();
  int64_t tile = p.at("tile");
  auto t = s.tile({a, b}, {std::min(tile, extentOf(s.kernel(), a)), std::min(tile, extentOf(s.kernel(), b))});
  std::vector<std::string> batch(loops.begin(), loops.end() - 2);
  if (!batch.empty()) s.bind(fuseAll(s, batch), ThreadTag::BlockZ);
  s.bind(t[0], ThreadTag::BlockY);
  s.bind(t[1], ThreadTag::BlockX);
  if (p.at("shared_tile")) {
    std::string input;
    for (const Buffer& buf : s.kernel().buffers)
      if (buf.role == BufferRole::Input && input.empty()) input = buf.name;
    auto fill = s.cacheRead(t[1], input, MemScope::Shared);
    s.bind(fill[fill.size() - 2], ThreadTag::ThreadY);
    s.bind(fill.back(), ThreadTag::ThreadX);
  }
  s.bind(t[2], ThreadTag::ThreadY);
  s.bind(t[3], ThreadTag::ThreadX);
}

// Each top-level nest (one per Split output) fused and spread over blocks and threads.
void dataMovement(TracedSchedule& s, const TemplateParams& p) {
  for (const auto& nest : topNests(s.kernel())) {
    std::string f = fuseAll(s, nest);
    if (f.empty()) continue;
    auto [blk, tx] = splitBy(s, f, p.at("block_size"));
    s.bind(tx.empty() ? blk : tx, ThreadTag::ThreadX);
    if (!tx.empty()) s.bind(blk, ThreadTag::BlockX);
  }
}

using Apply = void (*)(TracedSchedule&, const TemplateParams&);

struct Template {
  Apply apply;
  std::vector<TemplateParam> space;
};

const Template& templateFor(const std::string& name) {
  static const std::map<std::string, Template> table = {
      {"pointwise",
       {pointwise,
        {{"vector_width", {1, 2, 4}, "elements per vector load/store (must divide the element count)"},
         {"elems_per_thread", {1, 2, 4, 8}, "elements each thread handles, a block apart (coalesced)"},
         {"block_size", {64, 128, 256, 512, 1024}, "threads per block"},
         {"grid_stride", {0, 1}, "cap the grid at max_blocks and loop over the rest"},
         {"max_blocks", {264, 528, 1056}, "grid size cap for grid-stride loops (multiples of 132 SMs)"}}}},
      {"row-reduction",
       {rowReduction,
        {{"threads", {32, 64, 128, 256, 512, 1024}, "threads per row: 32 is one warp per row, more is one block per row"},
         {"cache_row", {0, 1}, "keep the row in shared memory across the passes over it"}}}},
      {"gemm",
       {gemm,
        {{"block_m", {16, 32, 64, 128}, "rows of the output tile of one block"},
         {"block_n", {16, 32, 64, 128}, "columns of the output tile of one block"},
         {"block_k", {4, 8, 16, 32}, "depth of one step of the reduction (unrolled)"},
         {"warp_m", {0, 16, 32, 64}, "rows of the tile of one warp (0: no warp level)"},
         {"warp_n", {0, 16, 32, 64}, "columns of the tile of one warp (0: no warp level)"},
         {"thread_m", {1, 2, 4, 8}, "rows each thread computes (unrolled)"},
         {"thread_n", {1, 2, 4, 8}, "columns each thread computes (unrolled)"},
         {"shared", {0, 1}, "stage A and B tiles in shared memory at the k-outer loop, accumulators in registers"},
         {"mma", {0, 1}, "tensor cores (f16/bf16 operands): warp tiles of 16 x 8 mma.sync tiles; thread_m/n unused"}}}},
      {"conv",
       {windowed,
        {{"threads", {64, 128, 256, 512}, "output pixels per block"},
         {"unroll_window", {0, 1}, "unroll the filter window loops"}}}},
      {"pool",
       {windowed,
        {{"threads", {64, 128, 256, 512}, "output pixels per block"},
         {"unroll_window", {0, 1}, "unroll the window loops"}}}},
      {"transpose",
       {transpose,
        {{"tile", {8, 16, 32}, "side of the square tile one block moves"},
         {"shared_tile", {0, 1}, "stage the tile in shared memory so reads and writes are both coalesced"}}}},
      {"data-movement",
       {dataMovement, {{"block_size", {128, 256, 512}, "threads per block"}}}},
  };
  return table.at(name);
}

// The gemm block tile: among the candidate sides dividing M and N, the largest tile that still gives every
// SM of an H200 (132) a block; when none does, the one giving the most blocks.
std::pair<int64_t, int64_t> pickBlockTile(int64_t M, int64_t N, int64_t batch) {
  auto sides = [](int64_t extent) {
    std::vector<int64_t> out;
    for (int64_t c : {128, 64, 32, 16})
      if (c <= extent && extent % c == 0) out.push_back(c);
    if (out.empty()) out.push_back(std::min<int64_t>(16, extent));
    return out;
  };
  std::pair<int64_t, int64_t> best{0, 0};
  int64_t bestBlocks = 0;
  bool bestFills = false;
  for (int64_t bm : sides(M))
    for (int64_t bn : sides(N)) {
      int64_t blocks = batch * ((M + bm - 1) / bm) * ((N + bn - 1) / bn);
      bool fills = blocks >= 132;
      bool better = fills ? (!bestFills || bm * bn > best.first * best.second ||
                             (bm * bn == best.first * best.second && bm == bn))
                          : (!bestFills && blocks > bestBlocks);
      if (best.first == 0 || better) {
        best = {bm, bn};
        bestBlocks = blocks;
        bestFills = fills;
      }
    }
  return best;
}

int64_t rowExtent(Kernel& k) {
  auto loops = rowLoops(k, nullptr);
  return loops.empty() ? 1 : extentOf(k, loops[0]);
}

// A row can be staged in shared memory when the first pass reads it at indices affine in the pass's loop:
// one reduced axis, or several that a flat index maps onto by division (not affine) are read from global.
bool rowCacheable(Kernel& k) {
  std::string buffer;
  auto loops = rowLoops(k, &buffer);
  if (loops.empty() || buffer.empty()) return false;
  bool affine = true;
  walk(detail::findLoop(k, loops[0])->loop->body, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind != ExprKind::Load || static_cast<const Load&>(x).buffer != buffer) return;
        for (const Expr& i : static_cast<const Load&>(x).indices) affine = affine && detail::affine(i, {loops[0]}).has_value();
      });
      return e;
    });
  });
  return affine;
}

}  // namespace

std::string templateName(const Kernel& k) {
  if (k.kind == "reduction") return "row-reduction";
  if (k.kind == "data-movement") return isTransposeLike(const_cast<Kernel&>(k)) ? "transpose" : "data-movement";
  if (k.kind == "gemm" || k.kind == "conv" || k.kind == "pool") return k.kind;
  return "pointwise";
}

std::vector<TemplateParam> parameterSpace(const Kernel& k) { return templateFor(templateName(k)).space; }

TemplateParams defaultParams(const Kernel& kc) {
  Kernel& k = const_cast<Kernel&>(kc);  // only read; the helpers take non-const for loop lookup
  std::string name = templateName(k);
  std::vector<std::string> outer = outerChain(k);
  int64_t n = chainExtent(k, outer);
  if (name == "pointwise")
    return {{"vector_width", pickDividing({1, 2, 4}, n, 4)}, {"elems_per_thread", n >= (1 << 20) ? 4 : 1},
            {"block_size", 256}, {"grid_stride", 0}, {"max_blocks", 1056}};
  if (name == "row-reduction") {
    int64_t K = rowExtent(k);
    int64_t bytes = K * 4;
    int phases = int(rowLoops(k, nullptr).size());
    return {{"threads", K <= 1024 ? 32 : 256}, {"cache_row", phases >= 2 && bytes <= 16 * 1024 && rowCacheable(k) ? 1 : 0}};
  }
  if (name == "gemm") {
    int64_t M = outer.size() >= 2 ? extentOf(k, outer[outer.size() - 2]) : 1;
    int64_t N = outer.empty() ? 1 : extentOf(k, outer.back());
    auto [bm, bn] = pickBlockTile(M, N, n / std::max<int64_t>(1, M * N));
    int64_t K = extentOf(k, "k");
    // 16 x 16 threads, each a (block_m / 16) x (block_n / 16) micro-tile; or, for 16-bit operands, warps of
    // up to 64 x 64 on the tensor cores.
    TemplateParams p = {{"block_m", bm}, {"block_n", bn}, {"block_k", pickDividing({4, 8, 16}, K, 16)},
                        {"warp_m", 0}, {"warp_n", 0}, {"thread_m", std::max<int64_t>(1, bm / 16)},
                        {"thread_n", std::max<int64_t>(1, bn / 16)}, {"shared", 1}, {"mma", 0}};
    if (sixteenBitOperands(k) && bm >= 16 && bn >= 16 && K % 16 == 0) {
      p["mma"] = 1;
      p["block_k"] = K % 32 == 0 ? 32 : 16;
      p["warp_m"] = std::min<int64_t>(64, bm);
      p["warp_n"] = std::min<int64_t>(64, bn);
    }
    return p;
  }
  if (name == "conv" || name == "pool") return {{"threads", 128}, {"unroll_window", 1}};
  if (name == "transpose") return {{"tile", 32}, {"shared_tile", 1}};
  return {{"block_size", 256}};
}

void applyTemplate(TracedSchedule& s, const TemplateParams& params) {
  std::string name = templateName(s.kernel());
  const Template& t = templateFor(name);
  TemplateParams p = defaultParams(s.kernel());
  for (auto& [key, value] : params) {
    if (!p.count(key)) fail("template " + name + " (kernel '" + s.kernel().id + "'): unknown parameter '" + key + "'");
    p[key] = value;
  }
  // Sizes must be positive; 0 only where the space offers it as "off" (warp_m = 0, shared = 0, ...).
  for (const TemplateParam& tp : t.space) {
    int64_t v = p.at(tp.name);
    bool zeroMeansOff = std::find(tp.candidates.begin(), tp.candidates.end(), 0) != tp.candidates.end();
    if (v < 0 || (v == 0 && !zeroMeansOff))
      fail("template " + name + " (kernel '" + s.kernel().id + "'): parameter '" + tp.name + "' = " + std::to_string(v) +
           (zeroMeansOff ? " (must be 0 or more)" : " (must be 1 or more)"));
  }
  for (const TemplateParam& tp : t.space) p[tp.name] = s.setParam(tp.name, p.at(tp.name));
  t.apply(s, p);
}

Trace applyDefaultSchedule(Kernel& k) {
  TracedSchedule s(k);
  applyTemplate(s, {});
  return s.trace();
}

}  // namespace tessera::kernel
