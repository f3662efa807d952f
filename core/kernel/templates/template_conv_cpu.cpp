// The conv template's CPU form (Kernel::machine == cpu, a 2-D convolution, grouped or not, or a 2-D pool): a direct
// convolution with the structure of gemm-cpu's micro-kernel. Each thread takes work items from one OpenMP loop:
// an image, block_m output channels, tile_h output rows and tile_w output columns. The input patch the item
// reads (every input channel, its rows and columns with the window's halo, zeros where the padding lies) is
// copied once into a contiguous local array, so the inner loads have no padding test; each register tile of
// tile_m channels x tile_h rows x tile_w columns accumulates over the input channels and the window's taps,
// its channels and rows unrolled and its columns one vectorized loop (vector registers when tile_w is a
// multiple of 16 f32 lanes, docs/codegen.md; GCC's `omp simd` otherwise). The weights are read as one scalar
// per channel and tap, the same for every column.
// With channel_lanes = 1 the lanes run along the register tile's output channels instead, for images narrower
// than a vector (7 columns fill 7 of 16 lanes): the weights are packed in blocks of tile_m channels (the pack
// primitive: [OC/32, IC, 3, 3, 32]), so a tap's channels are one vector load, each input element is one
// broadcast scalar, and the tile is a row's columns unrolled.
#include "kernel/templates/template_util.h"

#include <algorithm>
#include <optional>

#include "kernel/host.h"
#include "kernel/launch.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::templ {
namespace {

// The axis of the data input that `var` (the output's columns) indexes: the last for NCHW, the third for NHWC
// (an input transposed to NCHW inside the kernel); -1 when no single axis holds it in every read.
int64_t inputColumnAxis(Kernel& k, const std::string& var) {
  int64_t axis = -2;
  for (const auto& idx : detail::loadsOf(k.body, k.buffers.front().name)) {
    int64_t found = -1;
    for (size_t d = 0; d < idx.size(); ++d)
      if (usesVar(idx[d], var)) found = found == -1 ? int64_t(d) : -3;
    axis = axis == -2 || axis == found ? found : -1;
  }
  return axis < 0 ? -1 : axis;
}

// Every store into an output buffer has `var` in its last index (NCHW output), and the data input has it in one
// axis.
bool rowsAlong(Kernel& k, const std::string& var) {
  bool all = true, stored = false;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Store) return;
    const auto& st = static_cast<StoreStmt&>(n);
    const Buffer* b = k.findBuffer(st.buffer);
    if (!b || b->role != BufferRole::Output) return;
    stored = true;
    all = all && !st.indices.empty() && usesVar(st.indices.back(), var);
  });
  return stored && all && inputColumnAxis(k, var) >= 0;
}

// How far apart the input columns of neighbouring output columns are: the conv's stride along the row (the
// step of `ow` in the input's column index).
int64_t columnStride(Kernel& k, const std::string& ow) {
  const std::string input = k.buffers.front().name;
  const size_t axis = size_t(inputColumnAxis(k, ow));
  int64_t stride = 1;
  for (const auto& idx : detail::loadsOf(k.body, input)) {
    auto a = detail::affine(idx[axis], {ow});
    if (a && a->coef.count(ow)) stride = std::max(stride, a->coef.at(ow));
  }
  return stride;
}

// A grouped conv reads input channel `oc / F * (C / G) + ic`: F output channels a group (0 when not grouped;
// a depthwise conv with one output channel a group reads `oc + ic` and is not).
int64_t groupOutputChannels(Kernel& k, const std::string& oc) {
  int64_t f = 0;
  for (const auto& idx : detail::loadsOf(k.body, k.buffers.front().name)) {
    if (idx.size() < 2) continue;
    walkExpr(idx[1], [&](const ExprNode& x) {
      if (x.kind != ExprKind::Binary) return;
      const auto& b = static_cast<const Binary&>(x);
      if (b.op == BinaryOp::Div && b.b->kind == ExprKind::IntImm && usesVar(b.a, oc)) f = static_cast<const IntImm&>(*b.b).value;
    });
  }
  return f;
}

// A grouped conv's channels split by group: returns the groups' loop ("" when not grouped) and leaves `oc` naming
// the channels of one group.
std::string splitGroups(TracedSchedule& s, std::string& oc) {
  Kernel& k = s.kernel();
  const int64_t f = groupOutputChannels(k, oc);
  if (f == 0) return "";
  auto split = s.split(oc, f);
  oc = split[1];
  if (groupOutputChannels(k, oc) != 0) rejectParams(k, "conv-cpu", "tile_m", "the grouped conv's channel index did not simplify");
  return split[0];
}

