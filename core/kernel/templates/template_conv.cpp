#include "kernel/templates/template_util.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "kernel/launch.h"
#include "kernel/shared_banks.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::templ {
namespace {


// Conv and pool (gemm = 0): (n, channel, spatial...) with the spatial loops fused over the threads of a
// block; each thread loops over its output's whole window, reading input and weights from global memory.
void windowed(TracedSchedule& s, const TemplateParams& p) {
  std::vector<std::string> loops = outerChain(s.kernel());
  if (loops.empty()) return;
  if (loops.size() < 3) {  // a window over fewer axes (CumSum's running sum of a [B, L] tensor): elements over threads
    auto [b, t] = splitBy(s, fuseAll(s, loops), p.at("threads"));
    s.bind(t.empty() ? b : t, ThreadTag::ThreadX);
    if (!t.empty()) s.bind(b, ThreadTag::BlockX);
    return;
  }
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

// Calls f on every load inside `loop` (none when there is no such loop).
void forEachLoadIn(Kernel& k, const std::string& loop, const std::function<void(const Load&)>& f) {
  auto site = detail::findLoop(k, loop);
  if (!site) return;
  walk(site->loop->body, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind == ExprKind::Load) f(static_cast<const Load&>(x));
      });
      return e;
    });
  });
}

// Some load inside `loop` indexes with a division or remainder (a grouped conv's input channel).
bool dividedIndexIn(Kernel& k, const std::string& loop) {
  bool found = false;
  forEachLoadIn(k, loop, [&](const Load& ld) {
    for (const Expr& i : ld.indices)
      walkExpr(i, [&](const ExprNode& y) {
        auto op = y.kind == ExprKind::Binary ? static_cast<const Binary&>(y).op : BinaryOp::Add;
        found |= op == BinaryOp::Div || op == BinaryOp::Mod;
      });
  });
  return found;
}

// A shared tile's padding (cache_read pad, pad_rows): elements added to each row, rows added to each plane.
struct CachePadding {
  int64_t row = 0, rows = 0;
};

// The halo's fill with its columns on the lanes (threadIdx.x, in runs of 32, the last guarded) and its planes and
// rows fused over the other threads: no element's position is divided out of one flat index.
void bindHaloByRows(TracedSchedule& s, const std::vector<std::string>& fillLoops, const ThreadDims& dims) {
  auto cols = splitBy(s, fillLoops.back(), 32);
  std::vector<std::string> outer(fillLoops.begin(), fillLoops.end() - 1);
  if (!cols.second.empty()) outer.push_back(cols.first);
  s.bind(cols.second.empty() ? cols.first : cols.second, ThreadTag::ThreadX);
  bindFill(s, outer, ThreadDims(dims.begin() + 1, dims.end()));
}

// Stages the input and the weights read inside `ko` in shared memory, filled by the block's threads, each
// cache padded by padOf(operand), the input's halo with its columns on the lanes where `haloByRows`;
// refused naming block_k when the tiles do not fit in a block's shared memory (kSharedBytesLimit). Returns the
// input's cache (the halo).
std::string stageInShared(TracedSchedule& s, const std::string& ko, const ThreadDims& dims,
                   const std::function<CachePadding(const std::string&)>& padOf, bool haloByRows = false,
                   bool haloRuns = false) {
  Kernel& k = s.kernel();
  std::string halo;
  try {
    const std::string input = k.buffers.front().name;
    for (const std::string& operand : inputsReadIn(k, ko)) {
      const CachePadding pad = padOf(operand);
      const bool runs = operand == input && haloRuns;
      const int64_t runLanes = 16 / int64_t(dtypeSize(k.findBuffer(operand)->dtype));
      auto fill = s.cacheRead(ko, operand, MemScope::Shared, pad.row, pad.rows, runs ? runLanes : 0);
      if (operand == input) halo = fill[0];
      // The weights' tile is whole rows of consecutive elements (block_k channels x the window, per output
      // channel): runs of 16 bytes a thread, which the pipelined fill copies with one cp.async each; so is a
      // halo aligned to 16-byte runs (halo_runs).
      int64_t lanes = operand == input && !runs ? 1 : runLanes;
      std::vector<std::string> loops(fill.begin() + 1, fill.end());
      if (operand == input && haloByRows) bindHaloByRows(s, loops, dims);
      else bindFill(s, loops, dims, lanes);
    }
  } catch (const ScheduleError& e) {
    rejectParams(k, "conv", "block_k", std::string("the shared tiles do not fit: ") + e.what());
  }
  if (sharedBytesPerBlock(k) > kSharedBytesLimit)
    rejectParams(k, "conv", "block_k", "the input and weight tiles need " + std::to_string(sharedBytesPerBlock(k)) +
                                           " bytes of shared memory (limit " + sharedLimitText() + ")");
  return halo;
}


