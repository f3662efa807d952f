// tessera-cli compare A B: two models, sessions or session branches (SESSION#BRANCH) side by side — the summary,
// node and fusion group changes, the runs joined per kernel, and the text diff of each level asked for.
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "compare/compare.h"
#include "ir/error.h"
#include "runtime/execute/executor.h"

namespace tessera::cli {
namespace {

struct CompareArgs {
  std::string a, b, run, stepA, stepB;
  std::vector<std::string> levels, mapping;
  int reps = 5;
  bool json = false;
};

compare::CompareOptions optionsOf(const CompareArgs& args) {
  compare::CompareOptions o;
  if (!args.levels.empty()) o.levels.clear();
  for (const std::string& l : args.levels) {
    const auto stage = driver::stageNamed(l);
    if (!stage || *stage == driver::Stage::Run) fail("--level " + l + ": not a level (graph, fused, kernel, cuda, cpp, ptx)");
    o.levels.push_back(*stage);
  }
  for (const std::string& m : args.mapping) {
    const size_t eq = m.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) fail("--map " + m + ": expected A_NODE=B_NODE");
    o.mapping[m.substr(0, eq)] = m.substr(eq + 1);
  }
  return o;
}

std::string groupList(const std::vector<std::string>& groups) {
  std::string s;
  for (const std::string& g : groups) s += (s.empty() ? "" : ",") + g;
  return s.empty() ? "-" : s;
}

void printKernels(const compare::Comparison& c) {
  if (c.kernels.empty()) return std::printf("runs: %s\n", "none stored (--run BACKEND runs both)"), void();
  std::printf("%-10s %-12s %-12s %10s %10s %10s %10s\n", "change", c.labelA.substr(0, 12).c_str(),
              c.labelB.substr(0, 12).c_str(), "ms A", "ms B", "delta ms", "abs err B");
  for (const compare::KernelDelta& k : c.kernels)
    std::printf("%-10s %-12s %-12s %10.4f %10.4f %+10.4f %10.2g\n", compare::groupChangeName(k.groups.kind).c_str(),
                groupList(k.groups.a).c_str(), groupList(k.groups.b).c_str(), k.msA, k.msB, k.deltaMs(), k.maxAbsErrB);
}

void printText(const compare::Comparison& c) {
  std::printf("%s\n", c.summary.c_str());
  for (const std::string& n : c.notes) std::printf("note: %s\n", n.c_str());
  for (const std::string& id : c.nodes.removed) std::printf("node removed: %s\n", id.c_str());
  for (const std::string& id : c.nodes.added) std::printf("node added: %s\n", id.c_str());
  for (const compare::NodeMatch& m : c.nodes.matched)
    if (m.changed || m.by != compare::MatchBy::Id)
      std::printf("node %s: %s -> %s (matched by %s)\n", m.changed ? "changed" : "matched", m.a.c_str(), m.b.c_str(),
                  compare::matchByName(m.by).c_str());
  for (const compare::GroupChange& g : c.groups)
    if (g.kind != compare::GroupChange::Same)
      std::printf("group %s: %s -> %s\n", compare::groupChangeName(g.kind).c_str(), groupList(g.a).c_str(),
                  groupList(g.b).c_str());
  printKernels(c);
  for (const compare::LevelDiff& l : c.levels) {
    std::printf("--- %s: +%d -%d lines\n", std::string(driver::stageInfo(l.level).name).c_str(), l.added, l.removed);
    if (l.added || l.removed) std::fputs(compare::diffText(l.lines, 3).c_str(), stdout);
  }
}

int runCompare(const CompareArgs& args) {
  const compare::CompareOptions options = optionsOf(args);
  std::vector<std::string> notes;
  compare::Side a = compare::sideFromRef(args.a, &notes), b = compare::sideFromRef(args.b, &notes);
  if (a.label == b.label) a.label = args.a, b.label = args.b;  // two sessions both on "main": say which file
  if (!args.run.empty() && (!args.stepA.empty() || !args.stepB.empty()))
    fail("--run with --step-a/--step-b: a pass step is compared as a graph, not run");
  compare::stopSideAfter(a, args.stepA);
  compare::stopSideAfter(b, args.stepB);
  if (!args.run.empty()) {
    compare::runSide(a, execute::parseBackend(args.run), args.reps);
    compare::runSide(b, execute::parseBackend(args.run), args.reps);
  }
  compare::Comparison c = compare::compareSides(a, b, options);
  c.notes.insert(c.notes.begin(), notes.begin(), notes.end());
  if (args.json) std::printf("%s\n", c.toJson().dump(2).c_str());
  else printText(c);
  return 0;
}

}  // namespace

void addCompareCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("compare", "Compare two models, sessions or session branches (SESSION#BRANCH)");
  auto args = std::make_shared<CompareArgs>();
  cmd->add_option("A", args->a, "Model (.onnx, .tsr), session (.tessera) or SESSION.tessera#BRANCH")->required();
  cmd->add_option("B", args->b, "The other side, in the same forms")->required();
  cmd->add_option("--level", args->levels, "Levels to diff as text: graph, fused, kernel, cuda, cpp, ptx (default graph and fused)")
      ->take_all();
  cmd->add_option("--map", args->mapping, "Match node A_NODE of A with B_NODE of B (A_NODE=B_NODE), before any other rule")
      ->take_all();
  cmd->add_option("--step-a", args->stepA, "Compare A at this pass step: its pipeline stopped after PASS (graphs only before fuse)");
  cmd->add_option("--step-b", args->stepB, "The same for B (A and B may be one model at two steps)");
  cmd->add_option("--run", args->run, "Run both sides on this backend first (else the sessions' stored runs are joined)")
      ->check(CLI::IsMember({"reference", "cpu", "cuda"}));
  cmd->add_option("--reps", args->reps, "With --run: timed repetitions per kernel")->check(CLI::Range(1, 10000));
  cmd->add_flag("--json", args->json, "Print the comparison as JSON");
  cmd->callback([args, &exitCode] { exitCode = runCompare(*args); });
}

}  // namespace tessera::cli