// Copies the work item's input patch (with the padding's zeros) into a local array at `item`, its columns' axis
// last and by phase where the conv strides, so the register tile's lanes read consecutive elements.
void packInput(TracedSchedule& s, const std::string& item, int64_t columnAxis, int64_t stride, bool oneChannelEach) {
  auto fill = s.cacheRead(item, s.kernel().buffers.front().name, MemScope::Shared);
  // An input read NHWC: the patch stored with the columns' axis last.
  const int64_t rank = int64_t(s.kernel().findBuffer(fill[0])->shape.size());
  if (columnAxis != rank - 1) {
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      if (d != columnAxis) perm.push_back(d);
    perm.push_back(columnAxis);
    s.permute(fill[0], perm);
  }
  // A strided conv's lanes would read every stride-th column: stored by phase they read them consecutively
  // (`x[2*ow + kw]` at phase kw % 2, column ow + kw / 2).
  // A pool's or a depthwise conv's patch serves one channel's taps once: at stride 2 it stays in the input's
  // order, copied a vector at a time, and the taps load every other element (tsr_vload_even).
  if (stride > 1 && stride <= 16 && !(stride == 2 && oneChannelEach)) s.deinterleave(fill[0], stride);
  // Along the input's rows, the fill copies whole vectors, masked where its guards (the padding, a row's last
  // piece) drop lanes; other fills (an NHWC input's channels, rows under 16 columns) stay unrolled, as their
  // narrower lanes would narrow the kernel's vectors (cpuVectorLanes).
  if (fill.size() > 1) {
    auto [fillSteps, fillLanes] = splitLanes(s, fill.back());
    const bool rows = columnAxis == rank - 1 && extentOf(s.kernel(), fillLanes) == kVectorLanes;
    if (!fillSteps.empty()) s.unroll(fillSteps);
    rows ? s.vectorize(fillLanes) : s.unroll(fillLanes);
  }
}

// The weights: the input other than the data whose first index is the output channel `oc`; "" for a pool.
std::string weightsBuffer(Kernel& k, const std::string& oc) {
  for (size_t i = 1; i < k.buffers.size(); ++i) {
    const Buffer& b = k.buffers[i];
    if (b.role != BufferRole::Input || b.shape.size() != 4) continue;
    auto loads = detail::loadsOf(k.body, b.name);
    if (!loads.empty() && std::all_of(loads.begin(), loads.end(), [&](const auto& idx) { return usesVar(idx[0], oc); }))
      return b.name;
  }
  return "";
}

bool channelLanes(const TemplateParams& p) { return p.count("channel_lanes") && p.at("channel_lanes") == 1; }  // absent in older traces