// gemm = 1: the conv as a GEMM with M = output pixels (n, oh, ow), N = output channels, K = ic x kh x kw.
// A block computes a tile_h x tile_w pixel tile of block_n channels (blockIdx.x: the pixel tiles, y: the
// channel tiles, z: n). Each step of the k-outer loop (block_k input channels with all their taps, hoisted
// out to the block) stages the input's halo box and the weights' block_n x block_k x kh x kw tile in shared
// memory, and each thread accumulates thread_m rows (a thread row apart) x thread_n channels (a channel
// thread apart) in registers: threadIdx.x runs along ow (coalesced stores, consecutive shared reads),
// threadIdx.y over the row groups, threadIdx.z over the channel groups (one weight read serves a warp).
// cache_read moves the padding select into the input's fill (0 outside the input): one fma per tap.
void implicitGemm(TracedSchedule& s, const TemplateParams& p) {
  Kernel& k = s.kernel();
  if (!plainConv2d(k)) rejectParams(k, "conv", "gemm", "the implicit-GEMM form needs a 2-D convolution without groups: set gemm = 0");
  std::vector<std::string> loops = outerChain(k);  // n, oc, oh, ow
  int64_t bn = std::min(p.at("block_n"), extentOf(k, loops[1]));
  int64_t th = std::min(p.at("tile_h"), extentOf(k, loops[2])), tw = std::min(p.at("tile_w"), extentOf(k, loops[3]));
  int64_t tm = std::min(p.at("thread_m"), th), tn = std::min(p.at("thread_n"), bn);
  int64_t rowThreads = (th + tm - 1) / tm, channelThreads = (bn + tn - 1) / tn;
  if (channelThreads > 64)
    rejectParams(k, "conv", "thread_n", std::to_string(channelThreads) + " channel threads exceed threadIdx.z's 64");
  if (tw * rowThreads * channelThreads > 1024)
    rejectParams(k, "conv", "thread_m", "a block of " + std::to_string(tw * rowThreads * channelThreads) + " threads exceeds 1024");
  if (bn * th * tw > 16384)
    rejectParams(k, "conv", "tile_h", "a block tile of " + std::to_string(bn * th * tw) + " outputs exceeds 16384 accumulators");
  auto t = s.tile({loops[1], loops[2], loops[3]}, {bn, th, tw});  // oc_o, oh_o, ow_o, oc_i, oh_i, ow_i
  s.bind(loops[0], ThreadTag::BlockZ);
  s.bind(t[0], ThreadTag::BlockY);
  std::string pixels = s.fuse(t[1], t[2]);
  s.bind(pixels, ThreadTag::BlockX);
  auto [ni, tz] = splitBy(s, t[3], channelThreads);
  auto [mi, ty] = splitBy(s, t[4], rowThreads);
  std::string tx = t[5];
  std::vector<std::string> order;
  for (const std::string& l : {tz, ty, tx, mi, ni})
    if (!l.empty()) order.push_back(l);
  s.reorder(order);
  if (!tz.empty()) s.bind(tz, ThreadTag::ThreadZ);
  if (!ty.empty()) s.bind(ty, ThreadTag::ThreadY);
  s.bind(tx, ThreadTag::ThreadX);
  s.unroll(mi);
  s.unroll(ni);
  auto [ko, ki] = splitBy(s, "ic", p.at("block_k"));
  s.hoistReduction(ko, pixels);
  std::vector<std::string> inner;  // the reduction steps of one tile, then the micro-tile
  for (const std::string& l : {ki, std::string("kh"), std::string("kw"), mi, ni})
    if (!l.empty()) inner.push_back(l);
  s.reorder(inner);
  for (size_t i = 0; i + 2 < inner.size(); ++i)
    if (extentOf(k, inner[i]) <= 16) s.unroll(inner[i]);
  ThreadDims dims = {{tw, ThreadTag::ThreadX}, {rowThreads, ThreadTag::ThreadY}, {channelThreads, ThreadTag::ThreadZ}};
  // Named copies: clang 14 (the fuzz preset's compiler) cannot capture structured bindings in a lambda.
  const std::string outer = ko, inner0 = ki;
  stageInShared(s, ko, dims, [&](const std::string& operand) {
    // An NHWC input's cache rows are channels: the threads of a warp (along ow) read a row apart, so a
    // row of block_k floats would put them in few banks; one element of padding spreads them.
    return CachePadding{!inner0.empty() && indexUses(k, outer, operand, inner0, false) ? 1 : 0, 0};
  });
  splitKOuter(s, ko, p, "conv");
  pipelineStages(s, ko, p);
}

// The window's step along input axis `axis` per unit of output loop `out` and of tap loop `tap` (stride,
// dilation), from the input's reads; nullopt where a read's index there is not affine in them.
std::optional<std::pair<int64_t, int64_t>> windowSteps(Kernel& k, size_t axis, const std::string& out, const std::string& tap) {
  std::pair<int64_t, int64_t> steps = {0, 0};
  for (const auto& idx : detail::loadsOf(k.body, k.buffers.front().name)) {
    auto a = idx.size() == 4 ? detail::affine(idx[axis], {out, tap}) : std::nullopt;
    if (!a || !a->coef.count(out) || !a->coef.count(tap)) return std::nullopt;
    steps = {a->coef.at(out), a->coef.at(tap)};
  }
  if (steps.first <= 0 || steps.second <= 0) return std::nullopt;
  return steps;
}

// The input columns the window moves per output column (the conv's stride along them); nullopt where unknown.
std::optional<int64_t> columnStrideOf(Kernel& k) {
  auto cols = windowSteps(k, 3, outerChain(k)[3], "kw");
  return cols ? std::optional<int64_t>(cols->first) : std::nullopt;
}

// The mma form's conditions, refused with the parameter at fault (tf32 = 1 is the f32 operands' form).
void checkConvMma(Kernel& k, const TemplateParams& p, int64_t pixels, int64_t bn) {
  checkTf32(k, "conv", p, "ic");
  bool tf32 = p.at("tf32") != 0;
  if (!tf32 && !operandsOf(k, "ic", {DType::F16, DType::BF16}))
    rejectParams(k, "conv", "mma", "tensor cores need f16 or bf16 operands, or f32 ones with tf32 = 1");
  int64_t wm = p.at("warp_m"), wn = p.at("warp_n"), depth = tf32 ? 8 : 16;
  if (wm < 16 || (wm % 16 != 0 && wm != pixels) || pixels % wm != 0)
    rejectParams(k, "conv", "warp_m", "the mma form needs warp_m a multiple of 16 dividing the " + std::to_string(pixels) +
                                          " pixels of a tile, or all of them");
  if (wn == 0 || wn % 8 != 0 || bn % wn != 0)
    rejectParams(k, "conv", "warp_n", "the mma form needs warp_n a multiple of 8 dividing block_n = " + std::to_string(bn));
  if (p.at("tap_depth") && extentOf(k, "ic") % p.at("block_k") != 0)
    rejectParams(k, "conv", "block_k", "block_k must divide the " + std::to_string(extentOf(k, "ic")) + " input channels");
  if (!p.at("tap_depth") && (p.at("block_k") % depth != 0 || extentOf(k, "ic") % p.at("block_k") != 0))
    rejectParams(k, "conv", "block_k", "the mma form needs block_k a multiple of " + std::to_string(depth) +
                                           " dividing the " + std::to_string(extentOf(k, "ic")) + " input channels" +
                                           " (or tap_depth = 1: the depth along the window's columns)");
  if ((pixels / wm) * (bn / wn) > 32) rejectParams(k, "conv", "warp_m", "more than 32 warps in a block");
}

