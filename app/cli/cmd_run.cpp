#include <spdlog/spdlog.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/cli/commands.h"
#include "frontend/model_io.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/text/tsr_syntax.h"
#include "ir/error.h"
#include "ops/specialize.h"
#include "driver/driver.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/run_export.h"
#include "runtime/reference/interpreter.h"
#include "io/atomic_file.h"
#include "io/npy.h"
#include "compare/tensor_values.h"

namespace tessera::cli {

namespace fs = std::filesystem;

namespace {
struct RunArgs {
  std::string model, backend = "reference", inputsDir, outputDir, schedules, arch, trace, tf32 = "off", memoryLimit;
  std::string overrides;  // --overrides: fusion overrides, as compile takes them
  uint64_t seed = 0;
  int reps = 10, repeat = 1;
  double budgetMs = 0;
  bool check = false, json = false, noTuned = false, noReference = false, noBaseline = false, noCache = false;
  std::vector<std::string> saveTensors;  // --save-tensors NAMES|all DIR
  double tensorBudgetMb = 1024;
};

std::vector<Tensor> loadInputs(const Graph& g, const RunArgs& args) {
  if (args.inputsDir.empty()) return randomInputs(g, args.seed);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    fs::path p = fs::path(args.inputsDir) / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) fail(p.string() + ": missing (graph input " + std::to_string(i) + " '" + g.inputs()[i]->name() + "')");
    inputs.push_back(readValueFile(p.string(), g.inputs()[i]->type()));
  }
  return inputs;
}

// The model and the inputs it runs on. A model with data-dependent shapes was specialized on the inputs a run
// feeds by default (ops/specialize.h); given others (--inputs, --seed), it is loaded again specialized on them.
Graph loadModelFor(const RunArgs& args, std::vector<Tensor>& inputs) {
  Graph g = loadModel(args.model);
  inputs = loadInputs(g, args);
  bool specialized = false;
  for (const Node* n : g.nodes()) specialized = specialized || isSpecialized(*n);
  if (!specialized || (args.inputsDir.empty() && args.seed == 0)) return g;
  std::map<std::string, Tensor> byName;
  for (size_t i = 0; i < inputs.size(); ++i) byName[g.inputs()[i]->name()] = inputs[i];
  return loadModel(args.model, byName);
}

// A short, stable summary of a tensor: its first values and their sum; of a sequence or optional, its count and
// its first elements'.
std::string summarize(const Tensor& t) {
  if (t.isContainer()) {
    const std::vector<Tensor>& e = t.elements();
    std::string s = std::to_string(e.size()) + (e.size() == 1 ? " tensor" : " tensors");
    for (size_t i = 0; i < std::min<size_t>(e.size(), 3); ++i) s += (i ? "; " : ": ") + e[i].type().toString() + " " + summarize(e[i]);
    return s + (e.size() > 3 ? "; ..." : "");
  }
  if (t.holdsStrings()) {
    std::string s;
    const std::vector<std::string>& v = t.strings();
    for (size_t i = 0; i < std::min<size_t>(v.size(), 6); ++i) s += (i ? ", " : "") + tsr::quoteString(v[i]);
    return "[" + s + (v.size() > 6 ? ", ..." : "") + "]";
  }
  std::string s;
  int64_t n = t.numElements();
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += t.getDouble(i);
  for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i) s += (i ? ", " : "") + fmt::format("{:.6g}", t.getDouble(i));
  if (n > 6) s += ", ...";
  return "[" + s + "] sum=" + fmt::format("{:.6g}", sum);
}

// Writes input_N.pb and output_N.pb: the layout of an ONNX backend test data set, so a run can become a test.
void saveDataSet(const Graph& g, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                 const std::string& dir) {
  fs::create_directories(dir);
  for (size_t i = 0; i < inputs.size(); ++i)
    writeValueFile(inputs[i], g.inputs()[i]->name(), (fs::path(dir) / ("input_" + std::to_string(i) + ".pb")).string());
  for (size_t i = 0; i < outputs.size(); ++i)
    writeValueFile(outputs[i], g.outputs()[i]->name(),
                         (fs::path(dir) / ("output_" + std::to_string(i) + ".pb")).string());
}

