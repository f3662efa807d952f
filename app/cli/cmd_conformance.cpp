// `conformance`: runs ONNX backend test folders (model.onnx, test_data_set_*/input_N.pb, output_N.pb) and prints
// one line per test, then exactly "N passed, M failed, K skipped".
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "app/cli/commands.h"
#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"
#include "driver/driver.h"

namespace tessera::cli {

namespace fs = std::filesystem;

namespace {

enum class Verdict { Pass, Fail, Skip };
struct Outcome {
  Verdict verdict;
  std::string detail;
};

// ONNX's backend test runner compares with rtol 1e-3 and atol 1e-7; we use the same so results are comparable.
constexpr Tolerance kOnnxTolerance{1e-7, 1e-3};

std::vector<fs::path> numberedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (size_t i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

// Import problems that mean "not supported here" rather than "wrong answer".
bool isUnsupported(const std::string& message) {
  return message.find("unsupported") != std::string::npos || message.find("unknown op") != std::string::npos;
}

std::string gBackend = "reference";  // set once by the command before any test runs
BackendChoice gChoice;              // the same, chosen (a remote worker described once)

// cpu: passes, fusion, generated C++ for every kernel; a group no template lowers runs on the host (a host
// group: the reference's semantics between the kernels). A node nothing can run (an op unknown to Tessera)
// makes the test a skip, as it is on the reference backend.
std::vector<Tensor> runGenerated(Graph g, const std::vector<Tensor>& inputs, Outcome& problem) {
  driver::DriverOptions options;
  options.useTuned = false;  // conformance checks the template defaults
  options.backend = gChoice.kind;
  options.remote = gChoice.remote;
  driver::Driver d(std::make_shared<const Graph>(std::move(g)), options);
  for (const auto& k : d.kernels()->model.kernels)
    if (!k.placement.runs()) {
      problem = {Verdict::Skip, k.placement.reason};
      return {};
    }
  driver::RunRequest request;
  request.reps = 1;
  request.warmup = 0;
  request.inputs = inputs;
  request.baseline = false;
  const std::shared_ptr<const driver::RunStage> run = d.run(request);
  const execute::RunReport& r = run->report;
  for (const auto& k : r.kernels)
    if (k.status == execute::KernelStatus::NotCompiled || k.status == execute::KernelStatus::Failed) {
      problem = {Verdict::Fail, "kernel " + k.group + " " + execute::kernelStatusName(k.status) + ": " + k.message};
      return {};
    }
  if (!r.ran) problem = {Verdict::Skip, r.cannotRun};
  return r.outputs;
}

Outcome runDataSet(const fs::path& model, const fs::path& dataSet) {
  const OnnxSignature signature = onnxSignature(model.string());
  const std::vector<std::string>& feeds = signature.feeds;
  std::vector<fs::path> inputFiles = numberedFiles(dataSet, "input_");
  std::vector<fs::path> outputFiles = numberedFiles(dataSet, "output_");
  if (inputFiles.size() != feeds.size())
    return {Verdict::Fail, std::to_string(inputFiles.size()) + " input files for " + std::to_string(feeds.size()) +
                               " graph inputs"};
  OnnxImportOptions options;
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < feeds.size(); ++i) {
    inputs.push_back(readValueFile(inputFiles[i].string(), signature.feedTypes[i]));
    options.inputData[feeds[i]] = inputs.back();
  }
  options.sampleInputs = options.inputData;  // data-dependent shapes specialized on the test's own inputs
  Graph g;
  try {
    g = importOnnxFile(model.string(), options);
  } catch (const Error& e) {
    if (isUnsupported(e.what())) return {Verdict::Skip, e.what()};
    throw;
  }
  // Inputs that became constants (shape operands) are no longer graph inputs.
  std::vector<Tensor> feedsLeft;
  for (Value* in : g.inputs()) {
    auto it = std::find(feeds.begin(), feeds.end(), in->name());
    if (it == feeds.end()) fail("graph input '" + in->name() + "' has no data");
    feedsLeft.push_back(inputs[size_t(it - feeds.begin())]);
  }
  ReferenceResult result;
  if (gBackend == "reference") {
    result = runReference(g, feedsLeft);
  } else {
    Outcome problem{Verdict::Pass, ""};
    result.outputs = runGenerated(std::move(g), feedsLeft, problem);
    if (problem.verdict != Verdict::Pass) return problem;
  }
  if (outputFiles.size() != result.outputs.size())
    return {Verdict::Fail, std::to_string(outputFiles.size()) + " expected outputs, model has " +
                               std::to_string(result.outputs.size())};
  double maxAbs = 0, maxRel = 0;
  std::string firstProblem;
  for (size_t i = 0; i < outputFiles.size(); ++i) {
    Tensor expected = readValueFile(outputFiles[i].string(), signature.outputTypes.at(i));
    Comparison c = compareTensors(result.outputs[i], expected, kOnnxTolerance);
    maxAbs = std::max(maxAbs, c.maxAbsError);
    maxRel = std::max(maxRel, c.maxRelError);
    if (!c.ok && firstProblem.empty()) firstProblem = "output " + std::to_string(i) + ": " + c.message;
  }
  if (!firstProblem.empty())
    return {Verdict::Fail, fmt::format("max abs err {:.3g}, max rel err {:.3g}; {}", maxAbs, maxRel, firstProblem)};
  return {Verdict::Pass, fmt::format("max abs err {:.3g}", maxAbs)};
}

Outcome runTest(const fs::path& dir) {
  fs::path model = dir / "model.onnx";
  std::vector<fs::path> dataSets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) dataSets.push_back(e.path());
  std::sort(dataSets.begin(), dataSets.end());
  if (dataSets.empty()) return {Verdict::Skip, "no test_data_set_* folder"};
  try {
    Outcome last{Verdict::Pass, ""};
    for (const fs::path& ds : dataSets) {
      last = runDataSet(model, ds);
      if (last.verdict != Verdict::Pass) return last;
    }
    return last;
  } catch (const Error& e) {
    std::string what = e.what();
    if (isUnsupported(what)) return {Verdict::Skip, what};
    return {Verdict::Fail, what};
  }
}

// A DIR argument is a test folder (has model.onnx) or a folder of test folders.
std::vector<fs::path> collectTests(const std::vector<std::string>& dirs, const std::string& listFile) {
  std::vector<fs::path> tests;
  auto addDir = [&](const fs::path& d) {
    if (fs::exists(d / "model.onnx")) {
      tests.push_back(d);
      return;
    }
    if (!fs::is_directory(d)) fail(d.string() + ": not a test folder (no model.onnx) and not a folder of tests");
    std::vector<fs::path> sub;
    for (const auto& e : fs::directory_iterator(d))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) sub.push_back(e.path());
    std::sort(sub.begin(), sub.end());
    tests.insert(tests.end(), sub.begin(), sub.end());
  };
  for (const std::string& d : dirs) addDir(d);
  if (!listFile.empty()) {
    std::ifstream in(listFile);
    if (!in) fail(listFile + ": cannot open the test list");
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#') addDir(line);
  }
  return tests;
}