// mma = 1: the implicit GEMM on the tensor cores. M = a block's tile_h x tile_w output pixels of one image
// (fused), N = block_n output channels, K = block_k input channels with all the window's taps per step of the
// k-outer loop. Warps of warp_m pixels x warp_n channels (threadIdx.z, threadIdx.y), each as 16 x 8 mma tiles
// bound to the lanes (rows: pixels, columns: channels); inside a k tile the taps run outermost, then the
// channels in mma-deep steps. With tap_depth = 1 the mma's depth runs along the window's columns instead (kw
// in mma-deep steps, the last masked: MmaTile::depthGuards) inside the channels and rows, for convs with
// fewer input channels than a step (an image's 3: ResNet's 7 x 7 stem uses 7 of each 8 products, channel
// steps would use 3). A pixel tile overhanging the output (7 x 7 images in 8 x 8 tiles) reads the
// zero-filled halo: its guard stays on the stores, and the code generator computes the overhanging rows of an
// mma tile with the rest (docs/codegen.md, Tensor cores).
void implicitGemmMma(TracedSchedule& s, const TemplateParams& p) {
  Kernel& k = s.kernel();
  if (!plainConv2d(k)) rejectParams(k, "conv", "mma", "the mma form needs a 2-D convolution without groups: set mma = 0");
  std::vector<std::string> loops = outerChain(k);  // n, oc, oh, ow
  int64_t bn = std::min(p.at("block_n"), extentOf(k, loops[1]));
  int64_t th = p.at("tile_h"), tw = p.at("tile_w");
  checkConvMma(k, p, th * tw, bn);
  const std::optional<int64_t> columnStride = columnStrideOf(k);
  int64_t wm = p.at("warp_m"), wn = p.at("warp_n");
  auto t = s.tile({loops[1], loops[2], loops[3]}, {bn, th, tw});  // oc_o, oh_o, ow_o, oc_i, oh_i, ow_i
  s.bind(loops[0], ThreadTag::BlockZ);
  s.bind(t[0], ThreadTag::BlockY);
  std::string tiles = s.fuse(t[1], t[2]);
  s.bind(tiles, ThreadTag::BlockX);
  std::string pixels = s.fuse(t[4], t[5]);
  auto w = s.tile({t[3], pixels}, {wn, wm});  // oc_w, pix_w, oc_r, pix_r
  s.bind(w[0], ThreadTag::ThreadY);
  s.bind(w[1], ThreadTag::ThreadZ);
  auto cols = s.split(w[2], 8);   // n-tiles, columns of one mma tile
  auto rows = s.split(w[3], std::min<int64_t>(16, wm));  // m-tiles, rows of one mma tile
  s.reorder({rows[0], cols[0], rows[1], cols[1]});
  s.unroll(rows[0]);
  s.unroll(cols[0]);
  s.bind(rows[1], ThreadTag::MmaRow);
  s.bind(cols[1], ThreadTag::MmaCol);
  auto [ko, ki] = splitBy(s, "ic", p.at("block_k"));
  s.hoistReduction(ko, tiles);
  int64_t depth = p.at("tf32") ? 8 : 16;
  std::vector<std::string> order;
  std::string mmaDepth;
  if (p.at("tap_depth")) {
    auto taps = s.split("kw", depth);  // one overhanging step where kw < depth: guarded, masked in the fragments
    for (const std::string& l : {ki, std::string("kh"), taps[0]})
      if (!l.empty()) order.push_back(l);
    mmaDepth = taps[1];
  } else {
    order = {"kh", "kw"};
    mmaDepth = ki;
    if (extentOf(k, ki) > depth) {
      auto steps = s.split(ki, depth);
      order.push_back(steps[0]);
      mmaDepth = steps[1];
    }
  }
  for (const std::string& l : {rows[0], cols[0], rows[1], cols[1], mmaDepth}) order.push_back(l);
  s.reorder(order);
  for (const std::string& l : order)
    if (l != rows[0] && l != cols[0] && l != rows[1] && l != cols[1]) s.unroll(l);
  ThreadDims dims = {{32, ThreadTag::ThreadX}, {bn / wn, ThreadTag::ThreadY}, {th * tw / wm, ThreadTag::ThreadZ}};
  const std::string input = k.buffers.front().name;  // the conv's data input; the weights get no padding
  const std::string halo = stageInShared(s, ko, dims, [&](const std::string& operand) {
    return operand == input ? CachePadding{p.at("pad"), p.at("pad_rows")} : CachePadding{};
  }, p.at("halo_rows") != 0, p.at("halo_runs") != 0);
  if (p.at("deinterleave")) {
    if (p.at("halo_runs"))
      rejectParams(k, "conv", "halo_runs", "deinterleave stores the halo's columns by phase: its 16-byte runs would not stay together");
    if (!columnStride || *columnStride < 2)
      rejectParams(k, "conv", "deinterleave", "storing the halo's columns by phase needs a conv strided along its columns");
    s.deinterleave(halo, *columnStride);
  }
  splitKOuter(s, ko, p, "conv");
  // The halo's zero fill is a cp.async reading 0 bytes: the tiles of the next k steps load during this one's.
  pipelineStages(s, ko, p);
}

void conv(TracedSchedule& s, const TemplateParams& p) {
  if (p.at("mma")) return implicitGemmMma(s, p);
  if (p.at("gemm")) return implicitGemm(s, p);
  if (splitKParam(p) > 1) rejectParams(s.kernel(), "conv", "split_k", "split-K needs the implicit-GEMM forms: set gemm = 1 or mma = 1");
  windowed(s, p);
}

TemplateParams windowedDefaults(Kernel&) { return {{"threads", 128}, {"unroll_window", 1}}; }

// Whether the template applies with `p` (its tiles within shared memory and the thread limits); the kernel
// it schedules into `scheduled` when given.
// Some loop of the scheduled kernel runs software-pipelined.
bool pipelined(const Kernel& k) {
  bool found = false;
  walk(k.body, [&](StmtNode& n) {
    found |= n.kind == StmtKind::For && static_cast<ForStmt&>(n).h.pipelineStages > 1;
  });
  return found;
}

