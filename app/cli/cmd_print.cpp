#include <cstdio>

#include "app/cli/commands.h"
#include "frontend/model_io.h"
#include "frontend/text/tsr.h"

namespace tessera::cli {

void addPrintCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("print", "Print a model in the .tsr text form");
  auto path = std::make_shared<std::string>();
  auto elide = std::make_shared<int64_t>(-1);
  cmd->add_option("MODEL", *path, "Model file (.onnx or .tsr)")->required();
  cmd->add_option("--elide", *elide, "Show tensors with more than N elements as a placeholder (not parseable)");
  cmd->callback([path, elide, &exitCode] {
    Graph g = loadModel(*path);
    std::fputs(printTsr(g, {.elideAbove = *elide}).c_str(), stdout);
    exitCode = 0;
  });
}

void addConvertCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("convert", "Convert between .onnx and .tsr");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("MODEL", *in, "Model file (.onnx or .tsr)")->required();
  cmd->add_option("-o,--output", *out, "Output file (.onnx or .tsr)")->required();
  cmd->callback([in, out, &exitCode] {
    Graph g = loadModel(*in);
    saveModel(g, *out);
    std::printf("wrote %s (%zu nodes)\n", out->c_str(), g.numNodes());
    exitCode = 0;
  });
}

}  // namespace tessera::cli
