// tessera-cli session FILE.tessera: a summary of a saved session — the model and whether it still matches,
// its branches, and the shown (or named: FILE#BRANCH) branch's pipeline options, overrides and stored results.
// With --check it also compiles the session as the window would open it and refuses (exit 2, one line) a
// session whose overrides are stale or refused or whose schedule traces do not replay.
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "compare/compare.h"
#include "driver/driver.h"
#include "ir/error.h"
#include "runtime/execute/executor.h"
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

// The session's schedule_traces (group key → trace) as the window restores them.
execute::ScheduleSet scheduleTracesOf(const Session& s, const std::string& file) {
  execute::ScheduleSet set;
  for (const auto& [key, trace] : s.scheduleTraces.items()) {
    try {
      set.traces[key] = kernel::Trace::fromJson(trace);
    } catch (const Error& e) {
      fail(file + ": schedule_traces['" + key + "']: " + e.what());
    }
  }
  return set;
}

// Compiles the session's model under its options and schedules; the first override that is not applied or
// schedule that does not replay fails, naming the file.
void checkSession(const Session& s, const std::string& file) {
  driver::DriverOptions options;
  options.compile = compileOptionsOf(s);
  options.schedules = scheduleTracesOf(s, file);
  options.useTuned = false;
  driver::Driver d(std::make_shared<const Graph>(loadSessionModel(s)), options);
  std::shared_ptr<const CompileResult> compiled = d.compiled();
  if (!compiled->error.empty()) fail(file + ": the compile fails: " + compiled->error);
  for (const OverrideStatus& st : compiled->overrides)
    if (st.status != OverrideState::Applied)
      fail(file + ": override " + overrideToJson(st.override).dump() + " is " + overrideStateName(st.status) + ": " +
           (st.rule.empty() ? "" : st.rule + ": ") + st.detail);
  for (const std::string& stale : d.kernels()->model.staleSchedules) fail(file + ": schedule_traces: " + stale);
}

// The window's branch actions from the command line: each changes the shown branch, then the file is saved.
struct Edits {
  std::string file, newBranch, overrides, run;
  bool any() const { return !newBranch.empty() || !overrides.empty() || !run.empty(); }
};

void applyEdits(Session& s, const Edits& e) {
  if (!e.newBranch.empty()) {
    std::vector<SessionBranch> all = allBranches(s);
    SessionBranch copy = activeBranch(s);
    copy.name = e.newBranch;
    all.push_back(copy);
    setBranches(s, std::move(all), e.newBranch);  // refuses a name that is taken
  }
  if (!e.overrides.empty()) {
    s.overrides = loadOverrides(e.overrides);
    s.lastRun = nlohmann::json::object();  // the stored run was of the old overrides
  }
  if (!e.run.empty()) {
    compare::Side side = compare::sideFromSession(s, std::make_shared<const Graph>(loadSessionModel(s)), nullptr);
    compare::runSide(side, execute::parseBackend(e.run), 5);
    s.lastRun = side.run->toJson();
  }
}

}  // namespace

void addSessionCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("session", "Summarize (or edit) a .tessera session: model, hash status, branches, options, overrides");
  auto e = std::make_shared<Edits>();
  auto check = std::make_shared<bool>(false);
  cmd->add_option("FILE", e->file, "Session file (.tessera), or FILE.tessera#BRANCH for one branch")->required();
  cmd->add_option("--new-branch", e->newBranch, "Add a branch NAME, a copy of the shown one, and show it (saved)");
  cmd->add_option("--overrides", e->overrides, "Set the shown branch's overrides from a JSON file (saved)");
  cmd->add_option("--run", e->run, "Run the shown branch on this backend and store the run in it (saved)")
      ->check(CLI::IsMember({"reference", "cpu", "cuda"}));
  cmd->add_flag("--check", *check,
                "Also compile it as the window would open it: exit 2 when an override is stale or refused or a "
                "schedule trace does not replay");
  cmd->callback([e, check, &exitCode] {
    Session s = loadSessionRef(e->file);
    if (e->any()) {
      applyEdits(s, *e);
      saveSession(s, parseSessionRef(e->file).path);
    }
    printSummary(s);
    if (*check) checkSession(s, e->file);
    exitCode = 0;
  });
}

}  // namespace tessera::cli
