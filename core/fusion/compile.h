#pragma once
// The compile driver: a model graph and options in; the recorded steps, the final graph, the fusion result,
// the memory plan and the override statuses out. The CLI's `compile` command and the window both call it.
// The pipeline is the named one (passes/pipelines.h) followed by the `fuse` pass (fusion.h).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fusion/fusion.h"
#include "ir/cancel.h"
#include "fusion/overrides.h"
#include "passes/plan_memory.h"
#include "passes/step_recorder.h"

namespace tessera {

struct CompileOptions {
  std::string pipeline = "default";  // a pipeline name or a comma list of passes
  std::string stopAfter;             // a pass name, "fuse" included
  std::set<std::string> disabled;    // pass names; "fuse" turns fusion off
  std::optional<int64_t> fuel;       // rewrites allowed (fused edges count as rewrites)
  std::vector<Override> overrides;   // disable-pass entries join `disabled` when the pass is in the pipeline
  FusionOptions fusion;
  CancelToken cancel;  // asked before each pass; compileGraph then throws Cancelled
};

struct CompileResult {
  std::vector<Step> steps;
  std::shared_ptr<const Graph> input;   // the graph as given
  std::shared_ptr<const Graph> graph;   // after the last pass that ran
  std::shared_ptr<FusionResult> fusion; // null when `fuse` did not run
  MemoryPlan memory;                    // from plan-memory, else planned on the final graph
  std::vector<OverrideStatus> overrides;  // every override, in the order given
  // Node id → ids of nodes folded into it by a pass (fold-batchnorm: conv ← bn), from the steps.
  std::map<std::string, std::vector<std::string>> absorbed;
  std::string error;  // a pass failed: the steps up to it are kept
};

// Throws Error for bad options (an unknown pipeline or pass) and Cancelled when options.cancel fires; a failing
// pass ends up in `error`.
CompileResult compileGraph(Graph graph, const CompileOptions& options);

}  // namespace tessera
