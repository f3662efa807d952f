#include "kernel/template_util.h"

#include "kernel/schedule_util.h"

namespace tessera::kernel::templ {
namespace {

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

TemplateParams windowedDefaults(Kernel&) { return {{"threads", 128}, {"unroll_window", 1}}; }

}  // namespace

const TemplateDef& convTemplate() {
  static const TemplateDef def = {
      windowed,
      {{"threads", {64, 128, 256, 512}, "output pixels per block"},
       {"unroll_window", {0, 1}, "unroll the filter window loops"}},
      windowedDefaults};
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