void convCpu(TracedSchedule& s, const TemplateParams& p) {
  Kernel& k = s.kernel();
  if (!convCpuApplies(k))
    rejectParams(k, "conv-cpu", "tile_w", "the CPU form needs a 2-D NCHW convolution or pool");
  // A pool accumulates over its window alone: its register tile's channels share no reads, and no weights.
  const bool pool = k.kind == "pool";
  const std::string reduction = pool ? "kh" : "ic";
  std::vector<std::string> loops = outerChain(k);  // n, oc, oh, ow
  // A grouped conv's channels split by group (g, oc_i): inside a group the input channels are g * (C/G) + ic,
  // an offset for the work item, and the rest of the form is the ungrouped one over the group's channels.
  const std::string groups = pool ? "" : splitGroups(s, loops[1]);
  const bool oneChannelEach = pool || depthwiseConv(k, loops[1]);  // a register tile of several channels shares no loads
  const int64_t OC = extentOf(k, loops[1]), OH = extentOf(k, loops[2]), OW = extentOf(k, loops[3]);
  if (OC == 0 || OH == 0 || OW == 0 || extentOf(k, reduction) == 0) return;  // nothing to compute
  const int64_t mr = std::min(p.at("tile_m"), OC), mc = std::min(p.at("block_m"), OC);
  // Columns may overhang the width up to a multiple of 16 lanes (split's limit; overcompute below).
  const int64_t th = std::min(p.at("tile_h"), OH), tw = std::min(p.at("tile_w"), std::max(OW, (OW + 15) / 16 * 16));
  if (mc % mr != 0) rejectParams(k, "conv-cpu", "block_m", "block_m must be a multiple of tile_m (" + std::to_string(mr) + ")");
  const bool alongChannels = channelLanes(p);
  const std::string weights = pool ? "" : weightsBuffer(k, loops[1]);
  if (alongChannels && (oneChannelEach || !groups.empty() || weights.empty()))
    rejectParams(k, "conv-cpu", "channel_lanes", "lanes along the channels need an ungrouped conv with weights");
  if (alongChannels && (mr % kVectorLanes != 0 || OC % mc != 0))
    rejectParams(k, "conv-cpu", "tile_m", "lanes along the channels need tile_m a multiple of 16 and block_m dividing the " +
                                              std::to_string(OC) + " channels");
  const int64_t stride = columnStride(k, loops[3]);
  const int64_t columnAxis = inputColumnAxis(k, loops[3]);
  // oc_o, oh_o, ow_o: the work item's channels block, rows and columns; oc_i, oh_i, ow_i: inside it.
  auto t = s.tile({loops[1], loops[2], loops[3]}, {mc, th, tw});
  auto [io, ii] = splitBy(s, t[3], mr);  // register tiles of the block, channels of one tile
  // The lanes: the tile's columns, or its channels (which then come innermost, so the accumulators hoisting
  // makes are [rows][columns][channels] and a vector of channels is consecutive there).
  auto [steps, lanes] = splitLanes(s, alongChannels ? ii : t[5]);
  std::vector<std::string> tile = alongChannels ? std::vector<std::string>{t[4], t[5], steps}
                                                : std::vector<std::string>{ii, t[4], steps};
  if (alongChannels) {
    std::vector<std::string> inner = {t[4], t[5]};
    if (!steps.empty()) inner.push_back(steps);
    inner.push_back(lanes);
    s.reorder(inner);
    s.pack(weights, 0, mr);
  }
  auto copies = s.hoistReduction(reduction, io);  // accumulate each register tile over every channel and tap
  std::vector<std::string> order = {"kh", "kw"};  // the taps outside the register tile, inside the channels
  if (pool) order = {"kw"};
  for (const std::string& l : tile)
    if (!l.empty()) order.push_back(l);
  order.push_back(lanes);
  s.reorder(order);
  if (extentOf(k, "kw") <= 8) s.unroll("kw");
  if (p.at("pack_input")) packInput(s, t[2], columnAxis, stride, oneChannelEach);  // before the work item's loops are fused
  // Tiles that do not divide their loops leave guards inside the register tile, which vectorize refuses. Rows
  // and columns overhanging the image read the packed patch (whose box spans the whole tile) and the weights
  // (the same for every pixel), so the tile computes them and only their stores stay guarded. Channels past
  // the last would read past the weights.
  bool guarded = OC % mc != 0 || OH % th != 0 || OW % tw != 0 || (tw > kVectorLanes && tw % kVectorLanes != 0);
  if (guarded && p.at("pack_input") && OC % mc == 0) {
    s.overcompute(t[2]);
    guarded = false;
  }
  // The stores of a tile wholly inside the image need no guard: such tiles store whole vectors.
  std::string wholeStores;
  if (!guarded && !alongChannels && holdsGuard(k, lanes + "_epi")) wholeStores = s.version(lanes + "_epi");
  unrollAndVectorize(s, copies, tile, lanes, guarded);
  if (!wholeStores.empty()) s.vectorize(wholeStores);
  std::vector<std::string> items = {loops[0], t[0], t[1], t[2]};
  if (!groups.empty()) items.insert(items.begin() + 1, groups);
  std::string work = fuseAll(s, items);
  s.parallel(work);
}

// `from` doubled while the result divides `of` and stays within `limit`: a work item's channels.
int64_t doubledWhileDividing(int64_t from, int64_t of, int64_t limit) {
  int64_t n = from;
  while (n * 2 <= limit && of % (n * 2) == 0) n *= 2;
  return n;
}

// Whether the form takes parameters `p` for `k`, tried on a copy of the kernel, with its work item's copies (the
// packed patch) in at most half of the host's L2, where the register tile's loads find them (the other half
// holds the weights the tile reads and the outputs it writes). On the build machine's 1 MiB this is never the
// limit: the local arrays' is (kSharedBytesLimit, 227 KiB); on a core of 256 KiB it takes fewer rows.
bool schedules(Kernel& k, const TemplateParams& p) {
  Kernel trial = k.clone();
  try {
    TracedSchedule s(trial);
    convCpu(s, p);
  } catch (const Error&) {
    return false;
  }
  return sharedBytesPerBlock(trial) <= hostL2Bytes() / 2;
}

// The share of a tile grid's pixels that are the image's (the rest is overhang, computed and thrown away).
double usefulShare(int64_t OH, int64_t OW, int64_t th, int64_t tw) {
  auto up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
  return double(OH * OW) / double(up(OH, th) * up(OW, tw));
}