// A k loop that would lose its pipeline within the defaults' 48 KiB may take up to this much: ResNet-50's
// stride-2 3 x 3 convs at batch 32 (tf32), whose halos are twice as wide, ran 3.1-3.7x faster with two stages in
// 57-81 KiB than unpipelined in 48 (H100, 2026-12-05: 0.98 -> 0.26 ms over 56², 0.80 -> 0.26 over 28², 1.06 ->
// 0.32 over 14²); where 48 KiB already pipelines, more made the conv slower (fewer blocks an SM, 2026-12-02).
constexpr int64_t kPipelinedSharedBytes = 96 * 1024;

// Whether the template applies with `p` within `budget` bytes of shared memory (by default the defaults' budget,
// template_util.h), lowering p's stages until the block's copies fit it, as pipelineStages does within the
// hardware's limit.
bool applies(Kernel& k, TemplateParams& p, Kernel* scheduled = nullptr, int64_t budget = kDefaultSharedBytes) {
  for (;;) {
    Kernel trial = k.clone();
    TracedSchedule s(trial);
    try {
      conv(s, p);
    } catch (const ScheduleError&) {
      return false;
    }
    if (sharedBytesPerBlock(trial) <= budget) {
      if (scheduled) *scheduled = std::move(trial);
      return true;
    }
    if (!pipelined(trial)) return false;  // fewer stages would not make it smaller
    p["stages"] -= 1;
  }
}

// Large windows (11 x 11 at stride 4) or wide inputs make the default tiles' halo and weights exceed the
// defaults' budget of shared memory (48 KiB):
// fewer input channels per step, then fewer rows per block, until they fit; false when nothing does.
bool fitShared(Kernel& k, TemplateParams& p) {
  for (int64_t th = p.at("tile_h"); th >= 1; th /= 2)
    for (int64_t bk : {int64_t(8), int64_t(4), int64_t(2), int64_t(1)}) {
      p["tile_h"] = th;
      p["block_k"] = bk;
      p["thread_m"] = std::min<int64_t>(4, th);
      if (applies(k, p)) return true;
    }
  return false;
}

// Smaller tiles until every SM of an H200 (132) gets a block: fewer channels (down to 32), then fewer rows (down
// to 2), then 16 channels. ResNet's 4 x 64 x 28 x 28 conv ran 32 blocks of 8 x 14 x 64 at 0.17 ms, slower than
// the window form (0.065 ms).
void fillTheSms(Kernel& k, const std::vector<std::string>& loops, int64_t tw, int64_t& th, int64_t& bn) {
  auto blocks = [&] {
    auto tiles = [&](const std::string& l, int64_t t) { return (extentOf(k, l) + t - 1) / t; };
    return extentOf(k, loops[0]) * tiles(loops[1], bn) * tiles(loops[2], th) * tiles(loops[3], tw);
  };
  while (blocks() < kDefaultSms) {
    if (bn > 32) bn /= 2;
    else if (th > 2) th /= 2;
    else if (bn > 16) bn /= 2;
    else return;
  }
}

// Split-K's defaults: the fewest parts of the k loop (a power of 2 up to 16 dividing its `steps`) that give
// `target` blocks; if none does, the most that give every SM of an H200 (132) one; 0 when none does. The
// targets were measured on the H100 (2026-12-05), ResNet's 3 x 3 convs at batch 1 over 7² to 56² with every
// split: the mma form was fastest at 448-512 blocks (3 an SM), the CUDA-core form at 900-3600 (8 an SM
// keeps each within 1.12x of its best). Layer4's 512 channels over 7 x 7: 0.38 -> 0.040 ms (mma), 0.48 ->
// 0.073 ms (CUDA cores).
constexpr int64_t kMmaSplitBlocks = 3 * kDefaultSms, kCoreSplitBlocks = 8 * kDefaultSms;

int64_t partsToFill(int64_t blocks, int64_t steps, int64_t target) {
  int64_t most = 0;
  for (int64_t parts = 1; parts <= 16 && steps % parts == 0; parts *= 2) {
    if (blocks * parts >= target) return parts;
    if (blocks * parts >= kDefaultSms) most = parts;
  }
  return most;
}

// The CUDA-core implicit GEMM's split-K default: parts until kCoreSplitBlocks blocks (fewer blocks than that
// leave the SMs a few warps each: 128 blocks of 112 threads at batch 1 over 7 x 7).
void coreSplitDefault(Kernel& k, const std::vector<std::string>& loops, TemplateParams& p) {
  auto tiles = [&](const std::string& l, int64_t t) { return (extentOf(k, l) + t - 1) / t; };
  int64_t blocks = extentOf(k, loops[0]) * tiles(loops[1], p["block_n"]) * tiles(loops[2], p["tile_h"]) * tiles(loops[3], p["tile_w"]);
  if (blocks >= kCoreSplitBlocks) return;
  TemplateParams split = p;
  split["split_k"] = partsToFill(blocks, tiles("ic", p["block_k"]), kCoreSplitBlocks);
  if (split["split_k"] > 1 && applies(k, split)) p = split;
}

// The mma form's pixel tiles, best first: th x tw within the output, 49 to 128 pixels, the least work past
// the output's edges first (tiles overhanging them, and the last 16-row mma tile's unused rows), then the most
// pixels, then the smallest halo (squarer tiles: a 3 x 3 window's 8 x 14 tile reads 10 x 16 inputs, 2 x 56
// reads 4 x 58). 56 x 56 and 28 x 28 tile exactly (8 x 14, 4 x 28); 14 x 14 computes 14% more in 8 x 14
// tiles, 7 x 7 31% more as one 7 x 7 tile (4 mma tiles for its 49 pixels).
std::vector<std::pair<int64_t, int64_t>> pixelTiles(int64_t oh, int64_t ow) {
  struct Tile {
    int64_t th, tw;
    double waste;
  };
  std::vector<Tile> tiles;
  for (int64_t tw : {4, 7, 8, 14, 16, 28, 32, 56})
    for (int64_t th : {1, 2, 4, 7, 8, 14, 16}) {
      int64_t pixels = th * tw;
      if (th > oh || tw > ow || pixels < 49 || pixels > 128) continue;
      double computed = double((oh + th - 1) / th) * double((ow + tw - 1) / tw) * double((pixels + 15) / 16 * 16);
      tiles.push_back({th, tw, computed / double(oh * ow)});
    }
  std::stable_sort(tiles.begin(), tiles.end(), [](const Tile& a, const Tile& b) {
    if (std::abs(a.waste - b.waste) > 1e-9) return a.waste < b.waste;
    if (a.th * a.tw != b.th * b.tw) return a.th * a.tw > b.th * b.tw;
    return (a.th + 2) * (a.tw + 2) < (b.th + 2) * (b.tw + 2);
  });
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Tile& t : tiles) out.push_back({t.th, t.tw});
  return out;
}

