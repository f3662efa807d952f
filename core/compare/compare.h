#pragma once
// Two compiles of a model side by side (two session branches, two sessions, two models, two pass pipelines):
// matched nodes, fusion group changes, per-level text diffs, the two runs joined kernel by kernel, and a
// one-line summary. `tessera-cli compare` prints it and the window's compare view shows it: one computation.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/line_diff.h"
#include "compare/match.h"
#include "driver/stages.h"
#include "ir/cancel.h"
#include "runtime/execute/compiled_model.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/run_report.h"
#include "session/session.h"

namespace tessera::compare {

// One side: a model compiled with one set of options, and the run made of it (stored or fresh), if any.
struct Side {
  std::string label;  // "main", "split fc", "mlp.tsr"
  std::shared_ptr<const Graph> model;
  CompileOptions options;
  execute::ScheduleSet schedules;
  std::optional<execute::RunReport> run;
};

// A model file (default options, no run), a session (its shown branch) or SESSION#BRANCH. A stored run that
// does not parse is left out with a note in `notes`.
Side sideFromRef(const std::string& ref, std::vector<std::string>* notes = nullptr);
// A session branch (its stored last run included): what both the CLI and the window compare.
Side sideFromBranch(const SessionBranch& branch, std::shared_ptr<const Graph> model, std::vector<std::string>* notes);
Side sideFromSession(const Session& session, std::shared_ptr<const Graph> model, std::vector<std::string>* notes);

// The side at a pass step: its pipeline stopped after `pass` (a graph without kernels when that is before
// fusion), labelled "main @ cse"; its run, made of the whole pipeline, is left out. "" leaves the side whole.
void stopSideAfter(Side& side, const std::string& pass);

// Runs the side fresh on `backend` (its run replaced), verified against the reference, `reps` timed runs.
void runSide(Side& side, execute::BackendKind backend, int reps, const CancelToken& cancel = {});

// Per-kernel join of the two runs over one group change: times summed over the groups on each side.
struct KernelDelta {
  GroupChange groups;
  double msA = -1, msB = -1;  // -1: that side did not run (or has no such kernel)
  double maxAbsErrA = -1, maxAbsErrB = -1;
  bool verifiedA = false, verifiedB = false;
  double deltaMs() const { return msA >= 0 && msB >= 0 ? msB - msA : 0; }
};

struct LevelDiff {
  driver::Stage level = driver::Stage::Graph;
  std::vector<DiffLine> lines;
  int added = 0, removed = 0;
};

struct Comparison {
  std::string labelA, labelB;
  NodeMatching nodes;
  std::vector<GroupChange> groups;
  std::vector<KernelDelta> kernels;  // one per group change, when either side ran
  std::vector<LevelDiff> levels;
  size_t kernelsA = 0, kernelsB = 0;
  double totalMsA = -1, totalMsB = -1;  // -1: not run
  double maxAbsErrB = -1;               // over B's kernels; -1: not run or not checked
  std::string summary;                  // "split fc vs main: 1 kernel more, 1.12x slower, max abs error 3e-7"
  std::vector<std::string> notes;
  std::shared_ptr<const CompileResult> compileA, compileB;  // what was compared (not in the JSON)
  nlohmann::json toJson() const;
};

struct CompareOptions {
  std::vector<driver::Stage> levels{driver::Stage::Graph, driver::Stage::Fused};  // which texts to diff
  std::map<std::string, std::string> mapping;  // A node id → B node id, tried before any other rule
  CancelToken cancel;
};

// Compiles both sides (and lowers them for kernel, source and PTX levels), then compares. A side whose compile
// fails throws Error naming its label.
Comparison compareSides(const Side& a, const Side& b, const CompareOptions& options = {});
// The join and the summary alone, from the group changes and two runs (the window's table reads these).
std::vector<KernelDelta> joinRuns(const std::vector<GroupChange>& groups, const execute::RunReport* a,
                                  const execute::RunReport* b);
std::string summaryLine(const Comparison& c);

}  // namespace tessera::compare