// The first of the AVX-512 register tiles (channels x rows of 16 columns, 8 to 16 accumulators) whose channels
// divide the conv's and whose packed patch fits the local arrays' limit (kSharedBytesLimit: the patch spans every
// input channel, so a conv of many channels takes fewer rows: 512 channels at stride 2 take 8 x 1), tried on a
// copy of the kernel; nullopt when none does.
std::optional<TemplateParams> wideTile(Kernel& k, int64_t OC, int64_t OH, bool strided) {
  const std::vector<std::pair<int64_t, int64_t>> tiles =
      strided ? std::vector<std::pair<int64_t, int64_t>>{{4, 4}, {8, 2}, {4, 2}, {8, 1}}
              : std::vector<std::pair<int64_t, int64_t>>{{8, 2}, {4, 4}, {4, 2}, {8, 1}};
  for (auto [mr, th] : tiles) {
    if (OC % mr != 0) continue;
    TemplateParams p{{"tile_m", mr}, {"tile_h", std::min(OH, th)}, {"tile_w", 16}, {"block_m", doubledWhileDividing(mr, OC, 64)},
                     {"pack_input", 1}};
    if (schedules(k, p)) return p;
  }
  return std::nullopt;
}

// Lanes along the channels for an image of at most 8 columns (a vector of 16 columns would waste half its
// lanes or more): 32 channels (two vectors) x one row of columns, 14 accumulators for 7 columns, and work items
// of up to 256 channels (each packs its input rows for every channel, so fewer items copy less). nullopt where
// the conv is grouped, its channels are not a multiple of 32, or the form is refused (tried on a copy).
// ResNet-50's layer4 convs, 512 channels over 7 x 7, at two threads: 0.57 ms (404 GFLOP/s) against 1.54 with
// the column lanes (docs/performance.md, CPU 2026-12-06 evening).
std::optional<TemplateParams> channelTile(Kernel& k, int64_t OC, int64_t OW) {
  if (OW > 8 || OC % 32 != 0) return std::nullopt;
  TemplateParams p{{"tile_m", 32}, {"tile_h", 1}, {"tile_w", OW}, {"block_m", doubledWhileDividing(32, OC, 256)},
                   {"pack_input", 1}, {"channel_lanes", 1}};
  return schedules(k, p) ? std::optional<TemplateParams>(p) : std::nullopt;
}

