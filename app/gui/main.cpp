// tessera: the explorer window. Opens the model or session given on the command line, else the default sample.
// With --render VIEW it renders one panel to a PNG and exits (use QT_QPA_PLATFORM=offscreen without a display;
// `tessera-cli render` does the same and picks the offscreen platform itself):
//   tessera --render graph --step 3 -o out.png samples/mlp.tsr
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <cstdio>

#include "ui/window/headless_render.h"
#ifdef TESSERA_HAS_REMOTE
#include "app/remote/remote_backend.h"
#endif
#include "ui/window/main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
#ifdef TESSERA_HAS_REMOTE
  // Remote workers in the Run panel (docs/remote.md), and local cuda runs in a worker process of the window's own,
  // so that a kernel's GPU fault cannot leave the window unable to run on the GPU ($TESSERA_GPU_WORKER=0: in-process).
  tessera::remote::ConnectorOptions remote;
  remote.cudaInWorker = qEnvironmentVariable("TESSERA_GPU_WORKER") != "0";
  tessera::remote::installRemoteConnector(remote);
#endif
  QApplication::setOrganizationName("Tessera");
  QApplication::setApplicationName("Tessera");
  QApplication::setApplicationVersion("0.1.0");
  QCommandLineParser parser;
  parser.setApplicationDescription("Tessera: an explorer for AI tensor compilers");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("file", "Model (.onnx, .tsr) or session (.tessera) to open");
  QCommandLineOption render("render", "Render VIEW (" + tessera::ui::renderViewNames().join(", ") + ") to a PNG and exit.", "view");
  QCommandLineOption step("step", "Pipeline step to show (0 = as imported; default: the last).", "n", "-1");
  QCommandLineOption select("select", "Node id to select (inspector).", "id");
  QCommandLineOption overrides("overrides", "JSON file of overrides to apply before rendering.", "file");
  QCommandLineOption output({"o", "output"}, "PNG file to write.", "file");
  QCommandLineOption size("size", "Window size WxH (default 1600x1000).", "size", "1600x1000");
  parser.addOptions({render, step, select, overrides, output, size});
  parser.process(app);
  const QString model = parser.positionalArguments().value(0, QStringLiteral(TESSERA_SAMPLES_DIR "/transformer_block.tsr"));
  if (parser.isSet(render)) {
    if (!parser.isSet(output)) {
      std::fprintf(stderr, "tessera --render: -o FILE.png is required\n");
      return 2;
    }
    tessera::ui::RenderRequest request;
    request.model = model;
    request.view = parser.value(render);
    request.step = parser.value(step).toInt();
    request.select = parser.value(select);
    request.output = parser.value(output);
    request.overrides = parser.value(overrides);
    const QStringList wh = parser.value(size).split('x');
    if (wh.size() == 2) request.size = QSize(wh[0].toInt(), wh[1].toInt());
    return tessera::ui::renderHeadless(request);
  }
  tessera::ui::MainWindow window;
  window.show();
  if (QFileInfo::exists(model)) window.openModel(model);
  return app.exec();
}
