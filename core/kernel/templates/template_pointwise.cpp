#include "kernel/templates/template_util.h"

namespace tessera::kernel::templ {
namespace {

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

TemplateParams pointwiseDefaults(Kernel& k) {
  int64_t n = chainExtent(k, outerChain(k));
  return {{"vector_width", pickDividing({1, 2, 4}, n, 4)}, {"elems_per_thread", n >= (1 << 20) ? 4 : 1},
          {"block_size", 256}, {"grid_stride", 0}, {"max_blocks", 1056}};
}

}  // namespace

const TemplateDef& pointwiseTemplate() {
  static const TemplateDef def = {
      pointwise,
      {{"vector_width", {1, 2, 4}, "elements per vector load/store (must divide the element count)"},
       {"elems_per_thread", {1, 2, 4, 8}, "elements each thread handles, a block apart (coalesced)"},
       {"block_size", {64, 128, 256, 512, 1024}, "threads per block"},
       {"grid_stride", {0, 1}, "cap the grid at max_blocks and loop over the rest"},
       {"max_blocks", {264, 528, 1056}, "grid size cap for grid-stride loops (multiples of 132 SMs)"}},
      pointwiseDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