// Schedule files: JSON a person or `compile --save-schedules` wrote; 64 MiB is far past any model's.
std::string readText(const std::string& path) { return readWholeFile(path, int64_t(1) << 26); }

// --trace: the run as a Chrome trace (chrome://tracing, Perfetto), one event per kernel in execution order.
void writeTrace(const execute::RunReport& r, const std::string& path) {
  writeFileAtomically(path, execute::chromeTrace(r.toJson()).dump(1) + "\n");
}

void printReport(const execute::RunReport& r) {
  std::printf("backend %s on %s\n", r.backend.c_str(), r.device.c_str());
  if (!r.worker.empty()) std::printf("ran by the worker at %s\n", r.worker.c_str());
  for (const auto& k : r.kernels) {
    std::printf("  %-6s %9.4f ms (predicted %9.4f) %9.2f GB/s %9.2f GFLOP/s  %-12s max_rel_err %.3g", k.group.c_str(),
                k.ms, k.predictedMs, k.gbps, k.gflops, execute::kernelStatusName(k.status).c_str(), k.maxRelErr);
    if (!k.precision.empty()) std::printf("  precision %s", k.precision.c_str());
    if (k.onHost()) std::printf("  on host: %s", k.host.c_str());
    if (k.once) std::printf("  once (constant inputs: computed at load, not in the total)");
    std::printf("%s\n", k.message.empty() || k.host.ends_with(k.message) ? "" : ("  (" + k.message + ")").c_str());
  }
  std::printf("total %.4f ms, unfused baseline %.4f ms, outputs %s\n", r.totalMs, r.baselineTotalMs,
              r.outputsVerified ? "verified" : "NOT verified");
  if (r.onceMs > 0) std::printf("once at load %.4f ms (kernels of constants only)\n", r.onceMs);
  if (r.wholeMs >= 0) std::printf("whole run %.4f ms, kernel by kernel from the host", r.wholeMs);
  if (r.graphMs >= 0) std::printf("; %.4f ms as one CUDA graph", r.graphMs);
  if (r.wholeMs >= 0) std::printf("\n");
  if (!r.wholeNote.empty()) std::printf("whole run: %s\n", r.wholeNote.c_str());
  size_t cached = 0;
  for (const auto& k : r.kernels) cached += k.cached;
  std::printf("built in %.0f ms (%zu of %zu kernels from the module cache)\n", r.buildMs, cached, r.kernels.size());
  if (r.keptBytes > 0) std::printf("constants kept from the last run: %.1f MB (not copied again)\n", r.keptBytes / 1e6);
  for (const auto& m : r.messages) std::printf("note: %s\n", m.c_str());
}

// A value name as a file name: characters other than letters, digits, '.', '-' and '_' become '_'.
std::string fileNameOf(const std::string& value) {
  std::string out = value.empty() ? "_" : value;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out + ".npy";
}

// --save-tensors: the named values (comma list, or all) as .npy files, within the budget. A name the run does
// not hold fails the command; values past the budget are listed, not saved.
void saveTensors(const compare::Values& values, const RunArgs& args) {
  if (args.saveTensors.empty()) return;
  std::vector<std::string> names;
  if (args.saveTensors[0] != "all")
    for (std::stringstream list(args.saveTensors[0]); list.good();) {
      std::string name;
      std::getline(list, name, ',');
      if (!name.empty()) names.push_back(name);
    }
  const compare::KeptValues kept = compare::keepWithinBudget(values, names, int64_t(args.tensorBudgetMb * (1 << 20)));
  if (!kept.missing.empty())
    fail("--save-tensors: the run holds no value '" + kept.missing[0] +
         "' (kept are graph inputs, initializers and each kernel's outputs, not values inside a fused kernel)");
  fs::create_directories(args.saveTensors[1]);
  size_t saved = 0;
  for (const auto& [name, t] : kept.values) {
    if (t.holdsObjects()) {  // a sequence, optional or strings: .npy (of numbers) has no form for it
      std::printf("not saved: '%s' is a %s, not a tensor of numbers\n", name.c_str(), t.type().toString().c_str());
      continue;
    }
    writeNpy(t, (fs::path(args.saveTensors[1]) / fileNameOf(name)).string());
    ++saved;
  }
  std::printf("saved %zu tensors (%.1f MB) to %s\n", saved, double(kept.bytes) / (1 << 20), args.saveTensors[1].c_str());
  for (const std::string& d : kept.dropped)
    std::fprintf(stderr, "warning: --save-tensors: %s not saved (past the %.0f MB budget)\n", d.c_str(), args.tensorBudgetMb);
}

