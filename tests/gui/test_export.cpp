// File > Export: the graph as SVG (well-formed XML with an <svg> root), PNG and DOT (read back by Graphviz);
// a real cpu run's results as CSV (a header and one row per kernel), JSON and a Chrome trace (one X event per
// kernel that ran, in order, back to back); exporting without a run fails with a message naming the file.
#include <graphviz/cgraph.h>

#include <QFile>
#include <QImage>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "fusion/compile.h"
#include "frontend/model_io.h"
#include "gui_test_util.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"
#include "ui/graph/export_graph.h"
#include "ui/run/export_results.h"
#include "ui/graph/graph_view.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::waitIdle;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A real run of the mlp sample on the cpu backend (generated C++), once for the whole test.
const nlohmann::json& cpuRunReport() {
  static const nlohmann::json report = [] {
    CompileResult cr = compileGraph(loadModel(sample("mlp.tsr").toStdString()), CompileOptions{});
    execute::CompiledModel m = execute::compileKernels(cr, nullptr);
    execute::RunOptions o;
    o.reps = 2;
    o.warmup = 1;
    return execute::executeModel(m, execute::BackendKind::Cpu, o).toJson();
  }();
  return report;
}

}  // namespace

class TestExport : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(dir_.isValid());
    qputenv("XDG_CACHE_HOME", dir_.filePath("cache").toUtf8());
  }

  void exportsTheGraph() {
    MainWindow w;
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    const GraphView& view = *w.graphView();
    const auto layout = view.currentLayout();
    QVERIFY(layout && !layout->nodes.empty());

    const QString svg = dir_.filePath("g.svg");
    QCOMPARE(exportGraphSvg(view, svg), QString());
    QXmlStreamReader xml(readAll(svg));
    QVERIFY(xml.readNextStartElement());
    QCOMPARE(xml.name().toString(), QString("svg"));
    int texts = 0;
    while (!xml.atEnd()) texts += xml.readNext() == QXmlStreamReader::StartElement && xml.name() == QLatin1String("text");
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(texts >= int(layout->nodes.size()));  // every node's op is drawn as text

    const QString png = dir_.filePath("g.png");
    QCOMPARE(exportGraphPng(view, png), QString());
    QImage image(png);
    QVERIFY(!image.isNull() && image.width() > 100 && image.height() > 100);

    const QString dot = dir_.filePath("g.dot");
    QCOMPARE(exportGraphDot(view, dot), QString());
    const QByteArray text = readAll(dot);
    Agraph_t* g = agmemread(text.constData());
    QVERIFY2(g, "Graphviz could not read the exported DOT");
    QCOMPARE(agnnodes(g), int(layout->nodes.size()));
    int clusters = 0;
    for (Agraph_t* sub = agfstsubg(g); sub; sub = agnxtsubg(sub)) clusters += QByteArray(agnameof(sub)).startsWith("cluster_");
    QCOMPARE(clusters, int(layout->clusters.size()));
    agclose(g);
    QVERIFY(text.contains("MatMul"));  // labels carry the ops
  }

  void exportsRunResults() {
    const nlohmann::json& report = cpuRunReport();
    if (!report.value("ran", false)) QSKIP(qPrintable("the cpu backend could not run here: " + QString::fromStdString(report.value("cannot_run", ""))));
    const auto& kernels = report["kernels"];
    QVERIFY(kernels.size() >= 2);

    const QString csv = dir_.filePath("r.csv");
    QCOMPARE(exportRunCsv(report, csv), QString());
    const QList<QByteArray> lines = readAll(csv).trimmed().split('\n');
    QCOMPARE(lines.size(), int(kernels.size()) + 1);
    QVERIFY(lines[0].startsWith("group,status,verified,ms,gbps,gflops"));
    for (size_t i = 0; i < kernels.size(); ++i)
      QVERIFY(lines[int(i) + 1].startsWith(QByteArray::fromStdString(kernels[i]["group"].get<std::string>() + ",")));

    const QString json = dir_.filePath("r.json");
    QCOMPARE(exportRunJson(report, json), QString());
    QCOMPARE(nlohmann::json::parse(readAll(json).toStdString()), report);

    const QString trace = dir_.filePath("r.trace.json");
    QCOMPARE(exportChromeTrace(report, trace), QString());
    const nlohmann::json t = nlohmann::json::parse(readAll(trace).toStdString());
    QVERIFY(t["traceEvents"].is_array());
    std::vector<nlohmann::json> events;
    for (const auto& e : t["traceEvents"])
      if (e["ph"] == "X") events.push_back(e);
    QCOMPARE(events.size(), kernels.size());
    double end = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      QCOMPARE(events[i]["args"]["group"], kernels[i]["group"]);  // execution order
      QCOMPARE(events[i]["args"]["nodes"], kernels[i]["nodes"]);
      QVERIFY(events[i]["args"].contains("GB/s") && events[i]["args"].contains("GFLOP/s"));
      QCOMPARE(events[i]["ts"].get<double>(), end);  // back to back, in µs
      QVERIFY(qFuzzyCompare(events[i]["dur"].get<double>(), kernels[i]["ms"].get<double>() * 1000));
      end += events[i]["dur"].get<double>();
    }
  }

  void refusesToExportWithoutARun() {
    const QString csv = dir_.filePath("none.csv");
    const QString error = exportRunCsv(nlohmann::json::object(), csv);
    QVERIFY2(error.contains("none.csv") && error.contains("kernels"), qPrintable(error));
    QVERIFY(!QFile::exists(csv));
    QVERIFY(!exportChromeTrace(nullptr, dir_.filePath("none.json")).isEmpty());
  }
};

QTEST_MAIN(TestExport)
#include "test_export.moc"