// The conv steps one input row and column per output row and column (its reads' strides known and 1).
bool unstrided(Kernel& k) {
  std::vector<std::string> loops = outerChain(k);
  auto rows = windowSteps(k, 2, loops[2], "kh"), cols = windowSteps(k, 3, loops[3], "kw");
  return rows && cols && rows->first == 1 && cols->first == 1;
}

// How the mma defaults size a conv's blocks. A strided conv's halo is twice as wide and tall as an unstrided
// one's for the same outputs, so its blocks take 128 channels (the halo filled once for twice the work) in
// stages of one mma step (deeper ones lost on all three of ResNet-50's: deeperSteps), up to 128 KiB (two
// 8-channel stages of a 112-pixel tile, its halo padded by the bank model), and 128 blocks count as filling 132
// SMs. On the H100 at batch 32 (tf32), ResNet-50's stride-2 3 x 3 convs: 128 ch from 56² 0.2468 -> 0.1760 ms,
// 256 from 28² 0.2521 -> 0.2307, 512 from 14² (128 blocks) 0.3194 -> 0.2405
// (bench/results/2026-12-07-tf32-trunc).
struct BlockPlan {
  int64_t widestBlock;     // output channels a block starts from, halved to fill the SMs
  int64_t filledAt;        // blocks that count as filling the SMs (fewer: narrower blocks, then split-K)
  int64_t pipelinedBytes;  // shared memory the defaults may take to keep the k loop pipelined
  bool oneMmaStep;         // k steps of the mma's depth only
};
BlockPlan blockPlanOf(Kernel& k) {
  if (unstrided(k)) return {64, kDefaultSms, kPipelinedSharedBytes, false};
  return {128, kDefaultSms - kDefaultSms / 32, 128 * 1024, true};
}

// The halo tile's reads as the bank model takes them (kernel/shared_banks.h): its shape from the kernel as
// the template scheduled it, unpadded; nullopt for an input not stored channels first (NCHW).
std::optional<HaloReads> haloReads(Kernel& k, const Kernel& scheduled, int64_t th, int64_t tw, bool phased) {
  std::vector<std::string> loops = outerChain(k);
  auto rows = windowSteps(k, 2, loops[2], "kh"), cols = windowSteps(k, 3, loops[3], "kw");
  if (!rows || !cols) return std::nullopt;
  for (const Buffer& b : scheduled.buffers)
    if (b.scope == MemScope::Shared && b.cacheOf == scheduled.buffers.front().name && b.shape.size() == 4)
      return HaloReads{th, tw, b.shape[2] - b.cacheRowPad, b.shape[3] - b.cachePad, extentOf(k, "kh"), extentOf(k, "kw"),
                       rows->first, cols->first, rows->second, cols->second, int64_t(dtypeSize(b.dtype)),
                       phased ? cols->first : 1};
  return std::nullopt;
}

// A halo tile's padding and the wavefronts the bank model gives its fragment loads with it.
struct PaddingChoice {
  CachePadding pad;
  double wavefronts = 1.0;
};

// The input tile's padding (pad elements a row, pad_rows rows a plane, each up to 7) whose fragment reads the
// bank model puts in the fewest wavefronts, the least padding of those. ResNet-50's 3 x 3 convs over 56² and
// 14² (8 x 14 and 14 x 8 tiles: halos of 16 x 10 channels, 160 words apart, so the 4 channels of a fragment
// load share banks) take 4 wavefronts a load unpadded and at any row pad 2 or more, since 16 rows of any width
// are 0 or 16 words modulo 32; 4 rows more a plane (200 words) take 1. `scheduled` is the kernel as the
// template scheduled it without padding, its halo's columns stored by phase where `phased` (deinterleave).
std::optional<PaddingChoice> leastConflictedPadding(Kernel& k, const Kernel& scheduled, int64_t th, int64_t tw, bool phased) {
  std::optional<HaloReads> halo = haloReads(k, scheduled, th, tw, phased);
  if (!halo) return std::nullopt;
  PaddingChoice best{{}, haloFragmentWavefronts(*halo, 0, 0)};
  int64_t bestExtra = 0;
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t rows = 0; rows < 8; ++rows) {
      const double waves = haloFragmentWavefronts(*halo, row, rows);
      const int64_t extra = (halo->rows + rows) * (halo->cols + row) - halo->rows * halo->cols;
      if (waves < best.wavefronts - 1e-9 || (waves < best.wavefronts + 1e-9 && extra < bestExtra)) {
        best = {{row, rows}, waves};
        bestExtra = extra;
      }
    }
  return best;
}


// Warps of 32 channels instead of 16 (each A fragment serves twice the mma tiles: half the fragment loads) where
// the conv is unstrided and its tiles give 3 blocks an SM: measured on the H100 at batch 32 (tf32), ResNet-50's
// 3 x 3 convs over 56² (896 blocks) 0.1327 -> 0.1087 ms and over 28² (448) 0.1866 -> 0.1633; over 14² (256
// blocks: two warps an SM fewer) 0.1617 -> 0.1654, and the stride-2 ones, whose halos are twice as wide for half
// the threads to fill, 0.256 -> 0.420 (128 ch from 56²), 0.255 -> 0.350 (256 from 28²), 0.317 -> 0.426 (512
// from 14²) (bench/results/2026-12-07-conv-banks).
bool widerWarps(Kernel& k, int64_t blocks, int64_t bn) { return unstrided(k) && blocks >= kMmaSplitBlocks && bn % 32 == 0; }

