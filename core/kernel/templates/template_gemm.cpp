#include "kernel/templates/template_util.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

#include "kernel/launch.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/shared_banks.h"

namespace tessera::kernel::templ {
namespace {


// stages > 1: each thread fills the shared tiles in 16-byte runs, which the pipelined loop copies with cp.async.
int64_t copyBytes(const TemplateParams& p) { return p.at("stages") > 1 ? 16 : 0; }

// shared = 1: the reduction is hoisted out of the thread loops to the block, so that each k-outer step
// stages an A tile (block_m x block_k) and a B tile (block_k x block_n) in shared memory, filled by all the
// block's threads, and each thread accumulates a thread_m x thread_n micro-tile in registers. A thread's rows
// are a thread apart, so the threads of a warp read consecutive shared and global addresses; its columns are
// too (column_run = 1), or come in runs of column_run consecutive ones, a run per thread side by side
// (column_run = 4: one 16-byte shared load gives a thread four of B's f32 columns, where a thread apart they
// are four loads; the shared loads per multiply-add bound the form).
void gemmShared(TracedSchedule& s, const TemplateParams& p, const std::vector<std::string>& blockTile) {
  Kernel& k = s.kernel();
  std::string rows = blockTile[2], cols = blockTile[3];
  int64_t bm = extentOf(k, rows), bn = extentOf(k, cols);
  int64_t tm = std::min(p.at("thread_m"), bm), tn = std::min(p.at("thread_n"), bn);
  int64_t run = std::min(p.at("column_run"), tn);  // runs past the tile are guarded
  auto [mi, ty] = splitBy(s, rows, (bm + tm - 1) / tm);
  auto [runs, nr] = splitBy(s, cols, run);  // nr: the columns of one run ("" when run = 1)
  auto [ni, tx] = splitBy(s, runs, (bn + tn - 1) / tn);
  int64_t threadsY = ty.empty() ? 1 : extentOf(k, ty), threadsX = tx.empty() ? 1 : extentOf(k, tx);
  std::vector<std::string> order;
  for (const std::string& l : {ty, tx, mi, ni, nr})
    if (!l.empty()) order.push_back(l);
  if (order.size() >= 2) s.reorder(order);
  if (!ty.empty()) s.bind(ty, ThreadTag::ThreadY);
  if (!tx.empty()) s.bind(tx, ThreadTag::ThreadX);
  if (!ty.empty()) s.unroll(mi);
  if (!tx.empty()) s.unroll(ni);
  if (!nr.empty()) s.unroll(nr);
  auto [ko, ki] = splitBy(s, "k", p.at("block_k"));
  s.hoistReduction(ko, blockTile[1]);
  if (!ki.empty()) {
    std::vector<std::string> inner = {ki};
    if (!ty.empty()) inner.push_back(mi);
    if (!tx.empty()) inner.push_back(ni);
    if (!nr.empty()) inner.push_back(nr);
    if (inner.size() >= 2) s.reorder(inner);
    s.unroll(ki);
  }
  // A transposed B ([N, K], Gemm's transB: a Linear layer's weight) is staged as rows of k, one row per column
  // of the output: the lanes of a warp, a column apart, read a row apart, block_k floats, into two banks (16
  // rows at 16 words). Rows padded by 16 bytes (the copies stay 16-byte runs) spread them over eight.
  // Named copies: clang 14 (the sanitize preset's compiler) cannot capture structured bindings in a lambda.
  const std::string column = tx, depth = ki, outer = ko;
  auto padOf = [&](const std::string& operand) -> int64_t {
    bool rowsAlongK = !column.empty() && !depth.empty() && indexUses(k, outer, operand, depth, false) &&
                      indexUses(k, outer, operand, column, true);
    return rowsAlongK ? 16 / int64_t(dtypeSize(k.findBuffer(operand)->dtype)) : 0;
  };
  stageOperands(s, ko, {{threadsX, ThreadTag::ThreadX}, {threadsY, ThreadTag::ThreadY}}, padOf, copyBytes(p));
  splitKOuter(s, ko, p, "gemm");
  pipelineStages(s, ko, p);
}

// store_tile = 1 (mma form): the block's output tile goes through shared memory (cache_write at the block
// loop), then each thread stores 16 contiguous bytes of it. The mma accumulators give each lane 2 adjacent
// elements of a row, so stored directly a warp fills half of each 32-byte sector it writes: that dominates
// where the output is large against the reduction (attention's scores: K = 64, 4 GiB written).
void storeTileThroughShared(TracedSchedule& s, const std::string& blockLoop, const ThreadDims& dims) {
  Kernel& k = s.kernel();
  std::vector<std::string> outputs;
  for (const Buffer& b : k.buffers)
    if (b.role == BufferRole::Output) outputs.push_back(b.name);
  if (outputs.size() != 1) rejectParams(k, "gemm", "store_tile", "store_tile writes one output through shared memory; this group has " + std::to_string(outputs.size()));
  auto back = s.cacheWrite(blockLoop, outputs[0], MemScope::Shared);
  int64_t lanes = 16 / int64_t(dtypeSize(k.findBuffer(outputs[0])->dtype));
  bindFill(s, std::vector<std::string>(back.begin() + 1, back.end()), dims, lanes, /*vectorized=*/true);
  if (sharedBytesPerBlock(k) > kSharedBytesLimit)
    rejectParams(k, "gemm", "store_tile", "the output tile and the operand tiles need " + std::to_string(sharedBytesPerBlock(k)) +
                                             " bytes of shared memory (limit " + sharedLimitText() + ")");
}

// mma = 1: as shared = 1, but each warp (threadIdx.z, threadIdx.y) computes a warp_m x warp_n tile as
// 16 x 8 tiles bound to the mma lanes, each 16-deep step of which (8-deep for f32 operands with tf32 = 1) the
// code generator emits as one tensor-core mma.sync; the accumulators stay in registers in the mma's layout.
// wgmma = 1 (Hopper): the warps are 16 rows each, along threadIdx.y, so that four in a row make a warpgroup
// holding a 64 x warp_n tile in wgmma's accumulator layout; the operand tiles are stored 128-byte swizzled,
// and the code generator emits each k step of a warpgroup as one wgmma (docs/codegen.md, Warpgroup MMA).
void gemmMma(TracedSchedule& s, const TemplateParams& p, const std::vector<std::string>& blockTile) {
  Kernel& k = s.kernel();
  bool wgmma = p.at("wgmma") != 0;
  int64_t bm = extentOf(k, blockTile[2]), bn = extentOf(k, blockTile[3]);
  int64_t warpM = wgmma ? 16 : p.at("warp_m");
  auto w = s.tile({blockTile[2], blockTile[3]}, {std::min(warpM, bm), std::min(p.at("warp_n"), bn)});
  int64_t warpsM = extentOf(k, w[0]), warpsN = extentOf(k, w[1]);
  ThreadTag rowsTag = wgmma ? ThreadTag::ThreadY : ThreadTag::ThreadZ, colsTag = wgmma ? ThreadTag::ThreadZ : ThreadTag::ThreadY;
  s.bind(w[0], rowsTag);
  s.bind(w[1], colsTag);
  auto rowsOf = s.split(w[2], 16);  // fragment rows, rows of one mma tile
  auto colsOf = s.split(w[3], 8);   // fragment columns, columns of one mma tile
  s.reorder({rowsOf[0], colsOf[0], rowsOf[1], colsOf[1]});
  s.unroll(rowsOf[0]);
  s.unroll(colsOf[0]);
  s.bind(rowsOf[1], ThreadTag::MmaRow);
  s.bind(colsOf[1], ThreadTag::MmaCol);
  auto [ko, ki] = splitBy(s, "k", p.at("block_k"));
  s.hoistReduction(ko, blockTile[1]);
  int64_t depth = p.at("tf32") ? 8 : 16;  // of one mma: m16n8k8 on tf32, m16n8k16 on 16-bit operands
  if (!ki.empty() && extentOf(k, ki) > depth) {
    auto steps = s.split(ki, depth);  // mma steps of one k tile, depth of one mma
    s.reorder({steps[0], rowsOf[0], colsOf[0], rowsOf[1], colsOf[1], steps[1]});
    s.unroll(steps[0]);
    ki = steps[1];
  }
  if (!ki.empty()) s.unroll(ki);
  // Unpadded by default: padding the rows by 8 elements (distinct banks for the fragment reads) measured 12%
  // slower at 4096^3 on the H200 though 11% faster at 2048 x 256 x 2048 (docs/codegen.md), both with scalar
  // fragment loads; ldmatrix reads 8 rows of 16 bytes at once, which unpadded rows put in the same banks.
  ThreadDims dims = {{32, ThreadTag::ThreadX}, {wgmma ? warpsM : warpsN, ThreadTag::ThreadY}, {wgmma ? warpsN : warpsM, ThreadTag::ThreadZ}};
  // B's rows take pad_b more elements than A's: tf32 fragments read A and B at different strides (16-deep A rows
  // and 64-wide B rows want 4 and 8: no one pad suits both).
  const std::string colsVar = colsOf[1], kOuter = ko;  // named copies: clang 14 cannot capture structured bindings
  std::vector<std::string> tiles = stageOperands(s, ko, dims, [&](const std::string& operand) -> int64_t {
    if (wgmma) return 0;
    const bool b = indexUses(k, kOuter, operand, colsVar, true) || indexUses(k, kOuter, operand, colsVar, false);
    return p.at("pad") + (b ? p.at("pad_b") : 0);
  }, copyBytes(p));
  if (wgmma)
    for (const std::string& t : tiles) s.swizzle(t, 128);
  splitKOuter(s, ko, p, "gemm");
  pipelineStages(s, ko, p);
  if (p.at("store_tile")) storeTileThroughShared(s, blockTile[1], dims);
}

bool sixteenBitOperands(Kernel& k) { return operandsOf(k, "k", {DType::F16, DType::BF16}); }

// The mma form's conditions, refused with the parameter at fault. tf32 = 1 is the f32 operands' form: they are
// rounded to tf32 (10-bit mantissa) for the tensor cores, so it is a choice of precision, never a default.
void checkMma(Kernel& k, const TemplateParams& p) {
  checkTf32(k, "gemm", p, "k");
  bool tf32 = p.at("tf32") != 0;
  if (!tf32 && !sixteenBitOperands(k)) rejectParams(k, "gemm", "mma", "tensor cores need f16 or bf16 operands, or f32 ones with tf32 = 1");
  if (!p.at("shared")) rejectParams(k, "gemm", "shared", "the mma form reads its operands from shared tiles: set shared = 1");
  if (!p.at("wgmma") && (p.at("warp_m") % 16 != 0 || p.at("warp_m") == 0)) rejectParams(k, "gemm", "warp_m", "the mma form needs warp_m a multiple of 16");
  if (p.at("warp_n") % 8 != 0 || p.at("warp_n") == 0) rejectParams(k, "gemm", "warp_n", "the mma form needs warp_n a multiple of 8");
  int64_t depth = tf32 ? 8 : 16;
  if (p.at("block_k") % depth != 0)
    rejectParams(k, "gemm", "block_k", "the mma form needs block_k a multiple of " + std::to_string(depth));
  // 16-bit tiles' rows stay whole 16-byte runs (ldmatrix's rows, the 16-byte fills); f32 ones are at 4 elements.
  if (!tf32 && (p.at("pad") % 8 != 0 || p.at("pad_b") % 8 != 0))
    rejectParams(k, "gemm", p.at("pad") % 8 ? "pad" : "pad_b", "16-bit tiles pad their rows by multiples of 8 elements (16 bytes)");
}

// The wgmma form's conditions (Hopper's warpgroup MMA reads whole swizzled tiles: no tile may overhang).
void checkWgmma(Kernel& k, const TemplateParams& p, int64_t M, int64_t N) {
  auto need = [&](bool ok, const std::string& param, const std::string& what) {
    if (!ok) rejectParams(k, "gemm", param, what);
  };
  need(p.at("mma") != 0 && !p.at("tf32") && sixteenBitOperands(k), "wgmma", "wgmma is the tensor-core form of f16 or bf16 operands: set mma = 1, tf32 = 0");
  // M may overhang the last block: the rows past M are computed from whatever their shared rows hold (rows
  // are independent in a product) and never stored.
  need(p.at("block_m") % 64 == 0, "block_m", "wgmma needs block_m a multiple of 64 (whole warpgroups)");
  need(p.at("warp_n") % 64 == 0 && p.at("warp_n") <= 256, "warp_n", "wgmma needs warp_n (a warpgroup's columns) 64, 128, 192 or 256");
  need(p.at("block_n") % p.at("warp_n") == 0 && N % p.at("block_n") == 0, "block_n", "wgmma needs block_n a multiple of warp_n that divides N = " + std::to_string(N));
  need(p.at("block_k") % 64 == 0 && extentOf(k, "k") % p.at("block_k") == 0, "block_k",
       "wgmma needs block_k a multiple of 64 (rows of 128 bytes, the swizzle's width) that divides K = " + std::to_string(extentOf(k, "k")));
}

// split_k = 0, the default, is the template's choice for the form and tiles in force: parts of a long reduction
// in blocks of their own where the tiles leave the GPU short of blocks. Measured over ResNet-50's 37 gemms at
// batch 1 (its 1 x 1 convs and the classifier; every split of each, same call, bench/results/2026-12-06-gemm-splitk):
// those with K of 1024 and 2048 gained from the fewest parts reaching 4 blocks an SM (512 ch over 7 x 7 from 2048:
// 0.0588 -> 0.0163 ms; the classifier: 0.0266 -> 0.0102), those of K up to 512 lost or tied with any split but
// three (K 512 into 2048 ch over 7 x 7: 1.14-1.18x at 4 parts), so shorter reductions keep one part. The 37 sum to
// 0.448 ms on the H200 this way (0.586 at one part, 0.437 at each one's best), each within 1.18x of its best. A
// form without split-K (wgmma, store_tile, plain) gets one part, so a caller who changes the form need not also
// change split_k; an explicit split_k there is refused.
int64_t pickSplitK(Kernel& k, const TemplateParams& p, int64_t M, int64_t N) {
  if (p.at("wgmma") || p.at("store_tile") || (!p.at("mma") && !p.at("shared"))) return 1;
  const int64_t K = extentOf(k, "k"), bk = std::max<int64_t>(1, p.at("block_k")), steps = K / bk;
  // 64 steps as they were measured: the CUDA-core form's were 16 deep then (32 since), so K of 1024 for it.
  const int64_t measuredSteps = p.at("mma") ? steps : K / 16;
  if (K % bk != 0 || measuredSteps < 64) return 1;
  const int64_t batch = chainExtent(k, outerChain(k)) / std::max<int64_t>(1, M * N);
  const int64_t tiles = std::max<int64_t>(1, batch) * ((M + p.at("block_m") - 1) / p.at("block_m")) *
                        ((N + p.at("block_n") - 1) / p.at("block_n"));
  constexpr int64_t kWanted = 4 * kDefaultSms;
  int64_t parts = 1;
  while (parts < 16 && tiles * parts < kWanted && steps % (parts * 2) == 0) parts *= 2;
  return parts;
}

// Output tile per block; inside it either a grid of threads each computing a thread_m x thread_n micro-tile,
// or (warp_m, warp_n set) a grid of warps each computing a warp_m x warp_n tile with its 32 lanes, or
// (shared = 1) the tiled form of gemmShared.
void gemm(TracedSchedule& s, const TemplateParams& given) {
  std::vector<std::string> loops = outerChain(s.kernel());
  if (loops.size() < 2) return;
  std::string i = loops[loops.size() - 2], j = loops.back();
  // An empty result (a zero-size M or N) computes nothing: its loops run zero times as they are, untiled.
  if (extentOf(s.kernel(), i) == 0 || extentOf(s.kernel(), j) == 0) return;
  TemplateParams p = given;
  if (p.at("split_k") == 0) p["split_k"] = pickSplitK(s.kernel(), p, extentOf(s.kernel(), i), extentOf(s.kernel(), j));
  std::vector<std::string> batch(loops.begin(), loops.end() - 2);
  int64_t bm = std::min(p.at("block_m"), extentOf(s.kernel(), i)), bn = std::min(p.at("block_n"), extentOf(s.kernel(), j));
  bool mma = p.at("mma") != 0;
  if (p.at("tf32") && !mma) rejectParams(s.kernel(), "gemm", "tf32", "tf32 is a mode of the tensor-core form: set mma = 1");
  if (p.at("store_tile") && !mma) rejectParams(s.kernel(), "gemm", "store_tile", "store_tile is a form of the tensor-core epilogue: set mma = 1");
  if (p.at("wgmma")) checkWgmma(s.kernel(), p, extentOf(s.kernel(), i), extentOf(s.kernel(), j));
  if (p.at("tma") && !p.at("wgmma")) rejectParams(s.kernel(), "gemm", "tma", "TMA fills the swizzled tiles of the wgmma form: set wgmma = 1");
  if (mma) checkMma(s.kernel(), p);
  if (splitKParam(p) > 1 && (p.at("wgmma") || p.at("store_tile") || (!mma && !p.at("shared"))))
    rejectParams(s.kernel(), "gemm", "split_k",
                 "split-K takes the shared and mma forms with their epilogue in registers: set shared = 1 or mma = 1, wgmma = 0, store_tile = 0");
  bool warps = p.at("warp_m") > 0 && p.at("warp_n") > 0;
  bool shared = p.at("shared") != 0;
  if (shared && warps && !mma) rejectParams(s.kernel(), "gemm", "warp_m", "warp tiles and shared operand tiles exclusive: set shared = 0 or warp_m = warp_n = 0");
  int64_t tm = std::min(p.at("thread_m"), bm), tn = std::min(p.at("thread_n"), bn);
  int64_t warpM = p.at("wgmma") ? 16 : p.at("warp_m");
  int64_t threads = warps || mma ? 32 * ((bm + warpM - 1) / warpM) * ((bn + p.at("warp_n") - 1) / p.at("warp_n"))
                          : ((bm + tm - 1) / tm) * ((bn + tn - 1) / tn);
  if (threads > 1024) rejectParams(s.kernel(), "gemm", "thread_m", "a block of " + std::to_string(threads) + " threads exceeds 1024");
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

// The gemm block tile. Sides 128, 64, 32 and 16 up to the extent, dividing it or overhanging it (the last tile's
// rows past M are guarded); an extent under 16 is one tile. Among the tiles that give at least `enough` blocks
// (every SM of an H200 one by default), the one doing the most products per operand element it loads
// (bm·bn / (bm + bn)) scaled by the share of its outputs that exist; when none does, the one giving the most
// blocks. Dividing sides only, ViT's 197 tokens got 16-row tiles (12.5 TFLOP/s in f32 on the H200; 128 x 128
// tiles of 4096³ run 38).
std::pair<int64_t, int64_t> pickBlockTile(int64_t M, int64_t N, int64_t batch, int64_t enough = kDefaultSms) {
  auto sides = [](int64_t extent) {
    std::vector<int64_t> out;
    for (int64_t c : {128, 64, 32, 16})
      if (c <= extent) out.push_back(c);
    if (out.empty()) out.push_back(std::clamp<int64_t>(extent, 1, 16));  // an empty side (0) still gets a tile
    return out;
  };
  auto tiles = [](int64_t extent, int64_t side) { return std::max<int64_t>(1, (extent + side - 1) / side); };
  std::pair<int64_t, int64_t> best{0, 0};
  double bestScore = -1;
  int64_t bestBlocks = 0;
  bool bestFills = false;
  for (int64_t bm : sides(M))
    for (int64_t bn : sides(N)) {
      int64_t blocks = batch * tiles(M, bm) * tiles(N, bn);
      double useful = double(std::max<int64_t>(M, 1) * std::max<int64_t>(N, 1)) / double(tiles(M, bm) * bm * tiles(N, bn) * bn);
      double score = useful * double(bm * bn) / double(bm + bn);
      bool fills = blocks >= enough;
      bool better = fills ? (!bestFills || score > bestScore + 1e-9 || (std::abs(score - bestScore) <= 1e-9 && bm == bn))
                          : (!bestFills && (blocks > bestBlocks || (blocks == bestBlocks && score > bestScore + 1e-9)));
      if (best.first == 0 || better) {
        best = {bm, bn};
        bestScore = score;
        bestBlocks = blocks;
        bestFills = fills;
      }
    }
  return best;
}

// The default stages: kDefaultStages, fewer when the k steps or the defaults' shared budget for the tiles' copies
// do not allow them (1: not pipelined). 2 measured best at 4096^3 on the H200 (docs/codegen.md): f32 38.2
// TFLOP/s (3 stages 37.5, 1 stage 28.1), bf16 136 (3 stages 134, 1 stage 65).
constexpr int64_t kDefaultStages = 2;
constexpr int64_t kCoreSharedBytes = 128 * 1024;  // the CUDA-core form's budget for its stages (gemmDefaults)
int64_t pickStages(Kernel& k, const TemplateParams& p, int64_t budget = kDefaultSharedBytes) {
  int64_t K = extentOf(k, "k"), bk = std::clamp<int64_t>(K, 1, p.at("block_k"));  // K = 0: one empty step
  int64_t elem = 1;
  for (const std::string& b : inputsReadIn(k, "k")) elem = std::max<int64_t>(elem, int64_t(dtypeSize(k.findBuffer(b)->dtype)));
  int64_t bytesPerStage = (p.at("block_m") + p.at("block_n")) * bk * elem;
  int64_t stages = std::min(kDefaultStages, (K + bk - 1) / bk);
  while (stages > 1 && stages * bytesPerStage > budget) --stages;
  return std::max<int64_t>(1, stages);
}

// Whether a buffer's rows are whole 16-byte runs: then its tile fills and stores move 16 bytes a thread;
// otherwise (ViT's 197-wide attention rows) element by element.
bool rowsOf16Bytes(const Buffer& b) {
  int64_t lanes = 16 / int64_t(dtypeSize(b.dtype));
  return !b.shape.empty() && b.graphShape().back() % lanes == 0;
}

// The group writes one output, of f16 or bf16 in rows of 16-byte runs (store_tile's measured case: a row of
// another width keeps scalar stores through the shared tile, which cost more than the direct ones).
bool oneSixteenBitOutput(const Kernel& k) {
  int outputs = 0;
  bool half = false;
  for (const Buffer& b : k.buffers)
    if (b.role == BufferRole::Output) {
      ++outputs;
      half = (b.dtype == DType::F16 || b.dtype == DType::BF16) && rowsOf16Bytes(b);
    }
  return outputs == 1 && half;
}

// Some operand read in the reduction has rows that are no whole 16-byte runs, so its tiles are filled element
// by element (no cp.async of 16 bytes); with `alongK`, one whose rows run along the reduction (its last index
// is k: A [m][k], or a transposed B [n][k]).
bool scalarFills(Kernel& k, bool alongK = false) {
  std::vector<std::string> outer = outerChain(k);
  for (const std::string& b : inputsReadIn(k, "k"))
    if (!rowsOf16Bytes(*k.findBuffer(b)) && (!alongK || (!outer.empty() && indexUses(k, outer.front(), b, "k", false)))) return true;
  return false;
}

// Hopper's warpgroup MMA where the tiles divide N and K: 128 x 256 blocks (or 128 x 128), two warpgroups
// of 64 x block_n each, 64-deep k steps in as many 48 KiB stages as fit a block's shared memory beside the
// output tile, which goes through shared memory for a single 16-bit output. On the H200 at 4096^3 bf16
// (bench/results/2026-12-03-wgmma): 4 stages 0.342 ms, 3 stages 0.346, 128 x 128 blocks 0.364, 3 stages with
// the output tile through shared memory 0.315; the mma form's defaults 0.427.
void wgmmaDefaults(Kernel& k, int64_t M, int64_t N, int64_t K, TemplateParams& p) {
  // One k step (K = 64) leaves nothing to pipeline: attention's scores gemm (2048 x 2048 x 64 a head) took
  // 8.72 ms in the wgmma form against 3.31 in the mma form's defaults on the H200, so it keeps those.
  // M need not divide (ViT's 6304 token rows: 50 blocks of 128, the last with 32 rows): the rows past it are
  // computed and not stored.
  if (M < 128 || N % 128 != 0 || K % 64 != 0 || K < 128) return;
  int64_t bn = N % 256 == 0 ? 256 : 128;
  p["wgmma"] = 1;
  p["tma"] = 1;
  p["mma"] = 1;
  p["block_m"] = 128;
  p["block_n"] = bn;
  p["warp_n"] = bn;
  p["block_k"] = 64;
  p["pad"] = 0;
  p["store_tile"] = oneSixteenBitOutput(k) ? 1 : 0;
  int64_t perStage = (128 + bn) * 64 * 2, outputTile = p["store_tile"] ? 128 * bn * 2 : 0;
  p["stages"] = std::clamp<int64_t>((kSharedBytesLimit - outputTile) / perStage, 1, std::min<int64_t>(4, K / 64));
}

// The tf32 mma form's row paddings by the bank model (kernel/shared_banks.h): pad for A's tile, least
// wavefronts and least padding, then pad_b for B's on top of it. A's rows are block_k deep where its last index
// is k, else block_m wide; B's block_k where its last index is k (transposed), else block_n.
void padByBanks(Kernel& k, TemplateParams& p) {
  std::vector<std::string> outer = outerChain(k);
  if (outer.size() < 2) return;
  auto layout = [&](bool a) -> std::optional<std::pair<bool, int64_t>> {
    const std::string& along = a ? outer[outer.size() - 2] : outer.back();
    for (const std::string& b : inputsReadIn(k, "k")) {
      if (!(indexUses(k, outer.front(), b, along, true) || indexUses(k, outer.front(), b, along, false))) continue;
      const bool depthAlongRow = indexUses(k, outer.front(), b, "k", false);
      return std::make_pair(depthAlongRow, depthAlongRow ? p["block_k"] : p[a ? "block_m" : "block_n"]);
    }
    return std::nullopt;
  };
  auto leastWaves = [](bool a, std::pair<bool, int64_t> rows, int64_t base) {
    int64_t best = 0;
    for (int64_t pad : {4, 8, 12})
      if (tf32OperandWavefronts(a, rows.first, rows.second + base + pad) <
          tf32OperandWavefronts(a, rows.first, rows.second + base + best) - 1e-9)
        best = pad;
    return best;
  };
  auto a = layout(true), b = layout(false);
  if (!a || !b) return;
  p["pad"] = leastWaves(true, *a, 0);
  p["pad_b"] = leastWaves(false, *b, p["pad"]);
}

// 16 x 16 threads, each a (block_m / 16) x (block_n / 16) micro-tile; or, for 16-bit operands, warps of up
// to 64 x 64 on the tensor cores.
TemplateParams gemmDefaults(Kernel& k) {
  std::vector<std::string> outer = outerChain(k);
  int64_t n = chainExtent(k, outer);
  int64_t M = outer.size() >= 2 ? extentOf(k, outer[outer.size() - 2]) : 1;
  int64_t N = outer.empty() ? 1 : extentOf(k, outer.back());
  int64_t K = extentOf(k, "k");
  // The CUDA-core form wants two blocks an SM: GPT-2's second MLP matmul (2048 x 3072 x 768, f32) ran 0.361 ms in
  // 192 blocks of 128 x 64 and 0.275 in 768 of 64 x 64 (H100), as fast as the first (K = 768) in 384 of 128².
  const bool tensorCores = (sixteenBitOperands(k) && K >= 16) || (k.allowTf32 && operandsOf(k, "k", {DType::F32}) && K >= 8);
  auto [bm, bn] = pickBlockTile(M, N, n / std::max<int64_t>(1, M * N), tensorCores ? kDefaultSms : 2 * kDefaultSms);
  TemplateParams p = {{"block_m", bm}, {"block_n", bn}, {"block_k", pickDividing({4, 8, 16}, K, 16)},
                      {"warp_m", 0}, {"warp_n", 0}, {"thread_m", std::max<int64_t>(1, bm / 16)},
                      {"thread_n", std::max<int64_t>(1, bn / 16)}, {"column_run", 1}, {"shared", 1}, {"mma", 0}, {"tf32", 0},
                      {"ldmatrix", 1}, {"pad", 0}, {"pad_b", 0}, {"store_tile", 0}, {"split_k", 0}};
  // A K that 16 does not divide (ViT's attention · V: 197 keys) takes the tensor cores too: the last step's
  // fragments are zeroed past K (docs/codegen.md, Tensor cores).
  if (sixteenBitOperands(k) && bm >= 16 && bn >= 16 && K >= 16) {
    p["mma"] = 1;
    p["block_k"] = K >= 32 && (K % 32 == 0 || K % 16 != 0) ? 32 : 16;
    // Scalar fills take most of the time, so more warps share them: on the H200, ViT's attention · V (384 x
    // 197 x 64 x 197 bf16, P's rows along k) 0.409 ms with 64 x 64 warp tiles and 32-deep steps, 0.200 with
    // 32 x 32, 0.109 with 32 x 32 and 16-deep steps; its scores (197 x 197 x 64, Kᵀ's rows along n) 0.209 ->
    // 0.107 with 32 x 32 and no output tile, 0.138 with 16-deep steps as well.
    bool scalar = scalarFills(k);
    int64_t warp = scalar ? 32 : 64;
    p["warp_m"] = std::min<int64_t>(warp, bm);
    p["warp_n"] = std::min<int64_t>(warp, bn);
    if (scalar && scalarFills(k, /*alongK=*/true)) p["block_k"] = 16;
    // Measured on the H200 at 4096^3 bf16 (2 stages): ldmatrix 1, unpadded 139.9 TFLOP/s; padded 295.1; B's
    // n-tiles in pairs and padded 299.7 (bench/results/2026-11-29/s3_final).
    p["ldmatrix"] = 2;
    p["pad"] = 8;
    // The output tile through shared memory (16-byte stores; 32 KiB more shared memory for 128 x 128 bf16, past
    // the 48 KiB budget of the operand tiles, in the dynamic arena). On the H200: attention's scores gemm 7.88 ->
    // 3.31 ms, the bf16 gemm 4096^3 0.458 -> 0.424 ms, attention's context gemm 1.91 -> 1.86 ms.
    p["store_tile"] = oneSixteenBitOutput(k) ? 1 : 0;
  }
  // f32 operands where the policy allows tf32 (Kernel::allowTf32: a 1 x 1 conv lowered as a gemm under PyTorch's
  // defaults, any matmul under "all"): the mma form's m16n8k8 with the one tf32 schedule measured on the H200,
  // 64 x 64 warp tiles, 16-deep k steps, unpadded rows, 2 stages: 95.8 TFLOP/s at 4096³ (docs/performance.md;
  // exact f32 ran 38.2). Rounded to nearest (tf32 = 1): truncated operands (2) ran up to 9 % faster but put
  // ResNet-50's output 1.9e-2 from PyTorch's instead of 4.4e-4 (bench/results/2026-12-07-tf32-trunc).
  if (k.allowTf32 && operandsOf(k, "k", {DType::F32}) && bm >= 16 && bn >= 16 && K >= 8) {
    p["mma"] = 1;
    p["tf32"] = 1;
    p["block_k"] = K >= 16 ? 16 : 8;
    p["warp_m"] = std::min<int64_t>(64, bm);
    p["warp_n"] = std::min<int64_t>(64, bn);
    // A short reduction (ResNet-50's 1 x 1 convs from 64 channels) is over in four steps: twice the blocks of
    // half the columns, warps of 64 x 32, keep more of them in flight. On the H100, 64 -> 256 channels over 56²
    // at batch 32: 0.1468 -> 0.1048 ms (warps of 32 x 32 in 128² blocks 0.1289; 64-deep steps 0.1378;
    // bench/results/2026-12-07-conv-banks).
    if (K <= 64 && bn >= 128 && bm >= 64) {
      p["block_n"] = 64;
      p["warp_n"] = 32;
    }
    // A long reduction in 32-deep steps, its two stages past 48 KiB, where the grid fills the SMs unsplit in
    // blocks of 4096 outputs or more (smaller ones were shrunk to fill the SMs, as at batch 1, where the split-K
    // default, which counts steps, was measured with 16-deep ones). On the H200 at batch 32, ResNet-50's 1 x 1
    // convs (padded tiles): 1024 -> 256 channels over 14² 0.0896 -> 0.0566 ms, 2048 -> 512 over 7² 0.0936 ->
    // 0.0781, 256 -> 64 over 56² 0.0635 -> 0.0608 (bench/results/2026-12-07-peers).
    const int64_t blocks = (n / std::max<int64_t>(1, M * N)) * ((M + p["block_m"] - 1) / p["block_m"]) * ((N + p["block_n"] - 1) / p["block_n"]);
    if (K >= 256 && K % 32 == 0 && blocks >= kDefaultSms && p["block_m"] * p["block_n"] >= 4096) p["block_k"] = 32;
    padByBanks(k, p);
  }
  // The CUDA-core form's columns in runs of 4 where a thread has whole runs: B's shared row read 16 bytes at a time.
  // On the H100 at 4096^3 f32 (bench/results/2026-12-06-gpu-fgemm): 3.598 -> 3.363 ms (runs of 2: 3.429).
  if (!p["mma"] && p["thread_n"] % 4 == 0) p["column_run"] = 4;
  // Its k steps 64 deep where K holds two of them (else 32 deep where it holds two of those), the two stages in
  // up to 128 KiB (past the defaults' 48 KiB for 128 x 128 tiles). On the H100: 16 -> 32 deep, 4096^3 3.363 ->
  // 3.183 ms, GPT-2's MLP matmuls 0.267 -> 0.254 and 0.304 -> 0.288, 2048^3 0.497 -> 0.478 (three stages lost 1-2
  // % on each; bench/results/2026-12-06-gpu-fgemm); 32 -> 64 deep, faster on all eight shapes measured
  // (bench/results/2026-12-07-h100-gemm64): 4096^3 3.154 -> 3.010 ms, the MLP matmuls 0.248 -> 0.238 and 0.285 ->
  // 0.284, 2048^3 0.474 -> 0.460, 1024^3 0.0875 -> 0.0859, 8192 x 1024 x 1024 0.657 -> 0.651, 1024 x 4096 x 4096
  // 0.863 -> 0.836, 1024 x 1024 x 8192 0.619 -> 0.602.
  const bool coreForm = !p["mma"] && p["shared"];
  if (coreForm && K % 64 == 0 && K >= 128) p["block_k"] = 64;
  else if (coreForm && K % 32 == 0 && K >= 64) p["block_k"] = 32;
  const bool deepTf32 = p["tf32"] && p["block_k"] == 32;
  p["stages"] = pickStages(k, p, coreForm || deepTf32 ? kCoreSharedBytes : kDefaultSharedBytes);
  p["wgmma"] = 0;
  p["tma"] = 0;
  if (sixteenBitOperands(k)) wgmmaDefaults(k, M, N, K, p);
  return p;
}

}  // namespace

const TemplateDef& gemmTemplate() {
  static const TemplateDef def = {
      gemm,
      {{"block_m", {16, 32, 64, 128}, "rows of the output tile of one block"},
       {"block_n", {16, 32, 64, 128, 256}, "columns of the output tile of one block"},
       {"block_k", {4, 8, 16, 32, 64}, "depth of one step of the reduction (unrolled; 64 with 3 stages of bf16 128 x 128 tiles, 107 KiB of shared memory, ran 7% faster than the default at 4096^3 on the H200)"},
       {"warp_m", {0, 16, 32, 64}, "rows of the tile of one warp (0: no warp level)"},
       {"warp_n", {0, 16, 32, 64, 128, 256}, "columns of the tile of one warp (0: no warp level); with wgmma = 1, of one warpgroup"},
       {"thread_m", {1, 2, 4, 8}, "rows each thread computes (unrolled)"},
       {"thread_n", {1, 2, 4, 8}, "columns each thread computes (unrolled)"},
       {"column_run", {1, 2, 4}, "shared = 1: a thread's columns in runs of this many consecutive ones (4: one 16-byte shared load reads four f32 columns of B; 1: a thread apart)"},
       {"shared", {0, 1}, "stage A and B tiles in shared memory at the k-outer loop, accumulators in registers"},
       {"mma", {0, 1}, "tensor cores (f16/bf16 operands, or f32 with tf32 = 1): warp tiles of 16 x 8 mma.sync tiles; thread_m/n unused"},
       {"stages", {1, 2, 3, 4}, "k tiles in flight (shared = 1): the k-outer loop pipelined with cp.async into up to that many shared copies (1: off)"},
       {"tf32", {0, 1, 2, 3}, "with mma = 1 on f32 operands: the tensor cores on tf32 (10-bit mantissa), each operand rounded to nearest (1), truncated (2: no conversion instruction) or rounded by an integer add (3)", true},
       {"ldmatrix", {0, 1, 2}, "with mma = 1 on 16-bit operands: a warp's fragments loaded once per k step, by ldmatrix where the shared tile's layout allows (0: scalar loads per tile; 2: B's n-tiles in pairs, one ldmatrix .x4 a pair)"},
       {"pad", {0, 4, 8, 12}, "with mma = 1: elements added to each row of the shared A and B tiles (8: the 8 rows an ldmatrix reads fall in distinct banks; 16-bit tiles by multiples of 8)"},
       {"pad_b", {0, 4, 8, 12}, "with mma = 1: elements added to each row of B's shared tile besides pad (tf32 fragments read A and B at different strides)"},
       {"store_tile", {0, 1}, "with mma = 1: write the block's output tile through shared memory, 16 contiguous bytes a thread (1), or from the accumulators, 2 elements a lane (0)"},
       {"split_k", {0, 1, 2, 4, 8, 16}, "shared or mma forms (not wgmma, not store_tile): blocks sharing one tile's reduction (split-K), their partial sums added by a second phase; 0 (the default): the template's choice, for K of 64 steps or more the fewest parts giving 4 blocks an SM (measured on ResNet-50's gemms), else 1"},
       {"tma", {0, 1}, "with wgmma = 1 and stages > 1: the operand tiles are filled by the tensor memory accelerator, one thread issuing a bulk tensor copy per 64 columns and an mbarrier per stage, instead of every thread's cp.async"},
       {"wgmma", {0, 1}, "with mma = 1 on 16-bit operands (Hopper, sm_90a): four warps of 16 rows are a warpgroup computing a 64 x warp_n tile, one wgmma per 16-deep step from 128-byte-swizzled shared tiles (block_m a multiple of 64, block_k of 64; warp_m unused)"}},
      gemmDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
