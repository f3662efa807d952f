// bench_layers: how fast big models reach the window. For generated transformer stacks (stack_model.h) of about
// 1,000, 10,000 and 50,000 nodes and for the light ONNX models, the layout worker's work for the first picture
// (layer tree, description at the fitting depth, per-layer dot placement) and for opening one layer and closing
// it again (placements of unchanged layers come from the cache). Not a timed test: figures go to
// docs/performance.md. Usage: bench_layers [--light DIR] [--sizes 1000,10000,50000] [--write N FILE.tsr]
// [--window MODEL...] (bench_window.cpp: the same in the real window, offscreen).
#include <QApplication>
#include <QElapsedTimer>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench/layers/stack_model.h"
#include "frontend/model_io.h"
#include "ui/graph/layer_picture.h"

using namespace tessera;
using namespace tessera::ui;

namespace tessera::bench {
void benchWindow(const QString& path);
}

namespace {

double msSince(const QElapsedTimer& t) { return double(t.nsecsElapsed()) / 1e6; }

struct Picture {
  double ms = 0;
  size_t boxes = 0;
};

// One layout as the worker makes it: describe at `open` (or the fitting depth), then place with `cache`.
Picture picture(const std::shared_ptr<const Graph>& g, const std::shared_ptr<const LayerTree>& tree,
                const OpenLayers* open, LayerPlacementCache& cache) {
  QElapsedTimer t;
  t.start();
  StepPicture step;
  step.graph = g;
  step.layers = tree;
  if (open) step.open = *open, step.openSet = true;
  GraphLayout layout = describeStep(step);
  placeLayers(layout, &cache);
  if (!layout.error.isEmpty()) std::fprintf(stderr, "layout error: %s\n", qPrintable(layout.error));
  return {msSince(t), layout.nodes.size()};
}

void benchModel(const std::string& name, std::shared_ptr<const Graph> g) {
  QElapsedTimer t;
  t.start();
  auto tree = std::make_shared<const LayerTree>(LayerTree::build(*g));
  const double treeMs = msSince(t);
  LayerPlacementCache cache;
  const Picture first = picture(g, tree, nullptr, cache);
  const OpenLayers start = defaultOpenLayers(*tree, g->inputs().size());
  // Open the middle one of the top-level layers (or the root's first child when there is one), then close it.
  const auto& top = tree->root().children;
  Picture opened, closed;
  if (!top.empty()) {
    const int layer = top[top.size() / 2];
    const OpenLayers more = openLayer(*tree, start, tree->layer(layer).depth > 0 ? layer : top.front());
    opened = picture(g, tree, &more, cache);
    closed = picture(g, tree, &start, cache);
  }
  std::printf("| %s | %zu | %zu | %.0f | %.0f | %zu | %.0f | %.0f | %zu/%zu |\n", name.c_str(), g->numNodes(),
              tree->layers().size(), treeMs, first.ms + treeMs, first.boxes, opened.ms, closed.ms, cache.hits,
              cache.hits + cache.misses);
  std::fflush(stdout);
}

std::vector<int> parseSizes(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("DISPLAY") && !std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  QApplication app(argc, argv);
  std::vector<int> sizes{1000, 10000, 50000};
  std::string light;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--write") && i + 2 < argc) {
      saveModel(bench::transformerStack(std::atoi(argv[i + 1])), argv[i + 2]);
      return 0;
    }
    if (!std::strcmp(argv[i], "--window")) {
      std::printf("| model | nodes at the last step | compile ms | compile to first picture ms | compile to idle ms | boxes | open one layer ms | close it ms | ms a frame (pan, zoom) |\n");
      std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
      for (int j = i + 1; j < argc; ++j) bench::benchWindow(argv[j]);
      return 0;
    }
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = parseSizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--light") && i + 1 < argc) light = argv[++i];
  }
  std::printf("| model | nodes | layers | tree ms | first picture ms | boxes | open one layer ms | close it ms | cache hits |\n");
  std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (int n : sizes) benchModel("stack " + std::to_string(n), std::make_shared<const Graph>(bench::transformerStack(n)));
  if (!light.empty())
    for (const auto& e : std::filesystem::directory_iterator(light))
      if (e.path().extension() == ".onnx")
        benchModel(e.path().stem().string(), std::make_shared<const Graph>(loadModel(e.path().string())));
  return 0;
}
