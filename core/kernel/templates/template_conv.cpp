#include "kernel/template_util.h"

#include <algorithm>
#include <functional>

#include "kernel/launch.h"
#include "kernel/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::templ {
namespace {

constexpr int64_t kSharedLimit = 48 * 1024;  // static shared memory of one block

// Conv and pool (gemm = 0): (n, channel, spatial...) with the spatial loops fused over the threads of a
// block; each thread loops over its output's whole window, reading input and weights from global memory.
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

// Some read of `buffer` inside `loop` has `var` in its last index.
bool lastIndexUses(Kernel& k, const std::string& loop, const std::string& buffer, const std::string& var) {
  bool found = false;
  forEachLoadIn(k, loop, [&](const Load& ld) {
    if (ld.buffer == buffer && usesVar(ld.indices.back(), var)) found = true;
  });
  return found;
}

// The implicit-GEMM form needs a 2-D convolution (n, oc, oh, ow; reducing ic, kh, kw) whose input tile for a
// chunk of channels is a box: no groups (a grouped conv's channel is oc / ... + ic).
bool gemmApplies(Kernel& k) {
  if (k.kind != "conv" || outerChain(k).size() != 4) return false;
  for (const char* l : {"ic", "kh", "kw"})
    if (!detail::findLoop(k, l)) return false;
  return !dividedIndexIn(k, "ic");
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
  if (!gemmApplies(k)) rejectParams(k, "conv", "gemm", "the implicit-GEMM form needs a 2-D convolution without groups: set gemm = 0");
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
  try {
    for (const std::string& operand : inputsReadIn(k, ko)) {
      // An NHWC input's cache rows are channels: the threads of a warp (along ow) read a row apart, so a
      // row of block_k floats would put them in few banks; one element of padding spreads them.
      int64_t pad = !ki.empty() && lastIndexUses(k, ko, operand, ki) ? 1 : 0;
      auto fill = s.cacheRead(ko, operand, MemScope::Shared, pad);
      bindFill(s, std::vector<std::string>(fill.begin() + 1, fill.end()), dims);
    }
  } catch (const ScheduleError& e) {
    rejectParams(k, "conv", "block_k", std::string("the shared tiles do not fit: ") + e.what());
  }
  if (sharedBytesPerBlock(k) > kSharedLimit)
    rejectParams(k, "conv", "block_k", "the input and weight tiles need " + std::to_string(sharedBytesPerBlock(k)) +
                                           " bytes of shared memory (limit 48 KiB)");
}

void conv(TracedSchedule& s, const TemplateParams& p) {
  if (p.at("gemm")) return implicitGemm(s, p);
  windowed(s, p);
}

TemplateParams windowedDefaults(Kernel&) { return {{"threads", 128}, {"unroll_window", 1}}; }

// Whether the implicit-GEMM form applies with `p` (its tiles within shared memory and the thread limits).
bool applies(Kernel& k, const TemplateParams& p) {
  Kernel trial = k.clone();
  TracedSchedule s(trial);
  try {
    implicitGemm(s, p);
    return true;
  } catch (const ScheduleError&) {
    return false;
  }
}

// Large windows (11 x 11 at stride 4) or wide inputs make the default tiles' halo and weights exceed 48 KiB:
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
  while (blocks() < 132) {
    if (bn > 32) bn /= 2;
    else if (th > 2) th /= 2;
    else if (bn > 16) bn /= 2;
    else return;
  }
}

// The implicit-GEMM tile: rows as wide as a dividing width up to 16 (8 x 14 ran 1.6x faster than 4 x 28 on
// the H200 bench conv), rows up to 128 pixels per block, up to 64 channels, 4 x 8 outputs per thread, 8 input
// channels per step.
TemplateParams convDefaults(Kernel& k) {
  TemplateParams p = windowedDefaults(k);
  bool gemm = gemmApplies(k);
  std::vector<std::string> loops = outerChain(k);
  int64_t oc = gemm ? extentOf(k, loops[1]) : 64, ow = gemm ? extentOf(k, loops[3]) : 16;
  int64_t tw = ow <= 16 ? ow : pickDividing({8, 14, 16}, ow, 16);
  int64_t th = 1;
  for (int64_t c : {2, 4, 8, 16})
    if (c * tw <= 128) th = c;
  int64_t bn = std::min<int64_t>(64, oc);
  if (gemm) fillTheSms(k, loops, tw, th, bn);
  p.insert({{"gemm", gemm ? 1 : 0}, {"tile_w", tw}, {"tile_h", th}, {"block_n", bn}, {"block_k", 8},
            {"thread_m", std::min<int64_t>(4, th)}, {"thread_n", std::max<int64_t>(1, bn / 8)}});
  if (gemm && !fitShared(k, p)) p["gemm"] = 0;
  return p;
}

}  // namespace

const TemplateDef& convTemplate() {
  static const TemplateDef def = {
      conv,
      {{"gemm", {0, 1}, "implicit GEMM: pixel x channel tiles, input halo and weight tiles in shared memory"},
       {"tile_h", {1, 2, 4, 8, 16}, "gemm: output rows of one block's pixel tile"},
       {"tile_w", {7, 8, 14, 16, 28, 32}, "gemm: output columns of one block's pixel tile (threadIdx.x)"},
       {"block_n", {16, 32, 64, 128}, "gemm: output channels of one block"},
       {"block_k", {1, 2, 4, 8, 16}, "gemm: input channels staged per step (with all their taps)"},
       {"thread_m", {1, 2, 4, 8}, "gemm: output rows each thread computes (unrolled)"},
       {"thread_n", {1, 2, 4, 8}, "gemm: output channels each thread computes (unrolled)"},
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
