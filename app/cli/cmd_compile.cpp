// tessera-cli compile: runs the pass pipeline and fusion, printing the recorded steps, the fused graph, the
// fusion decisions, override statuses and the memory plan (as text, or as one JSON object with --json).
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "app/cli/commands.h"
#include "frontend/model_io.h"
#include "frontend/text/tsr.h"
#include "driver/driver.h"
#include "io/atomic_file.h"
#include "fusion/report.h"
#include "codegen/codegen.h"
#include "kernel/printer.h"
#include "kernel/templates/templates.h"
#include <fstream>
#include <sstream>
#include "ir/error.h"
#include "passes/pipelines.h"
#include "session/session.h"

namespace tessera::cli {
namespace {

struct CompileArgs {
  std::string model, pipeline = "default", printAfter, stopAfter, overrides, emit, arch, saveSchedules, schedules;
  std::string tf32 = "off";
  std::string saveSession;  // --save-session: the model, options and overrides as a .tessera file
  bool embedModel = false;
  std::vector<std::string> disabled, params;
  int64_t fuel = -1;
  bool printAfterAll = false, explain = false, memory = false, json = false;
};

constexpr int64_t kElideAbove = 16;  // weights as placeholders, so the IR stays readable

void printText(const CompileResult& r, const CompileArgs& a) {
  for (const Step& s : r.steps) {
    bool show = a.printAfterAll || s.pass == a.printAfter;
    if (!show) continue;
    std::printf("%s\n", stepHeader(s).c_str());
    if (s.changed && s.graph) std::fputs(printTsr(*s.graph, {.elideAbove = kElideAbove}).c_str(), stdout);
  }
  if (a.emit == "graph" && r.graph) std::fputs(printTsr(*r.graph, {.elideAbove = kElideAbove}).c_str(), stdout);
  if (a.emit == "fused") std::fputs(printFused(r).c_str(), stdout);
  if (a.explain && r.fusion) std::fputs(explainFusion(*r.fusion).c_str(), stdout);
  std::fputs(describeOverrides(r.overrides).c_str(), stdout);
  if (a.memory) std::fputs(describeMemory(r.memory).c_str(), stdout);
  if (a.emit.empty() && !a.printAfterAll && a.printAfter.empty() && !a.explain && !a.memory && r.fusion)
    std::printf("%zu steps, %zu kernels for %zu nodes\n", r.steps.size(), r.fusion->groups.size(),
                r.graph ? r.graph->numNodes() : 0);
}

// --print-after of a pass that never runs would print nothing; say so instead.
void checkPrintAfter(const CompileArgs& a) {
  if (a.printAfter.empty() || a.printAfter == "fuse") return;
  for (const std::string& name : resolvePipeline(a.pipeline))
    if (name == a.printAfter) return;
  fail("cannot print after pass '" + a.printAfter + "': it is not in the pipeline '" + a.pipeline + "'");
}

// Schedule files: JSON a person or `compile --save-schedules` wrote; 64 MiB is far past any model's.
std::string readFile(const std::string& path) { return readWholeFile(path, int64_t(1) << 26); }

// --param GROUP.NAME=VALUE (the schedule panel's parameter edit): the group's template with those parameters
// (the rest at their defaults) replaces its schedule in `saved`.
void applyParamOptions(driver::Driver& d, const std::vector<std::string>& options, execute::ScheduleSet& saved) {
  std::map<std::string, kernel::TemplateParams> byGroup;
  for (const std::string& o : options) {
    size_t dot = o.find('.'), eq = o.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      fail("--param '" + o + "': expected GROUP.NAME=VALUE (e.g. k0.block_m=64)");
    std::string value = o.substr(eq + 1);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
    }
    if (value.empty() || used != value.size()) fail("--param '" + o + "': '" + value + "' is not an integer");
    byGroup[o.substr(0, dot)][o.substr(dot + 1, eq - dot - 1)] = v;
  }
  d.setSchedules(saved);
  const execute::CompiledModel& m = d.kernels()->model;
  for (const auto& [group, params] : byGroup) {
    const std::string& id = group;  // clang 14 cannot capture a structured binding
    auto it = std::find_if(m.kernels.begin(), m.kernels.end(), [&](const auto& ck) { return ck.spec.id == id; });
    if (it == m.kernels.end()) fail("--param: no kernel '" + group + "' in the fused graph");
    try {
      saved.traces[execute::ScheduleSet::keyOf(it->spec.nodeIds)] = kernel::traceOnEitherMachine(*m.graph, it->spec, params);
    } catch (const std::exception& e) {
      fail("--param for kernel " + group + ": " + e.what());
    }
  }
}

// Kernel `i` at the emitted stage (kernel IR, CUDA, C++ or PTX; none for other stages): its text, or an error.
// `ptx`: the Ptx stage, compiled once for all kernels (null for the other stages).
std::pair<std::string, std::string> kernelAt(driver::Driver& d, std::optional<driver::Stage> stage, size_t i,
                                             const driver::PtxStage* ptx) {
  const execute::CompiledKernel& ck = d.kernels()->model.kernels[i];
  if (!stage) return {"", ""};
  if (ck.onHost()) return {"// kernel " + ck.spec.id + " " + ck.placement.describe(), ""};  // not an error: shown
  switch (*stage) {
    case driver::Stage::Kernel: return {kernel::printKernel(ck.kernel), ""};
    case driver::Stage::Cuda:
    case driver::Stage::Cpp: {
      auto s = d.source(*stage == driver::Stage::Cuda ? codegen::Target::Cuda : codegen::Target::Cpu);
      return {s->generated[i].source, s->errors[i]};
    }
    case driver::Stage::Ptx: return {ptx->ptx[i], ptx->errors[i]};
    default: return {"", ""};
  }
}

// --emit kernel|cuda|ptx|cpp and the schedule files: lower and schedule every group, print each level.
int emitKernels(driver::Driver& d, const CompileArgs& a) {
  execute::ScheduleSet saved;
  if (!a.schedules.empty()) saved = execute::ScheduleSet::load(readFile(a.schedules));
  if (!a.params.empty()) applyParamOptions(d, a.params, saved);
  d.setSchedules(saved);
  const execute::CompiledModel& m = d.kernels()->model;
  int rc = 0;
  for (const auto& s : m.staleSchedules) std::fprintf(stderr, "stale schedule: %s\n", s.c_str());
  if (!a.saveSchedules.empty()) {
    // The shown (GPU) stage's traces, and what --schedules and --param gave, which may be the cpu form's.
    execute::ScheduleSet out = m.schedules();
    for (const auto& [key, trace] : saved.traces) out.traces[key] = trace;
    writeFileAtomically(a.saveSchedules, out.save());
  }
  const std::optional<driver::Stage> stage = driver::stageNamed(a.emit);
  const auto ptx = stage == driver::Stage::Ptx ? d.ptx(a.arch) : nullptr;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    auto [text, error] = kernelAt(d, stage, i, ptx.get());
    if (!error.empty()) {
      std::fprintf(stderr, "kernel %s: %s\n", m.kernels[i].spec.id.c_str(), error.c_str());
      rc = 2;
      if (stage != driver::Stage::Ptx) continue;  // PTX prints what NVRTC gave
    }
    std::fputs((text + "\n").c_str(), stdout);
  }
  return rc;
}

