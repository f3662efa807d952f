// The CPU form of elementwise and data-movement kernels (Kernel::machine == cpu; not transposes): each top-level
// nest keeps its innermost loop, which runs along the output's rows, and fuses the loops around it into one
// OpenMP loop, so the index arithmetic of the outer dimensions is done once a row rather than once an element
// (the GPU form fuses every loop into one flat index and divides it back into coordinates per element). The
// row runs in `lanes`-wide vectorized steps (8 or 4 where they divide a row 16 does not: shufflenet's channel
// shuffles over rows of 28 took 0.35 ms with a scalar tail, 0.02 in 4-lane steps); a row no width divides takes an
// unguarded copy for its whole steps (`version`) and masks the lanes of its last; a row shorter than 16 (7 x 7
// and 14 x 14 images) takes 8 or 4 lanes a step. A nest of one loop, or of fewer than 16 rows, is
// cut into chunks of `chunk` elements instead.
#include "kernel/templates/template_util.h"

namespace tessera::kernel::templ {
namespace {

// Below this many rows a nest is cut into chunks instead (a fixed figure, so a schedule does not depend on
// the machine that made it: 16 rows give 8 threads two each).
constexpr int64_t kFewRows = 16;

// The row in lanes-wide vectorized steps: whole steps unguarded, the last one tested where it overhangs.
void vectorizeRow(TracedSchedule& s, const std::string& row, int64_t lanes) {
  const int64_t extent = extentOf(s.kernel(), row);
  // Rows a narrower vector divides (an image row of 28, 56 or 12) take it rather than a scalar tail.
  for (int64_t narrower : {8, 4})
    if (lanes > narrower && extent % lanes != 0 && extent % narrower == 0) lanes = narrower;
  while (lanes > 4 && extent < lanes) lanes /= 2;  // a row of 14 (a 14 x 14 image's): one step of 8, one of 6
  if (lanes <= 1 || extent < lanes) return;
  auto [steps, lane] = splitBy(s, row, lanes);
  // The whole steps unguarded (`version`), the last one's lanes masked: on the cpu a guard on the lanes is a
  // mask (docs/codegen.md). Left scalar, GCC unrolled it into 16 copies of its index arithmetic, half of a
  // concat module's compile.
  if (holdsGuard(s.kernel(), lane)) s.vectorize(s.version(lane));
  s.vectorize(lane);
}

void elementwiseCpu(TracedSchedule& s, const TemplateParams& p) {
  for (std::vector<std::string> nest : topNests(s.kernel())) {
    if (nest.empty() || chainExtent(s.kernel(), nest) == 0) continue;
    std::string row = nest.back();
    nest.pop_back();
    const int64_t rows = chainExtent(s.kernel(), nest);
    if (nest.empty() || rows < kFewRows) {  // too few rows to share among threads: chunks of the whole
      nest.push_back(row);
      auto [chunks, chunk] = splitBy(s, fuseAll(s, nest), p.at("chunk"));
      vectorizeRow(s, chunk.empty() ? chunks : chunk, p.at("lanes"));
      if (!chunk.empty()) s.parallel(chunks);
      continue;
    }
    vectorizeRow(s, row, p.at("lanes"));
    s.parallel(fuseAll(s, nest));
  }
}

TemplateParams elementwiseCpuDefaults(Kernel&) { return {{"lanes", 16}, {"chunk", 4096}}; }

}  // namespace

const TemplateDef& elementwiseCpuTemplate() {
  static const TemplateDef def = {
      elementwiseCpu,
      {{"lanes", {1, 4, 8, 16}, "elements of a row per vectorized step (1: the row as a plain loop)"},
       {"chunk", {1024, 4096, 16384}, "elements a thread takes at once where the rows are too few to share"}},
      elementwiseCpuDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
