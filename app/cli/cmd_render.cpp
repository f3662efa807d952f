// tessera-cli render: a panel of the window as a PNG, drawn by the window's own code (ui/window/headless_render.h)
// on Qt's offscreen platform when there is no display.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "app/cli/commands.h"

#ifdef TESSERA_HAS_GUI
#include "app/cli/headless_app.h"

#include "ui/window/headless_render.h"
#endif

namespace tessera::cli {
namespace {

struct RenderArgs {
  std::string model, view = "graph", output, select, overrides, backend = "cpu";
  int step = -1, width = 1600, height = 1000, expand = -1;
  std::vector<std::string> expandLayers;
};

#ifdef TESSERA_HAS_GUI
int render(const RenderArgs& args) {
  auto app = headlessApp();
  ui::RenderRequest r;
  r.model = QString::fromStdString(args.model);
  r.view = QString::fromStdString(args.view);
  r.step = args.step;
  r.select = QString::fromStdString(args.select);
  r.expandDepth = args.expand;
  for (const std::string& l : args.expandLayers) r.expandLayers << QString::fromStdString(l);
  r.overrides = QString::fromStdString(args.overrides);
  r.backend = QString::fromStdString(args.backend);
  r.output = QString::fromStdString(args.output);
  r.size = QSize(args.width, args.height);
  r.exactSize = true;
  return ui::renderHeadless(r) == 0 ? 0 : 2;
}

std::vector<std::string> viewNames() {
  std::vector<std::string> names;
  for (const QString& v : ui::renderViewNames()) names.push_back(v.toStdString());
  return names;
}
#else
int render(const RenderArgs&) {
  std::fprintf(stderr, "error: render: this tessera-cli was built without the window (TESSERA_BUILD_GUI=OFF)\n");
  return 2;
}

std::vector<std::string> viewNames() { return {"graph", "pipeline", "inspector", "overrides", "window", "schedule", "code", "run", "compare", "tensor"}; }
#endif

}  // namespace

void addRenderCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("render", "Render a panel of the window to a PNG, as the window draws it (no display needed)");
  auto args = std::make_shared<RenderArgs>();
  cmd->add_option("MODEL_OR_SESSION", args->model, "Model (.onnx, .tsr), session (.tessera) or SESSION.tessera#BRANCH")
      ->required();
  cmd->add_option("--view", args->view, "Panel to render")->check(CLI::IsMember(viewNames()))->capture_default_str();
  cmd->add_option("--step", args->step, "Pipeline step (0 = as imported; default: the last, or the session's)");
  cmd->add_option("--width", args->width, "Image width in pixels")->check(CLI::Range(64, 16384))->capture_default_str();
  cmd->add_option("--height", args->height, "Image height in pixels")->check(CLI::Range(64, 16384))->capture_default_str();
  cmd->add_option("--select", args->select,
                  "Node id to select; the graph opens the layers around it (default: the first MatMul, Gemm or Conv, "
                  "not for the graph)");
  cmd->add_option("--expand", args->expand,
                  "Graph: open the layers down to this depth (0: top-level layers as boxes; default: what the window "
                  "opens with)")->check(CLI::Range(0, 64));
  cmd->add_option("--expand-layer", args->expandLayers, "Graph: also open this layer, by path (h.3/attn) or name (res3_1)")
      ->take_all();
  cmd->add_option("--overrides", args->overrides, "JSON overrides to apply first")->check(CLI::ExistingFile);
  cmd->add_option("--backend", args->backend, "What the run view runs on")
      ->check(CLI::IsMember({"reference", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output, "PNG file to write")->required();
  cmd->callback([args, &exitCode] { exitCode = render(*args); });
}

}  // namespace tessera::cli
