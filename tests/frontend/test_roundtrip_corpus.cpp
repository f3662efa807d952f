// Every sample and every importable conformance model round-trips through .tsr: print → parse → print is
// identical, and through ONNX: export → import → print is identical.
#include <QDirIterator>
#include <QtTest>

#include "frontend/model_io.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"

using namespace tessera;

class TestRoundTripCorpus : public QObject {
  Q_OBJECT

  // Returns the problem, or an empty string when both round trips are exact.
  static QString roundTrip(const Graph& g) {
    std::string text = printTsr(g);
    std::string again = printTsr(parseTsr(text, "printed.tsr"));
    if (again != text) return "print → parse → print differs";
    std::string viaOnnx = printTsr(importOnnxBytes(exportOnnxBytes(g), "exported.onnx"));
    if (viaOnnx != text) return "export → import → print differs";
    return {};
  }

 private slots:
  void samples() {
    QDirIterator it(TESSERA_SOURCE_DIR "/samples", {"*.tsr"});
    int count = 0;
    while (it.hasNext()) {
      QString path = it.next();
      Graph g = loadModel(path.toStdString());
      QString problem = roundTrip(g);
      QVERIFY2(problem.isEmpty(), qPrintable(path + ": " + problem));
      ++count;
    }
    QVERIFY(count >= 7);
  }
  void onnxSamplesMatchTheirTextForm() {
    // samples/*.onnx are `tessera-cli convert` exports of the .tsr samples beside them.
    QDirIterator it(TESSERA_SOURCE_DIR "/samples", {"*.onnx"});
    int count = 0;
    while (it.hasNext()) {
      QString onnx = it.next();
      QString tsr = onnx.chopped(5) + ".tsr";
      QVERIFY2(QFileInfo::exists(tsr), qPrintable(onnx + " has no .tsr source"));
      QCOMPARE(QString::fromStdString(printTsr(loadModel(onnx.toStdString()))),
               QString::fromStdString(printTsr(loadModel(tsr.toStdString()))));
      ++count;
    }
    QVERIFY(count >= 2);
  }
  void conformanceModels() {
    QString root = TESSERA_DATA_DIR;
    if (!QFileInfo::exists(root + "/onnx-node")) QSKIP(qPrintable("no ONNX node tests at " + root + "/onnx-node"));
    QDirIterator it(root, {"model.onnx"}, QDir::Files, QDirIterator::Subdirectories);
    int tried = 0, imported = 0;
    while (it.hasNext()) {
      QString path = it.next();
      ++tried;
      Graph g;
      try {
        g = importOnnxFile(path.toStdString());
      } catch (const Error&) {
        continue;  // needs its test inputs as shape operands, or uses an unsupported type or op
      }
      bool subgraphs = false;  // .tsr prints a subgraph as a summary (docs/tsr-format.md): not round-trippable
      for (const Node* n : g.nodes())
        for (const auto& [name, attr] : n->attrs()) subgraphs = subgraphs || attr.kind() == AttrKind::Graph;
      if (subgraphs) continue;
      ++imported;
      QString problem = roundTrip(g);
      QVERIFY2(problem.isEmpty(), qPrintable(path + ": " + problem));
    }
    qInfo("%d of %d conformance models import on their own; all of those round-trip", imported, tried);
    QVERIFY(imported > 300);
  }
};

QTEST_GUILESS_MAIN(TestRoundTripCorpus)
#include "test_roundtrip_corpus.moc"