int runCompile(const CompileArgs& a) {
  checkPrintAfter(a);
  CompileOptions options;
  options.pipeline = a.pipeline;
  options.stopAfter = a.stopAfter;
  options.disabled = {a.disabled.begin(), a.disabled.end()};
  if (a.fuel >= 0) options.fuel = a.fuel;
  if (!a.overrides.empty()) options.overrides = loadOverrides(a.overrides);
  driver::DriverOptions driverOptions;
  driverOptions.compile = options;
  driverOptions.tf32 = kernel::Tf32Policy::parse(a.tf32);
  driverOptions.useTuned = false;  // compile prints the defaults or the given schedules; `run` adds the cache's
  driver::Driver d(std::make_shared<const Graph>(loadModel(a.model)), driverOptions);
  const CompileResult& r = *d.compiled();
  if (!a.saveSession.empty()) {
    Session session = sessionForModel(a.model, a.embedModel);
    setCompileOptions(session, options);
    saveSession(session, a.saveSession);
  }
  if (a.json) {
    ReportJsonOptions jo;
    if (a.printAfterAll) jo.irAfter.insert("*");
    if (!a.printAfter.empty()) jo.irAfter.insert(a.printAfter);
    jo.elideAbove = kElideAbove;
    std::fputs(compileReportJson(r, jo).c_str(), stdout);
  } else if (a.emit == "kernel" || a.emit == "cuda" || a.emit == "ptx" || a.emit == "cpp" ||
             !a.saveSchedules.empty() || !a.params.empty()) {
    if (!r.error.empty()) {
      std::fprintf(stderr, "error: %s\n", r.error.c_str());
      return 2;
    }
    return emitKernels(d, a);
  } else {
    printText(r, a);
  }
  if (r.error.empty()) return 0;
  std::fprintf(stderr, "error: %s\n", r.error.c_str());
  return 2;
}

}  // namespace

void addCompileCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("compile", "Run the pass pipeline and fusion, showing each step and decision");
  auto a = std::make_shared<CompileArgs>();
  cmd->add_option("MODEL", a->model, "Model file (.onnx or .tsr)")->required();
  cmd->add_option("--pipeline", a->pipeline, "Pipeline name (default, o0, no-decompose, nhwc) or a comma list");
  auto* all = cmd->add_flag("--print-after-all", a->printAfterAll, "Print each step's header and changed IR");
  cmd->add_option("--print-after", a->printAfter, "Print the step of this pass")->excludes(all);
  cmd->add_option("--stop-after", a->stopAfter, "Stop after this pass (fuse included)");
  cmd->add_option("--disable-pass", a->disabled, "Skip this pass (repeatable; 'fuse' turns fusion off)");
  cmd->add_option("--fuel", a->fuel, "Allow N rewrites in total (fused edges count), to bisect a bad one")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--overrides", a->overrides, "JSON file of overrides (docs/fusion.md)");
  std::vector<std::string> emittable;  // every stage but run, from the driver's table
  for (const driver::StageInfo& s : driver::stages())
    if (s.stage != driver::Stage::Run) emittable.emplace_back(s.name);
  cmd->add_option("--emit", a->emit, "Print the final graph, the fused graph, kernel IR, CUDA, C++ or PTX")
      ->check(CLI::IsMember(emittable));
  cmd->add_option("--arch", a->arch, "CUDA architecture for --emit ptx (default sm_90)");
  addTf32Option(cmd, a->tf32);
  cmd->add_option("--save-schedules", a->saveSchedules, "Write every kernel's schedule trace (JSON) to FILE");
  cmd->add_option("--schedules", a->schedules, "Replay the schedules saved in FILE instead of the template defaults");
  cmd->add_option("--param", a->params,
                  "GROUP.NAME=VALUE: schedule the group by its template with this parameter (repeatable; e.g. "
                  "k0.tf32=1); with --save-schedules, for run --schedules");
  auto* save = cmd->add_option("--save-session", a->saveSession, "Save the model, options and overrides as a .tessera session");
  cmd->add_flag("--embed-model", a->embedModel, "With --save-session: also embed the model as .tsr text")->needs(save);
  cmd->add_flag("--explain-fusion", a->explain, "One line per fusion decision: verdict, rule, reason");
  cmd->add_flag("--memory", a->memory, "Print the memory plan");
  cmd->add_flag("--json", a->json, "Print one JSON object (steps, groups, decisions, overrides, memory)");
  cmd->callback([a, &exitCode] { exitCode = runCompile(*a); });
}

}  // namespace tessera::cli
