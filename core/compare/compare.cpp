// Comparing two sides: compile each through its own driver, match, diff each level's text, join the runs.
#include "compare/compare.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "driver/driver.h"
#include "frontend/model_io.h"
#include "frontend/text/tsr.h"
#include "fusion/report.h"
#include "ir/error.h"
#include "kernel/printer.h"

namespace tessera::compare {
namespace {

using nlohmann::json;

// printf into a string (the summary's few numbers).
template <class... Args>
std::string format(const char* form, Args... args) {
  char buf[128];
  std::snprintf(buf, sizeof buf, form, args...);
  return buf;
}

execute::ScheduleSet schedulesOf(const nlohmann::json& traces) {
  execute::ScheduleSet s;
  for (const auto& [key, trace] : traces.items()) s.traces[key] = kernel::Trace::fromJson(trace);
  return s;
}

// Every kernel's text at a kernel level, one block each, headed by its id (an error stands in for the text).
std::string kernelsText(driver::Driver& d, driver::Stage level, const CancelToken& cancel) {
  const auto kernels = d.kernels(cancel);
  std::shared_ptr<const driver::SourceStage> source;
  std::shared_ptr<const driver::PtxStage> ptx;
  if (level == driver::Stage::Cuda || level == driver::Stage::Cpp)
    source = d.source(level == driver::Stage::Cuda ? codegen::Target::Cuda : codegen::Target::Cpu, cancel);
  if (level == driver::Stage::Ptx) ptx = d.ptx({}, {}, cancel);
  std::string text;
  for (size_t i = 0; i < kernels->model.kernels.size(); ++i) {
    const execute::CompiledKernel& k = kernels->model.kernels[i];
    text += "// kernel " + k.spec.id + "\n";
    if (k.onHost()) text += "// " + k.placement.describe() + "\n";
    else if (level == driver::Stage::Kernel) text += kernel::printKernel(k.kernel);
    else if (source) text += source->errors[i].empty() ? source->generated[i].source : "// " + source->errors[i] + "\n";
    else if (ptx) text += ptx->errors[i].empty() ? ptx->ptx[i] : "// " + ptx->errors[i] + "\n";
    if (!text.ends_with('\n')) text += '\n';
  }
  return text;
}

std::string levelText(driver::Driver& d, const CompileResult& r, driver::Stage level, const CancelToken& cancel) {
  switch (level) {
    case driver::Stage::Graph: return r.graph ? printTsr(*r.graph, {.elideAbove = 16}) : std::string();
    case driver::Stage::Fused: return printFused(r);
    case driver::Stage::Run: return {};
    default: return kernelsText(d, level, cancel);
  }
}

LevelDiff diffLevel(driver::Stage level, const std::string& a, const std::string& b) {
  LevelDiff l;
  l.level = level;
  l.lines = diffLines(splitLines(a), splitLines(b));
  for (const DiffLine& d : l.lines) {
    l.added += d.kind == DiffLine::Added;
    l.removed += d.kind == DiffLine::Removed;
  }
  return l;
}

// The side's kernels by group id: time (-1 when any did not run), worst error, all verified.
struct Summed {
  double ms = 0, err = -1;
  bool verified = true;
};
Summed sumOver(const std::vector<std::string>& groups, const execute::RunReport& r) {
  Summed s;
  for (const std::string& g : groups) {
    auto k = std::find_if(r.kernels.begin(), r.kernels.end(), [&](const auto& k) { return k.group == g; });
    if (k == r.kernels.end() || k->ms < 0 || s.ms < 0) s.ms = -1;
    else s.ms += k->ms;
    if (k != r.kernels.end() && k->verified) s.err = std::max(s.err, k->maxAbsErr);
    s.verified = s.verified && k != r.kernels.end() && k->verified;
  }
  if (groups.empty()) s = {-1, -1, false};
  return s;
}

double maxAbsErr(const execute::RunReport& r) {
  double e = -1;
  for (const auto& k : r.kernels)
    if (k.verified) e = std::max(e, k.maxAbsErr);
  return e;
}

// A side stopped at a pass step (options.stopAfter before fusion) has a graph and no kernels.
std::shared_ptr<const CompileResult> compileSide(driver::Driver& d, const Side& s, const CancelToken& cancel) {
  auto r = d.compiled(cancel);
  if (!r->error.empty()) fail(s.label + ": compile: " + r->error);
  if (!r->fusion && s.options.stopAfter.empty())
    fail(s.label + ": compile: the pipeline stops before fusion (no kernels to compare)");
  return r;
}

}  // namespace

Side sideFromBranch(const SessionBranch& b, std::shared_ptr<const Graph> model, std::vector<std::string>* notes) {
  Side side{b.name, std::move(model), compileOptionsOf(b), schedulesOf(b.scheduleTraces), std::nullopt};
  if (b.lastRun.is_object() && !b.lastRun.empty()) {
    try {
      side.run = execute::RunReport::fromJson(b.lastRun);
    } catch (const std::exception& e) {
      if (notes) notes->push_back("branch " + b.name + ": the stored run was left out: " + e.what());
    }
  }
  return side;
}

Side sideFromSession(const Session& s, std::shared_ptr<const Graph> model, std::vector<std::string>* notes) {
  return sideFromBranch(activeBranch(s), std::move(model), notes);
}

void runSide(Side& side, execute::BackendKind backend, int reps, const CancelToken& cancel) {
  driver::DriverOptions o;
  o.compile = side.options;
  o.schedules = side.schedules;
  o.useTuned = false;
  o.backend = backend;
  driver::Driver d(side.model, o);
  if (const auto r = d.compiled(cancel); !r->error.empty()) fail(side.label + ": compile: " + r->error);
  driver::RunRequest request;
  request.reps = reps;
  request.warmup = 1;
  request.baseline = false;
  side.run = d.run(request, cancel)->report;
}

Side sideFromRef(const std::string& ref, std::vector<std::string>* notes) {
  if (!isSessionPath(ref)) {
    Side side;
    side.label = std::filesystem::path(ref).filename().string();
    side.model = std::make_shared<const Graph>(loadModel(ref));
    return side;
  }
  const Session s = loadSessionRef(ref);
  if (notes)
    for (const std::string& w : s.warnings) notes->push_back(w);
  return sideFromSession(s, std::make_shared<const Graph>(loadSessionModel(s)), notes);
}

void stopSideAfter(Side& side, const std::string& pass) {
  if (pass.empty()) return;
  side.options.stopAfter = pass;
  side.label += " @ " + pass;
  side.run.reset();
}

std::vector<KernelDelta> joinRuns(const std::vector<GroupChange>& groups, const execute::RunReport* a,
                                  const execute::RunReport* b) {
  std::vector<KernelDelta> out;
  for (const GroupChange& g : groups) {
    KernelDelta d;
    d.groups = g;
    if (a && a->ran) {
      const Summed s = sumOver(g.a, *a);
      d.msA = s.ms, d.maxAbsErrA = s.err, d.verifiedA = s.verified;
    }
    if (b && b->ran) {
      const Summed s = sumOver(g.b, *b);
      d.msB = s.ms, d.maxAbsErrB = s.err, d.verifiedB = s.verified;
    }
    out.push_back(d);
  }
  return out;
}

std::string summaryLine(const Comparison& c) {
  std::string s = c.labelB + " vs " + c.labelA + ": ";
  const bool fused = c.compileA && c.compileB && c.compileA->fusion && c.compileB->fusion;
  const size_t changedNodes = size_t(std::count_if(c.nodes.matched.begin(), c.nodes.matched.end(), [](auto& m) { return m.changed; }));
  if (c.compileA && c.compileB && !fused)  // pass steps before fusion: graphs alone
    return s + format("graphs compared, %zu nodes against %zu (nodes +%zu -%zu ~%zu)", c.compileB->graph->numNodes(),
                      c.compileA->graph->numNodes(), c.nodes.added.size(), c.nodes.removed.size(), changedNodes);
  const long dk = long(c.kernelsB) - long(c.kernelsA);
  if (dk == 0) s += format("same kernel count (%zu)", c.kernelsA);
  else s += format("%ld kernel%s %s", std::abs(dk), std::abs(dk) == 1 ? "" : "s", dk < 0 ? "fewer" : "more");
  if (c.totalMsA > 0 && c.totalMsB > 0) {
    const double ratio = c.totalMsA / c.totalMsB;
    s += ratio >= 1 ? format(", %.2fx faster", ratio) : format(", %.2fx slower", 1 / ratio);
  } else {
    s += ", not run on both";
  }
  if (c.maxAbsErrB >= 0) s += format(", max abs error %.1e", c.maxAbsErrB);
  s += format(" (nodes +%zu -%zu ~%zu)", c.nodes.added.size(), c.nodes.removed.size(), changedNodes);
  return s;
}

Comparison compareSides(const Side& a, const Side& b, const CompareOptions& o) {
  auto driverFor = [](const Side& s) {
    driver::DriverOptions d;
    d.compile = s.options;
    d.schedules = s.schedules;
    d.useTuned = false;  // the sides' own schedules (saved traces, else defaults): the same on every machine
    return std::make_unique<driver::Driver>(s.model, d);
  };
  auto da = driverFor(a), db = driverFor(b);
  const auto ra = compileSide(*da, a, o.cancel), rb = compileSide(*db, b, o.cancel);
  Comparison c;
  c.labelA = a.label;
  c.labelB = b.label;
  c.compileA = ra;
  c.compileB = rb;
  c.nodes = matchNodes(*ra, *rb, o.mapping);
  for (const auto& [na, nb] : o.mapping)  // matchNodes skips an id the compiled graph lacks: say which
    if (!ra->graph->findNode(na) || !rb->graph->findNode(nb))
      c.notes.push_back("node mapping " + na + "=" + nb + ": '" + (ra->graph->findNode(na) ? nb : na) +
                        "' is not in the compiled graph (absent, or a pass rewrote it), so it was not applied");
  const bool fused = ra->fusion && rb->fusion;  // pass steps before fusion compare graphs alone
  if (fused) c.groups = matchGroups(*ra->fusion, *rb->fusion, c.nodes);
  else c.notes.push_back("a side stops before fusion: its graph is compared, not its kernels");
  c.kernelsA = ra->fusion ? ra->fusion->groups.size() : 0;
  c.kernelsB = rb->fusion ? rb->fusion->groups.size() : 0;
  for (driver::Stage level : o.levels) {
    if (level == driver::Stage::Run || (!fused && level != driver::Stage::Graph)) continue;
    c.levels.push_back(diffLevel(level, levelText(*da, *ra, level, o.cancel), levelText(*db, *rb, level, o.cancel)));
  }
  const execute::RunReport* runA = a.run && a.run->ran ? &*a.run : nullptr;
  const execute::RunReport* runB = b.run && b.run->ran ? &*b.run : nullptr;
  if (fused && (runA || runB)) c.kernels = joinRuns(c.groups, runA, runB);
  if (runA && fused) c.totalMsA = runA->totalMs;
  if (runB && fused) c.totalMsB = runB->totalMs, c.maxAbsErrB = maxAbsErr(*runB);
  c.summary = summaryLine(c);
  return c;
}

json Comparison::toJson() const {
  json matched = json::array(), groupsJ = json::array(), kernelsJ = json::array(), levelsJ = json::array();
  for (const NodeMatch& m : nodes.matched)
    matched.push_back({{"a", m.a}, {"b", m.b}, {"by", matchByName(m.by)}, {"changed", m.changed}});
  for (const GroupChange& g : groups) groupsJ.push_back({{"kind", groupChangeName(g.kind)}, {"a", g.a}, {"b", g.b}});
  for (const KernelDelta& k : kernels)
    kernelsJ.push_back({{"kind", groupChangeName(k.groups.kind)}, {"a", k.groups.a}, {"b", k.groups.b},
                        {"ms_a", k.msA}, {"ms_b", k.msB}, {"delta_ms", k.deltaMs()},
                        {"max_abs_err_a", k.maxAbsErrA}, {"max_abs_err_b", k.maxAbsErrB},
                        {"verified_a", k.verifiedA}, {"verified_b", k.verifiedB}});
  for (const LevelDiff& l : levels)
    levelsJ.push_back({{"level", std::string(driver::stageInfo(l.level).name)}, {"added", l.added},
                       {"removed", l.removed}, {"diff", diffText(l.lines, 3)}});
  return json{{"a", labelA}, {"b", labelB}, {"summary", summary},
              {"kernels_a", kernelsA}, {"kernels_b", kernelsB}, {"total_ms_a", totalMsA}, {"total_ms_b", totalMsB},
              {"max_abs_err_b", maxAbsErrB},
              {"nodes", {{"matched", matched}, {"removed", nodes.removed}, {"added", nodes.added}}},
              {"groups", groupsJ}, {"kernels", kernelsJ}, {"levels", levelsJ}, {"notes", notes}};
}

}  // namespace tessera::compare