// 16 input channels a k step instead of 8 where the grid already leaves each SM under 3 blocks (so the larger
// tiles cost no occupancy), the conv is unstrided and each warp holds 7 mma tiles or more of pixels (fragment
// loads enough a tap to pay for the wider weight fill): half the barriers and pipeline steps. On the H100 at
// batch 32 (tf32), ResNet-50's 3 x 3 conv over 14² (256 blocks, warps of 112 pixels): 0.1625 -> 0.1302 ms in
// 97 KiB; where a warp holds 4 (7² tiles: 0.212 -> 0.291) or the conv strides (0.256 -> 0.396, 0.255 -> 0.424,
// 0.319 -> 0.347) it lost, as 32 channels did on both unstrided ones (bench/results/2026-12-07-conv-banks).
void deeperSteps(Kernel& k, TemplateParams& p, int64_t blocks, int64_t& budget) {
  if (!unstrided(k) || blocks >= kMmaSplitBlocks || p["warp_m"] < 112 ||
      p["block_k"] != 8 || splitKParam(p) > 1 || extentOf(k, "ic") % 16 != 0)
    return;
  TemplateParams deeper = p;
  deeper["block_k"] = 16;
  deeper["stages"] = 2;
  Kernel check;
  if (applies(k, deeper, &check, kSharedBytesLimit) && pipelined(check)) {
    p = deeper;
    budget = kSharedBytesLimit;
  }
}

// The halo's padding by the bank model, and for a conv strided along its columns whether its columns are stored
// by phase (deinterleave, set in p): where that puts the fragment loads in fewer wavefronts. A stride-2 conv's
// lanes read every other column, so its 8 pixels of a fragment row span 16 words and its 4 channels cannot all
// fall in distinct banks (2 wavefronts a load at any padding); by phase they read 8 consecutive words.
CachePadding phasedAndPadded(Kernel& k, TemplateParams& p, const Kernel& scheduled, int64_t th, int64_t tw, int64_t budget) {
  std::optional<PaddingChoice> plain = leastConflictedPadding(k, scheduled, th, tw, false);
  if (!plain) return {};
  TemplateParams phased = p;
  phased["deinterleave"] = 1;
  Kernel check;
  const std::optional<int64_t> stride = columnStrideOf(k);
  if (!stride || *stride < 2 || !applies(k, phased, &check, budget)) return plain->pad;
  std::optional<PaddingChoice> byPhase = leastConflictedPadding(k, check, th, tw, true);
  if (!byPhase || byPhase->wavefronts > plain->wavefronts - 1e-9) return plain->pad;
  p["deinterleave"] = 1;
  return byPhase->pad;
}

// A stride-2 conv over 8-wide tiles fills its halo in 16-byte runs (halo_runs, unpadded, not by phase): on the
// H100 at batch 32, ResNet-50's 256-channel conv from 28² (14 x 8 tiles, a 29 x 17 halo) 0.1933 -> 0.1510 ms
// with tf32 truncated, 0.2307 -> 0.1803 rounded; over 28-wide tiles (128 channels from 56²) runs lost, 0.1693
// -> 0.1975 (bench/results/2026-12-07-tf32-trunc).
void haloInRuns(Kernel& k, TemplateParams& p, int64_t budget) {
  if (unstrided(k) || p["tile_w"] != 8 || p["tap_depth"]) return;
  TemplateParams runs = p;
  runs["halo_runs"] = 1;
  runs["deinterleave"] = 0;
  runs["pad"] = 0;
  runs["pad_rows"] = 0;
  Kernel check;
  if (applies(k, runs, &check, budget) && pipelined(check)) p = runs;
}

// The input channels of a k step the defaults try, deepest first: 32, 16, 8 (multiples of the mma's depth), or
// with the depth along the window's columns every divisor of the channels (an image's 3: 3, then 1); with
// `oneMmaStep` (BlockPlan) only the mma's depth (tf32's 8, 16-bit's 16).
std::vector<int64_t> kStepChannels(Kernel& k, bool tapDepth, bool oneMmaStep, bool tf32) {
  if (!tapDepth && oneMmaStep) return {tf32 ? 8 : 16};
  if (!tapDepth) return {32, 16, 8};
  std::vector<int64_t> out;
  for (int64_t c = extentOf(k, "ic"); c >= 1; --c)
    if (extentOf(k, "ic") % c == 0) out.push_back(c);
  return out;
}

