#pragma once
// Text and JSON views of a compile: step headers, the fused graph, one line per fusion decision, and the one
// JSON object of `tessera-cli compile --json`. The formats are described in docs/fusion.md.
#include <set>
#include <string>

#include "fusion/compile.h"

namespace tessera {

// "step 3 canonicalize: changed, +2 -5 ~1 nodes, 0.42 ms" (the IR follows it in the CLI).
std::string stepHeader(const Step& step);
// The fused graph: one block per kernel with its kind, the values it reads and writes, and its nodes.
std::string printFused(const CompileResult& result);
// One line per decision: "fused     conv -> relu  [epilogue] reason".
std::string explainFusion(const FusionResult& fusion);
// One line per override with its status.
std::string describeOverrides(const std::vector<OverrideStatus>& overrides);
std::string describeMemory(const MemoryPlan& plan);

struct ReportJsonOptions {
  std::set<std::string> irAfter;  // passes whose steps carry their IR ("ir"); "*" for all
  int64_t elideAbove = 16;
};
std::string compileReportJson(const CompileResult& result, const ReportJsonOptions& options = {});

}  // namespace tessera
