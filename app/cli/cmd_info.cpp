#include <cstdio>

#include "app/cli/commands.h"
#include "frontend/model_io.h"
#include "layers/layer_tree.h"
#include "ops/stats.h"

namespace tessera::cli {

namespace {
std::string humanCount(double v) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.2f%s" : "%.0f%s", v, units[u]);
  return buf;
}

void printInfo(const std::string& path, int layerDepth) {
  Graph g = loadModel(path);
  GraphStats s = graphStats(g);
  std::printf("model: %s (graph '%s')\n", path.c_str(), g.name().c_str());
  std::printf("inputs:\n");
  for (Value* v : g.inputs()) std::printf("  %s: %s\n", v->name().c_str(), v->type().toString().c_str());
  std::printf("outputs:\n");
  for (Value* v : g.outputs()) std::printf("  %s: %s\n", v->name().c_str(), v->type().toString().c_str());
  std::printf("nodes: %lld\n", (long long)s.nodes);
  std::printf("ops:\n");
  for (auto& [op, count] : s.opCounts) std::printf("  %-24s %lld\n", op.c_str(), (long long)count);
  std::printf("parameters: %lld (%s, %s bytes)\n", (long long)s.parameters, humanCount(double(s.parameters)).c_str(),
              humanCount(double(s.parameterBytes)).c_str());
  std::printf("flops: %lld (%s)\n", (long long)s.flops, humanCount(double(s.flops)).c_str());
  if (layerDepth >= 0) std::printf("layers:\n%s", LayerTree::build(g).format(layerDepth).c_str());
}
}  // namespace

void addInfoCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("info", "Show a model's inputs, outputs, op counts, parameters and FLOPs");
  auto path = std::make_shared<std::string>();
  auto layers = std::make_shared<int>(-1);
  cmd->add_option("MODEL", *path, "Model file (.onnx or .tsr)")->required();
  cmd->add_option("--layers", *layers, "Also print the layer tree (from node and weight names) down to this depth");
  cmd->callback([path, layers, &exitCode] {
    printInfo(*path, *layers);
    exitCode = 0;
  });
}

}  // namespace tessera::cli