// As the window does: the cpu measured once (about a second, then cached), so the estimates printed beside the
// times are this CPU's, not cpu.json's defaults. A failure leaves the run as it is, with a note.
void estimateOnMeasuredCpu(driver::Driver& d, const driver::RunStage& run, execute::RunReport& r) {
  try {
    d.measuredTargetAfter(run, r);
  } catch (const std::exception& e) {
    r.messages.push_back(std::string("estimates: the cpu could not be measured: ") + e.what());
  }
}

// cpu and cuda: the driver compiles (passes + fusion), schedules (saved --schedules, else the tuning cache, else
// the defaults), generates, builds, runs, times and verifies every kernel.
int runCompiled(const RunArgs& args) {
  std::vector<Tensor> inputs;
  auto graph = std::make_shared<const Graph>(loadModelFor(args, inputs));
  driver::DriverOptions options;
  if (!args.overrides.empty()) options.compile.overrides = loadOverrides(args.overrides);
  if (!args.schedules.empty()) options.schedules = execute::ScheduleSet::load(readText(args.schedules));
  options.useTuned = !args.noTuned;
  options.tf32 = kernel::Tf32Policy::parse(args.tf32);
  const BackendChoice backend = chooseBackend(args.backend);
  options.backend = backend.kind;
  options.remote = backend.remote;
  options.arch = args.arch;
  driver::Driver d(graph, std::move(options));
  driver::RunRequest request;
  request.reps = args.reps;
  request.inputs = inputs;
  request.verify = !args.noReference;
  request.baseline = !args.noBaseline;
  request.moduleCache = !args.noCache;
  request.kernelBudgetMs = args.budgetMs;
  request.keepValues = !args.saveTensors.empty();
  request.memoryLimit = memoryLimitOption(args.memoryLimit);
  // --repeat: the window's Run pressed again, through the same driver (its compiled kernels and its RunSession
  // kept); each run's wall.
  std::shared_ptr<const driver::RunStage> run;
  std::vector<double> wallsMs;
  for (int i = 0; i < args.repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run = d.run(request);
    wallsMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  execute::RunReport r = run->report;
  if (backend.kind == execute::BackendKind::Cpu && backend.remote.empty() && r.ran) estimateOnMeasuredCpu(d, *run, r);
  if (!args.trace.empty() && r.ran) writeTrace(r, args.trace);
  if (args.json) {
    nlohmann::json j = r.toJson();
    if (args.repeat > 1) j["run_wall_ms"] = wallsMs;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    printReport(r);
  }
  if (args.repeat > 1 && !args.json) {
    std::printf("walls:");
    for (double ms : wallsMs) std::printf(" %.0f ms", ms);
    std::printf(" (run %d times through one driver, as the window's Run again)\n", args.repeat);
  }
  if (!args.outputDir.empty() && r.ran) saveDataSet(*d.compiled()->graph, inputs, r.outputs, args.outputDir);
  if (r.ran) saveTensors(r.values, args);
  if (!r.ran) return r.cannotRun.empty() ? 1 : 0;
  // A kernel that failed while running (an index out of range, a launch error) fails the run, with or without
  // the reference: its outputs are not the model's.
  for (const auto& k : r.kernels)
    if (k.status == execute::KernelStatus::Failed) {
      std::fprintf(stderr, "error: kernel %s failed: %s\n", k.group.c_str(), k.message.c_str());
      return 1;
    }
  return args.check && !r.outputsVerified ? 1 : 0;
}

int runModel(const RunArgs& args) {
  if (args.backend != "reference") return runCompiled(args);
  std::vector<Tensor> inputs;
  Graph g = loadModelFor(args, inputs);
  auto start = std::chrono::steady_clock::now();
  ReferenceOptions ro;
  ro.keepAll = !args.saveTensors.empty();
  ReferenceResult result = runReference(g, inputs, ro);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("ran %s on %s in %.1f ms\n", args.model.c_str(), args.backend.c_str(), ms);
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const Tensor& t = result.outputs[i];
    std::printf("  %s: %s %s\n", g.outputs()[i]->name().c_str(), t.type().toString().c_str(), summarize(t).c_str());
  }
  if (!args.outputDir.empty()) saveDataSet(g, inputs, result.outputs, args.outputDir);
  if (!args.saveTensors.empty()) {
    for (size_t i = 0; i < inputs.size(); ++i) result.values[g.inputs()[i]->name()] = inputs[i];
    saveTensors(result.values, args);
  }
  return 0;
}
}  // namespace

void addRunCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("run", "Run a model and print (or save) its outputs");
  auto args = std::make_shared<RunArgs>();
  cmd->add_option("MODEL", args->model, "Model file (.onnx or .tsr)")->required();
  cmd->add_option("--backend", args->backend,
                  "reference, cpu (generated C++), cuda (generated CUDA), or remote:HOST:PORT (a worker's cpu or cuda; "
                  "token from $TESSERA_REMOTE_TOKEN)")
      ->check(backendValidator({"reference", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--reps", args->reps, "Timed repetitions per kernel (median)")->check(CLI::Range(1, 100000));
  cmd->add_option("--budget-ms", args->budgetMs,
                  "Time a slow kernel with fewer runs, about this many ms in all (at least one warm-up and one timed "
                  "run; default 0: always 2 warm-ups and --reps)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--repeat", args->repeat,
                  "Run this many times through one driver, as the window's Run pressed again (compiled kernels, the cpu worker and the model's constants in its memory kept), "
                  "printing each run's wall time (JSON: run_wall_ms); the report is the last run's")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--check", args->check, "Exit 1 unless every kernel and output matches the reference");
  cmd->add_flag("--json", args->json, "Print the run report as JSON (cpu, cuda)");
  cmd->add_option("--trace", args->trace, "Write the run as a Chrome trace JSON (cpu, cuda; one event per kernel)");
  addTf32Option(cmd, args->tf32);
  addThreadsOption(cmd);
  addMemoryLimitOption(cmd, args->memoryLimit);
  cmd->add_option("--overrides", args->overrides, "JSON file of fusion overrides (docs/fusion.md), as compile takes them (cpu, cuda)");
  cmd->add_flag("--no-tuned", args->noTuned, "Ignore tuned schedules from the tuning cache (cpu, cuda)");
  cmd->add_flag("--no-reference", args->noReference,
                "Skip the reference interpreter: kernels are timed but unchecked (cpu, cuda; for sizes it takes "
                "minutes on, the outputs checked elsewhere through --output)")
      ->excludes("--check");
  cmd->add_flag("--no-baseline", args->noBaseline, "Skip the unfused baseline run (cpu, cuda)");
  cmd->add_flag("--no-cache", args->noCache,
                "Compile every kernel, neither reading nor writing the module cache (cpu, cuda; the cache lives in "
                "$TESSERA_CACHE_DIR/modules, default ~/.cache/tessera/modules)");
  cmd->add_option("--schedules", args->schedules, "Replay saved schedules (JSON from compile --save-schedules)");
  cmd->add_option("--arch", args->arch, "CUDA architecture (sm_XX); default: the device's, or sm_90");
  auto* inputs = cmd->add_option("--inputs", args->inputsDir, "Folder with input_N.pb files (ONNX TensorProto)");
  cmd->add_option("--random", args->seed, "Seed for random inputs (default 0)")->excludes(inputs);
  cmd->add_option("--output", args->outputDir, "Write input_N.pb and output_N.pb (an ONNX test data set) into this folder");
  cmd->add_option("--save-tensors", args->saveTensors,
                  "Save values as .npy: NAMES (comma list of value names) or all, then the folder (kept are graph "
                  "inputs, initializers and kernel outputs)")
      ->expected(2)
      ->type_name("NAMES|all DIR");
  cmd->add_option("--tensor-budget-mb", args->tensorBudgetMb, "With --save-tensors: at most this many MB of values")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->callback([args, &exitCode] { exitCode = runModel(*args); });
}

}  // namespace tessera::cli
