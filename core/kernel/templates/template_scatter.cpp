// The scatter template (kind "scatter", lower_scatter.cpp: phase 0 copies data into the output, phase 1 writes
// the updates). Each phase's data-parallel loops fused into one: on the GPU spread over blocks of block_size
// threads (both tags bound in every phase, so a phase of fewer threads than the other runs once, not once a
// block), on the CPU one OpenMP loop. The updates' loops that may meet stay serial inside (reduction loops).
#include "kernel/templates/template_util.h"

#include <algorithm>

namespace tessera::kernel::templ {
namespace {

void scatter(TracedSchedule& s, const TemplateParams& p) {
  const bool cpu = s.kernel().machine == Machine::Cpu;
  const std::vector<std::vector<std::string>> nests = topNests(s.kernel());  // the copy's, then the updates'
  for (size_t i = 0; i < nests.size(); ++i) {
    const std::vector<std::string>& nest = nests[i];
    if (nest.empty() || chainExtent(s.kernel(), nest) == 0) continue;
    const std::string all = fuseAll(s, nest);
    if (cpu) {
      const int64_t n = extentOf(s.kernel(), all);
      // The copy in vectors where they divide it (a KV cache of 4 x 64 x 8 x 128 f32 at two threads: 0.30 ->
      // ~0.05 ms); the updates' free loops hold their ordered loops inside, so they stay scalar.
      if (i == 0 && n % kVectorLanes == 0 && n > kVectorLanes) {
        auto [chunks, lanes] = splitBy(s, all, kVectorLanes);
        s.vectorize(lanes);
        s.parallel(chunks);
      } else if (n > 1) {
        s.parallel(all);
      }
      continue;
    }
    auto parts = s.split(all, std::min(p.at("block_size"), extentOf(s.kernel(), all)));
    s.bind(parts[0], ThreadTag::BlockX);
    s.bind(parts[1], ThreadTag::ThreadX);
  }
}

TemplateParams scatterDefaults(Kernel&) { return {{"block_size", 256}}; }

}  // namespace

const TemplateDef& scatterTemplate() {
  static const TemplateDef def = {
      scatter, {{"block_size", {64, 128, 256, 512, 1024}, "GPU threads per block of each parallel phase"}}, scatterDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
