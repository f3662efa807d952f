#include "ui/compare/accuracy_overlay.h"

#include <algorithm>
#include <cmath>

namespace tessera::ui {

std::map<QString, GroupTiming> accuracyOverlay(const RunResult& run, const CompileResult& compile) {
  std::map<QString, GroupTiming> out;
  if (!run.values || !compile.fusion) return out;
  for (const FusedGroup& g : compile.fusion->groups) {
    double worst = -1;
    for (const GroupNode& n : g.nodes)
      if (auto it = run.values->nodeErrors.find(n.id); it != run.values->nodeErrors.end()) worst = std::max(worst, it->second);
    if (worst < 0) continue;
    GroupTiming t;
    t.relError = worst;
    t.share = std::clamp((std::log10(std::max(worst, 1e-12)) + 8) / 8, 0.0, 1.0);
    auto k = std::find_if(run.report.kernels.begin(), run.report.kernels.end(), [&](auto& k) { return k.group == g.id; });
    t.verified = k != run.report.kernels.end() && k->verified;
    t.ms = k != run.report.kernels.end() ? k->ms : -1;
    out[QString::fromStdString(g.id)] = t;
  }
  return out;
}

}  // namespace tessera::ui
