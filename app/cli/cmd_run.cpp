#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/cli/commands.h"
#include "frontend/model_io.h"
#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"
#include "runtime/reference/interpreter.h"

namespace tessera::cli {

namespace fs = std::filesystem;

namespace {
struct RunArgs {
  std::string model, backend = "reference", inputsDir, outputDir;
  uint64_t seed = 0;
};

std::vector<Tensor> loadInputs(const Graph& g, const RunArgs& args) {
  if (args.inputsDir.empty()) return randomInputs(g, args.seed);
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    fs::path p = fs::path(args.inputsDir) / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) fail(p.string() + ": missing (graph input " + std::to_string(i) + " '" + g.inputs()[i]->name() + "')");
    inputs.push_back(readTensorProtoFile(p.string()));
  }
  return inputs;
}

// A short, stable summary of a tensor: its first values and their sum.
std::string summarize(const Tensor& t) {
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
    writeTensorProtoFile(inputs[i], g.inputs()[i]->name(), (fs::path(dir) / ("input_" + std::to_string(i) + ".pb")).string());
  for (size_t i = 0; i < outputs.size(); ++i)
    writeTensorProtoFile(outputs[i], g.outputs()[i]->name(),
                         (fs::path(dir) / ("output_" + std::to_string(i) + ".pb")).string());
}

int runModel(const RunArgs& args) {
  if (args.backend != "reference")
    fail("backend '" + args.backend + "' is not available (this build has: reference)");
  Graph g = loadModel(args.model);
  std::vector<Tensor> inputs = loadInputs(g, args);
  auto start = std::chrono::steady_clock::now();
  ReferenceResult result = runReference(g, inputs);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("ran %s on %s in %.1f ms\n", args.model.c_str(), args.backend.c_str(), ms);
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const Tensor& t = result.outputs[i];
    std::printf("  %s: %s %s\n", g.outputs()[i]->name().c_str(), t.type().toString().c_str(), summarize(t).c_str());
  }
  if (!args.outputDir.empty()) saveDataSet(g, inputs, result.outputs, args.outputDir);
  return 0;
}
}  // namespace

void addRunCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("run", "Run a model and print (or save) its outputs");
  auto args = std::make_shared<RunArgs>();
  cmd->add_option("MODEL", args->model, "Model file (.onnx or .tsr)")->required();
  cmd->add_option("--backend", args->backend, "reference")->capture_default_str();
  auto* inputs = cmd->add_option("--inputs", args->inputsDir, "Folder with input_N.pb files (ONNX TensorProto)");
  cmd->add_option("--random", args->seed, "Seed for random inputs (default 0)")->excludes(inputs);
  cmd->add_option("--output", args->outputDir, "Write input_N.pb and output_N.pb (an ONNX test data set) into this folder");
  cmd->callback([args, &exitCode] { exitCode = runModel(*args); });
}

}  // namespace tessera::cli