struct ConformanceArgs {
  std::vector<std::string> dirs;
  std::string listFile, knownFailuresFile, backend = "reference";
};

// Known failures: one test name per line, then its reason; '#' starts a comment.
std::set<std::string> readKnownFailures(const std::string& path) {
  std::set<std::string> names;
  if (path.empty()) return names;
  std::ifstream in(path);
  if (!in) fail(path + ": cannot open the known-failures file");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    names.insert(line.substr(0, line.find_first_of(" \t")));
  }
  return names;
}

int runConformance(const ConformanceArgs& args) {
  gBackend = args.backend;
  if (gBackend != "reference") gChoice = chooseBackend(gBackend);
  std::vector<fs::path> tests = collectTests(args.dirs, args.listFile);
  if (tests.empty()) fail("no tests found");
  std::set<std::string> known = readKnownFailures(args.knownFailuresFile);
  int passed = 0, failed = 0, skipped = 0, unexpected = 0;
  for (const fs::path& t : tests) {
    Outcome o = runTest(t);
    std::string name = t.filename().string();
    switch (o.verdict) {
      case Verdict::Pass: ++passed; std::printf("pass %s\n", name.c_str()); break;
      case Verdict::Fail: ++failed; std::printf("fail %s: %s\n", name.c_str(), o.detail.c_str()); break;
      case Verdict::Skip: ++skipped; std::printf("skip %s: %s\n", name.c_str(), o.detail.c_str()); break;
    }
    if (o.verdict != Verdict::Pass && !known.count(name)) {
      ++unexpected;
      if (!known.empty()) std::printf("  (not in the known failures)\n");
    }
    std::fflush(stdout);
  }
  if (!args.knownFailuresFile.empty())
    std::printf("%d of %d failed or skipped tests are not in %s\n", unexpected, failed + skipped,
                args.knownFailuresFile.c_str());
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  // With a known-failures list, only a failure or skip outside it fails the run (a regression).
  if (!args.knownFailuresFile.empty()) return unexpected ? 1 : 0;
  return failed ? 1 : 0;
}

}  // namespace

void addConformanceCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("conformance", "Run ONNX backend test folders and compare with expected outputs");
  auto args = std::make_shared<ConformanceArgs>();
  cmd->add_option("DIR", args->dirs, "Test folders, or folders of test folders");
  cmd->add_option("--list", args->listFile, "A file with one test folder per line");
  cmd->add_option("--known-failures", args->knownFailuresFile,
                  "Tests expected not to pass (name and reason per line); exit 1 only for others");
  addThreadsOption(cmd);
  cmd->add_option("--backend", args->backend, "reference, cpu (generated C++), cuda (generated CUDA) or remote:HOST:PORT")
      ->check(backendValidator({"reference", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->callback([args, &exitCode] { exitCode = runConformance(*args); });
}

}  // namespace tessera::cli
