#pragma once
// The per-node accuracy overlay: each group shaded by the worst relative error of its values against the
// reference (from a run that kept values), on a log scale from 1e-8 (pale) to 1 (dark), its error written on it.
#include <QString>
#include <map>

#include "fusion/compile.h"
#include "ui/graph/graph_items.h"
#include "ui/models/run_result.h"

namespace tessera::ui {

// Empty when the run kept no values.
std::map<QString, GroupTiming> accuracyOverlay(const RunResult& run, const CompileResult& compile);

}  // namespace tessera::ui