// The mma defaults for one pixel tile: false when too few blocks even with split-K (below) or the form does not apply. The
// deepest k tile (32, 16, 8 channels) whose two pipelined copies fit the defaults' budget; unpipelined when none
// does; the blocks as the conv's BlockPlan says.
bool mmaTileDefaults(Kernel& k, TemplateParams& p, int64_t th, int64_t tw, bool tf32, int64_t& budget) {
  std::vector<std::string> loops = outerChain(k);
  int64_t oc = extentOf(k, loops[1]);
  const BlockPlan plan = blockPlanOf(k);
  int64_t bn = plan.widestBlock;
  while (bn > 8 && oc % bn != 0) bn /= 2;
  // Fewer channels per block until every SM of an H200 (132) has one (batch 1's 7 x 7 layers: 8 blocks of 64).
  auto blocks = [&] { return extentOf(k, loops[0]) * (oc / bn) * ((extentOf(k, loops[2]) + th - 1) / th) * ((extentOf(k, loops[3]) + tw - 1) / tw); };
  while (bn > 16 && blocks() < plan.filledAt) bn /= 2;
  p["mma"] = 1;
  p["tf32"] = tf32 ? 1 : 0;  // rounded to nearest (mmaDefaults says why not truncated)
  p["tile_h"] = th;
  p["tile_w"] = tw;
  p["block_n"] = bn;
  p["warp_m"] = th * tw;  // one warp along the pixels: its A fragments serve all its n-tiles
  p["warp_n"] = std::min<int64_t>(16, bn);
  p["pad"] = 0;
  p["pad_rows"] = 0;
  p["split_k"] = 1;
  Kernel scheduled;
  bool fits = false;
  auto deepestPipelined = [&](int64_t bytes) {
    for (int64_t bk : kStepChannels(k, p["tap_depth"] != 0, plan.oneMmaStep, tf32)) {
      p["block_k"] = bk;
      p["stages"] = 2;
      fits = applies(k, p, &scheduled, bytes);
      if (fits && pipelined(scheduled)) return true;
    }
    return false;
  };
  budget = kDefaultSharedBytes;
  if (p["tap_depth"]) {
    // All the channels in one k step, unpipelined: the stem's 3 in one step 0.2345 ms, one a step in two
    // pipelined stages 0.3213 (H200, batch 32; three barriers and fills of a few KiB each).
    p["block_k"] = extentOf(k, "ic");
    p["stages"] = 1;
    fits = applies(k, p, &scheduled, plan.pipelinedBytes);
    if (fits) budget = plan.pipelinedBytes;
  }
  if (!fits && !deepestPipelined(budget) && deepestPipelined(plan.pipelinedBytes)) budget = plan.pipelinedBytes;
  if (!fits) return false;
  // Under a block an SM, split-K: without it the CUDA-core form, with more threads a block, was faster there
  // (resnet50 at batch 1 on the H200: 24.6 ms of kernels against 4.0).
  if (blocks() < plan.filledAt) {
    int64_t parts = partsToFill(blocks(), extentOf(k, "ic") / p["block_k"], kMmaSplitBlocks);
    if (parts == 0) return false;
    p["split_k"] = parts;
    if (!applies(k, p, &scheduled, budget)) return false;
  }
  // The pad widens the input tile's rows: where that costs the pipeline within the budget, the budget grows (as
  // above) rather than the k loop losing its stages. ResNet-50's layer3.0 strided conv at batch 1 (tf32, 16 parts
  // of 2 steps) lost them to its pad of 7: 0.148 ms unpipelined, 0.058 pipelined in 54 KiB (H100).
  // The bank model prices fragments whose depth is the channels; along the columns a fragment's lanes read
  // one row's consecutive words (2 g + t at stride 2), which no padding improves.
  CachePadding pad;
  if (!p["tap_depth"]) pad = phasedAndPadded(k, p, scheduled, th, tw, budget);
  TemplateParams padded = p;
  padded["pad"] = pad.row;
  padded["pad_rows"] = pad.rows;
  Kernel check;
  const bool padCostsStages = pipelined(scheduled) && !(applies(k, padded, &check, budget) && pipelined(check));
  if (padCostsStages && budget < plan.pipelinedBytes) {
    TemplateParams wider = p;  // p's stages: applies lowered padded's within the budget
    wider["pad"] = pad.row;
    wider["pad_rows"] = pad.rows;
    if (applies(k, wider, &check, plan.pipelinedBytes) && pipelined(check)) budget = plan.pipelinedBytes;
  }
  p["pad"] = pad.row;
  p["pad_rows"] = pad.rows;
  haloInRuns(k, p, budget);
  if (widerWarps(k, blocks(), bn)) p["warp_n"] = 32;
  deeperSteps(k, p, blocks(), budget);
  return true;
}

// Fewer input channels than an mma step (an image's 3) and a window whose columns use 60 % of the depth steps
// along them or more: the mma's depth along the columns. On the H200 at batch 32 (tf32), ResNet-50's 7 x 7 stem
// (7 of each 8 products used) 0.3077 ms on the CUDA cores, 0.2345 so; MobileNet-V2's 3 x 3 one (3 of 8) 0.0615
// on the CUDA cores, 0.0855 so (bench/results/2026-12-07-peers).
bool tapDepthPays(Kernel& k, bool tf32) {
  const int64_t depth = tf32 ? 8 : 16, kw = extentOf(k, "kw");
  return extentOf(k, "ic") < depth && double(kw) >= 0.6 * double((kw + depth - 1) / depth * depth);
}

// Tensor cores for the conv: 16-bit operands, or f32 ones where the policy allows tf32 (Kernel::allowTf32),
// rounded to nearest. Truncated (tf32 = 2: the f32 bits as they are, no cvt.rna a fragment element) they ran
// faster on the H100 at batch 32 (ResNet-50's 3 x 3 convs over 28² 0.1629 -> 0.1457 ms, over 7² 0.2109 ->
// 0.1592, the stem 0.2340 -> 0.2112), but truncation is biased and the bias compounds: ResNet-50's output
// came 1.9e-2 from PyTorch's instead of 4.4e-4 (bench/results/2026-12-07-tf32-trunc). tf32 = 3 rounds as
// cvt.rna does by an integer add, unmeasured.
// The first pixel tile (best first) whose k loop pipelines; else the first that applies.
bool mmaDefaults(Kernel& k, TemplateParams& p) {
  bool tf32 = k.allowTf32 && operandsOf(k, "ic", {DType::F32});
  if (!tf32 && !operandsOf(k, "ic", {DType::F16, DType::BF16})) return false;
  std::vector<std::string> loops = outerChain(k);
  std::optional<TemplateParams> unpipelined;
  for (auto [th, tw] : pixelTiles(extentOf(k, loops[2]), extentOf(k, loops[3]))) {
    TemplateParams trial = p;
    trial["tap_depth"] = tapDepthPays(k, tf32) ? 1 : 0;
    int64_t budget = kDefaultSharedBytes;
    if (!mmaTileDefaults(k, trial, th, tw, tf32, budget)) continue;
    Kernel scheduled;
    // A split into parts of one k step each has nothing to pipeline: it counts as pipelined.
    if (applies(k, trial, &scheduled, budget) && (pipelined(scheduled) || splitKParam(trial) > 1)) {
      p = trial;
      return true;
    }
    if (!unpipelined) unpipelined = trial;
  }
  if (!unpipelined) return false;
  p = *unpipelined;
  return true;
}

