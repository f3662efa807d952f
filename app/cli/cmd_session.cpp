// tessera-cli session FILE.tessera: a summary of a saved session — the model and whether it still matches,
// its branches, and the shown (or named: FILE#BRANCH) branch's pipeline options, overrides and stored results.
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "session/session.h"

namespace tessera::cli {
namespace {

std::string modelStatus(const Session& s) {
  if (s.modelMissing) return s.model.embeddedTsr ? "missing (embedded copy used)" : "missing";
  if (s.modelChanged) return "changed since saved";
  if (s.model.hash.empty()) return s.model.path.empty() ? "embedded only" : "not checked (no hash saved)";
  return "unchanged";
}

std::string stored(const nlohmann::json& j) {
  return j.empty() ? "none" : std::to_string(j.size()) + (j.size() == 1 ? " entry" : " entries");
}

void printSummary(const Session& s) {
  std::printf("model: %s\n", s.model.path.empty() ? "(embedded)" : s.model.path.c_str());
  std::printf("hash: %s (%s)\n", s.model.hash.empty() ? "-" : s.model.hash.c_str(), modelStatus(s).c_str());
  std::printf("embedded model: %s\n", s.model.embeddedTsr ? "yes" : "no");
  std::string branches;
  for (const std::string& b : branchNames(s)) branches += (branches.empty() ? "" : ", ") + b + (b == s.branch ? " (shown)" : "");
  std::printf("branches: %s\n", branches.c_str());
  std::string disabled;
  for (const std::string& p : s.pipeline.disabled) disabled += (disabled.empty() ? "" : ",") + p;
  std::printf("pipeline: %s, disabled: %s, stop after: %s, fuel: %s\n", s.pipeline.name.c_str(),
              disabled.empty() ? "-" : disabled.c_str(), s.pipeline.stopAfter.empty() ? "-" : s.pipeline.stopAfter.c_str(),
              s.pipeline.fuel ? std::to_string(*s.pipeline.fuel).c_str() : "-");
  std::printf("overrides: %zu\n", s.overrides.size());
  for (const Override& o : s.overrides) {
    std::string what = o.kind == OverrideKind::Split ? o.group : o.kind == OverrideKind::DisablePass
                                                                   ? o.pass : o.producer + " -> " + o.consumer;
    std::printf("  %s %s\n", std::string(overrideKindName(o.kind)).c_str(), what.c_str());
  }
  std::printf("schedule traces: %s\n", stored(s.scheduleTraces).c_str());
  std::printf("tuning results: %s\n", stored(s.tuning).c_str());
  std::printf("last run: %s\n", s.lastRun.empty() ? "not stored" : "stored");
  std::printf("view state: %s\n", s.view.empty() ? "not stored" : "stored");
  for (const std::string& w : s.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
}

}  // namespace

void addSessionCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("session", "Summarize a .tessera session: model, hash status, options, overrides");
  auto file = std::make_shared<std::string>();
  cmd->add_option("FILE", *file, "Session file (.tessera), or FILE.tessera#BRANCH for one branch")->required();
  cmd->callback([file, &exitCode] {
    printSummary(loadSessionRef(*file));
    exitCode = 0;
  });
}

}  // namespace tessera::cli
