// The gemm template's CPU form (Kernel::machine == cpu): the structure of a BLAS micro-kernel, made of the same
// primitives as the GPU form. Each thread takes (rows block x column panel) pairs from one OpenMP loop; the
// panel of B (all of k x tile_n columns) is copied once per pair into a contiguous local array; each
// tile_m x tile_n register tile of the output accumulates over the whole k, its rows unrolled and its columns
// one vectorized loop, which the C++ generator keeps in vector registers (docs/codegen.md, CPU vectors).
#include "kernel/templates/template_util.h"

#include <algorithm>

#include "kernel/host.h"
#include "kernel/launch.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::templ {
namespace {

// The input read inside k whose index uses the output's column loop `j`: the B operand, packed by panels.
std::string operandAlongColumns(Kernel& k, const std::string& j) {
  for (const std::string& b : inputsReadIn(k, "k"))
    for (const auto& indices : detail::loadsOf(k.body, b))
      for (const Expr& e : indices)
        if (usesVar(e, j)) return b;
  return "";
}

// B's rows run along the output's columns: its last index uses `j` (not so for Gemm's transB = 1, whose
// columns are k).
bool columnsContiguous(Kernel& k, const std::string& b, const std::string& j) {
  for (const auto& indices : detail::loadsOf(k.body, b))
    if (!indices.empty() && !usesVar(indices.back(), j)) return false;
  return true;
}

void gemmCpu(TracedSchedule& s, const TemplateParams& p) {
  Kernel& k = s.kernel();
  std::vector<std::string> loops = outerChain(k);
  if (loops.size() < 2) return;
  std::string i = loops[loops.size() - 2], j = loops.back();
  int64_t M = extentOf(k, i), N = extentOf(k, j);
  if (M == 0 || N == 0 || extentOf(k, "k") == 0) return;  // nothing to compute: the loops as they are
  int64_t mr = std::min(p.at("tile_m"), M), nr = std::min(p.at("tile_n"), N);
  int64_t mc = std::min(p.at("block_m"), M);
  if (mc % mr != 0) rejectParams(k, "gemm-cpu", "block_m", "block_m must be a multiple of tile_m (" + std::to_string(mr) + ")");
  std::string along = operandAlongColumns(k, j);
  bool strided = !along.empty() && !columnsContiguous(k, along, j);  // read before the loops are renamed
  std::string b = p.at("pack_b") ? along : "";
  std::vector<std::string> batch(loops.begin(), loops.end() - 2);
  auto t = s.tile({i, j}, {mc, nr});  // rows block, column panel, rows of the block, columns of the panel
  auto [io, ii] = splitBy(s, t[2], mr);
  // Tiles that do not divide their loops leave guards inside the register tile's loops. A B whose columns are
  // not contiguous (transB) would make the column lanes a strided gather: GCC's forced `omp simd` of one ran
  // alexnet's last Gemm (1 x 4096 x 1000) in 1.4 s against 5.4 ms unrolled. Both keep the lanes unrolled.
  const bool columnsOverhang = N % nr != 0;
  bool guarded = M % mc != 0 || columnsOverhang || (nr > kVectorLanes && nr % kVectorLanes != 0) || strided;
  auto [steps, lanes] = splitLanes(s, t[3]);
  auto copies = s.hoistReduction("k", ii.empty() ? t[2] : io);
  std::vector<std::string> fill;
  if (!b.empty()) fill = s.cacheRead(t[1], b, MemScope::Shared);  // B's panel, packed per work item
  // A panel overhanging N reads its columns from the packed copy (zero past N) and A's rows, so the register
  // tile computes them and only their stores stay guarded; a panel wholly inside N stores whole vectors (before
  // the work item's loops are fused: A's index must not read the guard's variables). A 1 x 1 conv of 512 -> 1000
  // channels over 13 x 13 pixels (N = 169) ran 7.4 GFLOP/s with the guards kept.
  std::string wholeStores;
  if (guarded && columnsOverhang && fill.size() > 0 && M % mc == 0 && !strided && nr % kVectorLanes == 0) {
    s.overcompute(t[1]);
    guarded = false;
    if (holdsGuard(k, lanes + "_epi")) wholeStores = s.version(lanes + "_epi");
  }
  unrollAndVectorize(s, copies, {ii, steps}, lanes, guarded);
  if (!wholeStores.empty()) s.vectorize(wholeStores);
  if (fill.size() > 1) {
    auto [fillSteps, fillLanes] = splitLanes(s, fill.back());
    unrollAndVectorize(s, {}, {fillSteps}, fillLanes, guarded);  // an overhanging panel's fill: masked lanes
  }
  std::vector<std::string> outer = batch;
  outer.push_back(t[0]);
  outer.push_back(t[1]);
  s.parallel(fuseAll(s, outer));
}

// Columns of the register tile: two vectors of the host's f32 lanes where they divide N; rows: the most that
// divide M with the accumulators (tile_m x tile_n / lanes vectors) in at most 16 of the registers.
TemplateParams gemmCpuDefaults(Kernel& k) {
  std::vector<std::string> outer = outerChain(k);
  int64_t M = outer.size() >= 2 ? extentOf(k, outer[outer.size() - 2]) : 1;
  int64_t N = outer.empty() ? 1 : extentOf(k, outer.back());
  int64_t K = extentOf(k, "k");
  int64_t lanes = std::max<int64_t>(4, hostVectorBytes() / 4);
  // The packed panel takes at most a quarter of the core's L2 (the rest holds A's rows and the output's; 256 KiB
  // of the build machine's 1 MiB) and stays within the local arrays' limit (kSharedBytesLimit, 227 KiB: a larger
  // one made the kernel a host group).
  auto packs = [K](int64_t columns) { return K * columns * 4 <= std::min<int64_t>(hostL2Bytes() / 4, kSharedBytesLimit); };
  int64_t nr = pickDividing({8, 16, 32, 48, 64}, N, 2 * lanes);
  // No width divides N (a conv's 13 x 13 plane): a panel of 16 or 32 columns overhanging it, computed whole from
  // the packed panel (above); 32 unless 16 wastes less by a tenth of the work or only 16 packs.
  if (N % nr != 0 && N >= 16) {
    auto useful = [N](int64_t w) { return double(N) / double((N + w - 1) / w * w); };
    nr = N >= 32 && useful(32) * 1.1 >= useful(16) && packs(32) ? 32 : 16;
  }
  int64_t mr = 1;
  for (int64_t c : {6, 8, 4, 3, 2, 1})
    if (M % c == 0 && c * ((nr + lanes - 1) / lanes) <= 16) { mr = c; break; }
  // Rows a work item computes against one packed panel: the most (up to 128) that divide M in whole tiles, so
  // the panel's copy is shared by as many rows as can be (1000 rows: 40, not 8).
  int64_t mc = mr;
  for (int64_t c = mr; c <= 128; c += mr)
    if (M % c == 0) mc = c;
  int64_t pack = packs(nr) ? 1 : 0;
  return {{"tile_m", mr}, {"tile_n", nr}, {"block_m", mc}, {"pack_b", pack}};
}

}  // namespace

const TemplateDef& gemmCpuTemplate() {
  static const TemplateDef def = {
      gemmCpu,
      {{"tile_m", {1, 2, 3, 4, 6, 8}, "rows of the register tile (unrolled)"},
       {"tile_n", {8, 16, 32, 48, 64}, "columns of the register tile (one vectorized loop: vector registers of the host's width)"},
       {"block_m", {8, 16, 32, 64, 128, 256}, "rows one thread computes against one packed panel of B (a multiple of tile_m)"},
       {"pack_b", {0, 1}, "copy each k x tile_n panel of B into a contiguous local array before its rows are computed"}},
      gemmCpuDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