// The register tile. An FMA's latency is 4 cycles and a core issues two a cycle, so a tile needs at least 8
// independent accumulators (vectors) to keep the FMA units busy, and it may hold about half the vector registers
// (the rest take the patch's rows and the broadcast weights). With AVX-512 (32 registers of 16 lanes): 8 channels
// x 2 rows x 16 columns, 16 accumulators; a strided conv 4 channels x 4 rows (its rows share fewer loads);
// fewer rows where the packed patch would not fit (wideTile).
// Measured on one core of the build machine (AMD EPYC, AVX-512; FMA peak 192 GFLOP/s), 3 x 3 convs, GFLOP/s
// with the tile before (4 x 1 x 16, 4 accumulators) -> now: 64 ch 56 x 56 84 -> 162, 128 ch 28 x 28 89 -> 181,
// 256 ch 14 x 14 87 -> 157, 512 ch 7 x 7 66 -> 77 (7 of 16 lanes useful), 64 -> 256 ch 13 x 13 86 -> 142,
// 128 ch 56 x 56 stride 2 75 -> 129 (a grid of 3 x 3 x 3 tiles in bench/results/2026-12-05-cpu-conv-tiles/).
// Narrower hosts keep the earlier tile: 4 channels by 2 rows of 8 columns or 1 row of 16, whichever wastes less
// of the image to overhang (16 lanes preferred by 10%), 4 or 8 accumulators of 8 lanes in 16 registers.
TemplateParams tileDefaults(Kernel& k) {
  std::vector<std::string> outer = outerChain(k);
  if (outer.size() != 4) return {{"tile_m", 1}, {"tile_h", 1}, {"tile_w", 4}, {"block_m", 8}, {"pack_input", 1}};
  const int64_t groupChannels = k.kind == "pool" ? 0 : groupOutputChannels(k, outer[1]);
  const int64_t OC = groupChannels > 0 ? groupChannels : extentOf(k, outer[1]);
  const int64_t OH = extentOf(k, outer[2]), OW = extentOf(k, outer[3]);
  if (k.kind == "pool") {
    // One channel a register tile (the window has no reuse across channels to gain). Over 16 output columns,
    // 4 rows of 32 (their windows share input rows) and 2 channels a work item; otherwise one row of 8 or 16
    // and 8 channels. Measured on one core with the fill and the padding vectorized, max pool 3 x 3 stride 2,
    // 1 row of 16 -> 4 rows of 32: 64 channels 111 x 111 0.294 -> 0.218 ms, padded 112 x 112 0.505 -> 0.339,
    // 24 channels 0.191 -> 0.131; over 14 columns (average, 136 channels) 4 rows were slower (0.038 -> 0.047).
    const bool wide = OW > 16;
    const int64_t mc = doubledWhileDividing(1, OC, wide ? 2 : 8);
    return {{"tile_m", 1}, {"tile_h", wide ? std::min<int64_t>(OH, 4) : 1}, {"tile_w", OW <= 8 ? 8 : wide ? 32 : 16}, {"block_m", mc}, {"pack_input", 1}};
  }
  if (depthwiseConv(k, outer[1])) {
    // One channel a register tile, 4 rows (their taps share input rows), the row's width in one tile of 8, 16
    // or 32 columns; 4 channels a work item. Measured (one thread, the fill's lanes masked) against the tile
    // below: 136 channels at 28 x 28 0.123 -> 0.050 ms, 144 at 56 x 56 0.343 -> 0.176, stride 2 0.429 ->
    // 0.314, 576 at 14 x 14 0.113 -> 0.088, 960 at 7 x 7 (8 channels a work item) 0.043 -> 0.035.
    const int64_t tw = OW <= 8 ? 8 : OW <= 16 ? 16 : 32;
    return {{"tile_m", 1}, {"tile_h", std::min<int64_t>(OH, 4)}, {"tile_w", tw}, {"block_m", OW <= 8 ? 8 : 4}, {"pack_input", 1}};
  }
  if (hostVectorBytes() >= 64 && groupChannels == 0)
    if (auto lanes = channelTile(k, OC, OW)) return *lanes;
  if (hostVectorBytes() >= 64)
    if (auto wide = wideTile(k, OC, OH, columnStride(k, outer[3]) > 1)) return *wide;
  int64_t mr = 1;
  const bool wide = usefulShare(OH, OW, 1, 16) * 1.1 > usefulShare(OH, OW, 2, 8);
  const int64_t th = wide || OH == 1 ? 1 : 2, tw = wide ? 16 : 8;
  for (int64_t c : {4, 3, 2, 1})
    if (OC % c == 0) { mr = c; break; }
  return {{"tile_m", mr}, {"tile_h", th}, {"tile_w", tw}, {"block_m", doubledWhileDividing(mr, OC, 64)}, {"pack_input", 1}};
}

// The tile, and the lanes along the columns unless channelTile chose the channels.
TemplateParams convCpuDefaults(Kernel& k) {
  TemplateParams p = tileDefaults(k);
  p.emplace("channel_lanes", 0);
  return p;
}

}  // namespace

// The register tile's columns run along the output's rows (NCHW output); an input read NHWC has its patch stored
// columns last (`permute`). A 2-D pool (max or average over kh x kw) takes the same form.
bool convCpuApplies(Kernel& k) {
  const std::vector<std::string> outer = outerChain(k);
  if (outer.size() != 4 || !detail::findLoop(k, "kh") || !detail::findLoop(k, "kw")) return false;
  const bool pool = k.kind == "pool";
  const bool grouped = k.kind == "conv" && detail::findLoop(k, "ic") && groupOutputChannels(k, outer[1]) > 0;
  return (plainConv2d(k) || grouped || pool) && rowsAlong(k, outer[3]);
}

const TemplateDef& convCpuTemplate() {
  static const TemplateDef def = {
      convCpu,
      {{"tile_m", {1, 2, 3, 4, 6, 8, 16, 32}, "output channels of the register tile (unrolled; with channel_lanes, its vectors)"},
       {"tile_h", {1, 2, 4}, "output rows of the register tile (unrolled)"},
       {"tile_w", {4, 7, 8, 14, 16, 28, 32}, "output columns of the register tile (one vectorized loop; with channel_lanes, unrolled)"},
       {"block_m", {1, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256}, "output channels of one work item (a multiple of tile_m)"},
       {"pack_input", {0, 1}, "copy the work item's input patch (with the padding's zeros) into a contiguous local array"},
       {"channel_lanes", {0, 1}, "1: the vector lanes run along the output channels (weights packed in blocks of tile_m), "
                                 "for images narrower than a vector; 0: along the output's columns"}},
      convCpuDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
