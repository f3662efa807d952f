// tessera: the explorer window. Opens the model given on the command line, else the default sample.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>

#include "ui/main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Tessera");
  QApplication::setApplicationName("Tessera");
  QApplication::setApplicationVersion("0.1.0");
  QCommandLineParser parser;
  parser.setApplicationDescription("Tessera: an explorer for AI tensor compilers");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("model", "Model to open (.onnx or .tsr)");
  parser.process(app);
  tessera::ui::MainWindow window;
  window.show();
  QString model = parser.positionalArguments().value(0, QStringLiteral(TESSERA_SAMPLES_DIR "/transformer_block.tsr"));
  if (QFileInfo::exists(model)) window.openModel(model);
  return app.exec();
}