// The implicit-GEMM tile: rows as wide as a dividing width up to 16 (8 x 14 ran 1.6x faster than 4 x 28 on
// the H200 bench conv), rows up to 128 pixels per block, up to 64 channels, 4 x 8 outputs per thread, 8 input
// channels per step, two steps in flight (the k loop pipelined: the bench conv 1.052 -> 0.548 ms on the H100,
// three stages 0.563; bench/results/2026-12-06-gpu-fgemm). A depthwise conv takes the window form: its GEMM's K is the 9 taps of one channel, so the
// shared tiles' fills are all of its work (H100, MobileNet-V2's 3 x 3 depthwise convs at batch 32, 144 channels
// over 56², and 96 over 112² at stride 2: 0.267 -> 0.074 ms and 0.458 -> 0.073 ms).
TemplateParams convDefaults(Kernel& k) {
  TemplateParams p = windowedDefaults(k);
  std::vector<std::string> loops = outerChain(k);
  bool gemm = plainConv2d(k) && !depthwiseConv(k, loops[1]);
  int64_t oc = gemm ? extentOf(k, loops[1]) : 64, ow = gemm ? extentOf(k, loops[3]) : 16;
  int64_t tw = ow <= 16 ? ow : pickDividing({8, 14, 16}, ow, 16);
  int64_t th = 1;
  for (int64_t c : {2, 4, 8, 16})
    if (c * tw <= 128) th = c;
  int64_t bn = std::min<int64_t>(64, oc);
  if (gemm) fillTheSms(k, loops, tw, th, bn);
  p.insert({{"gemm", gemm ? 1 : 0}, {"tile_w", tw}, {"tile_h", th}, {"block_n", bn}, {"block_k", 8},
            {"thread_m", std::min<int64_t>(4, th)}, {"thread_n", std::max<int64_t>(1, bn / 8)}});
  p.insert({{"mma", 0}, {"tf32", 0}, {"warp_m", 16}, {"warp_n", 16}, {"pad", 0}, {"pad_rows", 0}, {"tap_depth", 0}, {"deinterleave", 0}, {"halo_rows", 0}, {"halo_runs", 0}, {"stages", 2}, {"split_k", 1}});
  if (gemm && !fitShared(k, p)) p["gemm"] = 0;
  if (gemm && p["gemm"]) coreSplitDefault(k, loops, p);
  if (gemm) {
    TemplateParams mma = p;
    if (mmaDefaults(k, mma)) p = mma;
  }
  return p;
}

}  // namespace

// The implicit-GEMM forms need a 2-D convolution (n, oc, oh, ow; reducing ic, kh, kw) whose input tile for a
// chunk of channels is a box: no groups (a grouped conv's channel is oc / ... + ic).
bool plainConv2d(Kernel& k) {
  if (k.kind != "conv" || outerChain(k).size() != 4) return false;
  for (const char* l : {"ic", "kh", "kw"})
    if (!detail::findLoop(k, l)) return false;
  return !dividedIndexIn(k, "ic");
}

bool depthwiseConv(Kernel& k, const std::string& oc) {
  if (k.kind != "conv" || !detail::findLoop(k, "ic") || extentOf(k, "ic") != 1) return false;
  bool own = false;
  for (const auto& idx : detail::loadsOf(k.body, k.buffers.front().name)) own = own || (idx.size() > 1 && usesVar(idx[1], oc));
  return own;
}

const TemplateDef& convTemplate() {
  static const TemplateDef def = {
      conv,
      {{"gemm", {0, 1}, "implicit GEMM: pixel x channel tiles, input halo and weight tiles in shared memory"},
       {"tile_h", {1, 2, 4, 7, 8, 14, 16}, "gemm: output rows of one block's pixel tile"},
       {"tile_w", {4, 7, 8, 14, 16, 28, 32, 56}, "gemm: output columns of one block's pixel tile (threadIdx.x)"},
       {"block_n", {16, 32, 64, 128}, "gemm: output channels of one block"},
       {"block_k", {1, 2, 4, 8, 16, 32}, "gemm: input channels staged per step (with all their taps)"},
       {"thread_m", {1, 2, 4, 8}, "gemm: output rows each thread computes (unrolled)"},
       {"thread_n", {1, 2, 4, 8}, "gemm: output channels each thread computes (unrolled)"},
       {"mma", {0, 1}, "implicit GEMM on the tensor cores (f16/bf16 operands, or f32 with tf32 = 1): warps of 16 x 8 mma.sync tiles, pixels x channels; thread_m/n unused"},
       {"tf32", {0, 1, 2, 3}, "with mma = 1 on f32 operands: the tensor cores on tf32 (10-bit mantissa), each operand rounded to nearest (1), truncated (2: no conversion instruction) or rounded by an integer add (3)", true},
       {"warp_m", {16, 32, 48, 64, 112, 128}, "mma: pixels of one warp's tile (a multiple of 16 dividing tile_h x tile_w)"},
       {"warp_n", {8, 16, 32}, "mma: output channels of one warp's tile (a multiple of 8 dividing block_n)"},
       {"pad", {0, 1, 2, 3, 4, 5, 6, 7}, "mma: elements added to each row of the shared input tile (distinct banks for the fragment reads)"},
       {"tap_depth", {0, 1}, "mma: the mma's depth along the window's columns (kw, the last step masked) instead of the input channels, block_k any divisor of them: for convs with fewer input channels than an mma step (an image's 3)"},
       {"halo_rows", {0, 1}, "mma: the input tile's fill with its columns on the lanes and its rows over the other threads (1), or one flat index over the threads (0)"},
       {"halo_runs", {0, 1}, "mma: the input tile's box aligned to 16-byte runs of columns, filled a run a copy where the input's rows are whole runs (not with deinterleave)"},
       {"deinterleave", {0, 1}, "mma: the input tile's columns stored by phase of the conv's stride (deinterleave), so a strided conv's fragment lanes read consecutive words"},
       {"pad_rows", {0, 1, 2, 3, 4, 5, 6, 7}, "mma: rows added to each channel's plane of the shared input tile (distinct banks where padding the rows cannot give them)"},
       {"stages", {1, 2, 3}, "gemm and mma: k tiles in flight, the k-outer loop pipelined with cp.async into up to that many shared copies (1: off)"},
       {"split_k", {1, 2, 4, 8, 16}, "gemm and mma: blocks sharing one tile's reduction (split-K), their partial sums added by a second phase"},
       {"threads", {64, 128, 256, 512}, "window form: output pixels per block"},
       {"unroll_window", {0, 1}, "window form: unroll the filter window loops"}},
      convDefaults};
  return def;
}

const TemplateDef& poolTemplate() {
  static const TemplateDef def = {
      windowed,
      {{"threads", {64, 128, 256, 512}, "output pixels per block"}, {"unroll_window", {0, 1}, "unroll the window loops"}},
      windowedDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
