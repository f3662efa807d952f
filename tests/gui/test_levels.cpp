// The Levels panel: every sample at every level, the selection marked in each level and a clicked line
// selecting its nodes, PTX filled in the background (or the reason without CUDA), the kernel table under
// QAbstractItemModelTester, the highlighters, newer compiles superseding older code jobs, and the inspector's
// kernel rows.
#include <QAbstractItemModelTester>
#include <QDir>
#include <QDockWidget>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTextBlock>
#include <QTextLayout>
#include <QtTest>
#include <functional>

#include "gui_test_util.h"
#include "ui/code/code_controller.h"
#include "ui/code/code_kernel_model.h"
#include "ui/code/code_view.h"
#include "ui/window/headless_render.h"
#include "ui/pipeline/inspector_panel.h"
#include "ui/code/levels_panel.h"
#include "ui/session/session_controller.h"
#include "ui/code/syntax_highlight.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;

namespace {

bool waitFor(const std::function<bool()>& done, int timeoutMs = 60000) {
  QDeadlineTimer deadline(timeoutMs);
  while (!deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (done()) return true;
    QThread::msleep(2);
  }
  return done();
}

// A controller with a shown Levels panel, the model opened and its kernels lowered.
struct Fixture {
  SessionController controller;
  LevelsPanel panel{&controller};
  explicit Fixture(const QString& model) {
    panel.resize(1200, 700);
    panel.show();
    controller.openModel(model);
  }
  bool settle() {
    return waitFor([this] {
      return !controller.busy() && controller.compile() && controller.code()->kernels() &&
             controller.code()->kernels()->compile == controller.compile() && !controller.code()->busy();
    });
  }
  CodeView* view(Level l) const { return panel.view(l); }
};

// Every line whose map names `node`, computed here from the map itself.
std::vector<int> linesNaming(const LevelText& t, const QString& node) {
  std::vector<int> lines;
  for (int i = 0; i < int(t.lineNodes.size()); ++i)
    if (t.lineNodes[size_t(i)].contains(node)) lines.push_back(i);
  return lines;
}

int lineWhere(const LevelText& t, const std::function<bool(const QStringList&, const QString&)>& pred) {
  const QStringList lines = t.text.split('\n');
  for (int i = 0; i < int(t.lineNodes.size()) && i < lines.size(); ++i)
    if (pred(t.lineNodes[size_t(i)], lines[i])) return i;
  return -1;
}

QString lineText(const CodeView* v, int line) { return v->document()->findBlockByNumber(line).text(); }

// The formats the highlighter gave one line of a view's text.
QList<QTextLayout::FormatRange> formatsOf(CodeView& v, const QString& text) {
  LevelText t;
  t.text = text;
  t.lineNodes.resize(1);
  v.setLevelText(t);
  return v.document()->firstBlock().layout()->formats();
}

QTextCharFormat formatAt(const QList<QTextLayout::FormatRange>& ranges, int pos) {
  QTextCharFormat f;
  for (const auto& r : ranges)
    if (pos >= r.start && pos < r.start + r.length) f = r.format;
  return f;
}

}  // namespace

class TestLevels : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void everySampleHasTextAtEveryLevel() {
    const QStringList samples = QDir(sample("")).entryList({"*.tsr", "*.onnx"}, QDir::Files);
    QVERIFY(samples.size() >= 5);
    for (const QString& name : samples) {
      Fixture f(sample(name));
      QVERIFY2(f.settle(), qPrintable(name));
      const auto code = f.controller.code()->kernels();
      QVERIFY2(code->error.isEmpty(), qPrintable(name + ": " + code->error));
      QCOMPARE(int(code->kernels.size()), int(f.controller.compile()->fusion->groups.size()));
      for (Level l : {Level::Graph, Level::Fused, Level::Kernel, Level::Cuda, Level::Cpp}) {
        const LevelText& t = f.view(l)->levelText();
        QVERIFY2(!t.text.trimmed().isEmpty(), qPrintable(name + " " + levelName(l)));
        QCOMPARE(f.view(l)->toPlainText(), t.text);  // the view shows the level
        QCOMPARE(int(t.lineNodes.size()), int(t.text.count('\n')));
        QVERIFY2(!t.linesFor({QString::fromStdString(f.controller.compile()->graph->topoOrder().back()->id())}).empty(),
                 qPrintable(name + " " + levelName(l) + ": the last node has no line"));
      }
      QVERIFY(f.view(Level::Cuda)->toPlainText().contains("__global__"));
      QVERIFY(f.view(Level::Cpp)->toPlainText().contains("extern \"C\""));
    }
  }

  void selectingANodeMarksItsLinesInEveryLevel() {
    Fixture f(sample("mlp.tsr"));
    QVERIFY(f.settle());
    f.controller.select({Selection::Node, "fc2", {}, {}});
    for (Level l : {Level::Graph, Level::Kernel, Level::Cuda, Level::Cpp}) {
      const CodeView* v = f.view(l);
      QVERIFY2(!v->markedLines().empty(), qPrintable(levelName(l)));
      QCOMPARE(v->markedLines(), linesNaming(v->levelText(), "fc2"));
    }
    // CUDA: fc2's lines lie in k1's function, none in k0's.
    const CodeView* cuda = f.view(Level::Cuda);
    const int k1 = lineWhere(cuda->levelText(), [](const QStringList&, const QString& s) { return s.contains(" tessera_k1("); });
    QVERIFY(k1 > 0);
    QVERIFY(cuda->markedLines().front() >= k1 - 3);  // the kernel's header comment comes just before
    // Kernel IR: the accumulation statement of the matrix product is one of them.
    bool reduce = false;
    for (int line : f.view(Level::Kernel)->markedLines()) reduce = reduce || lineText(f.view(Level::Kernel), line).contains("sum=");
    QVERIFY(reduce);
    // Fused: the group's header and the node's own line.
    const CodeView* fused = f.view(Level::Fused);
    QCOMPARE(int(fused->markedLines().size()), 2);
    QVERIFY(lineText(fused, fused->markedLines()[0]).startsWith("kernel k1 "));
    QVERIFY(lineText(fused, fused->markedLines()[1]).startsWith("  fc2 = MatMul"));
    // The kernel table selects the node's kernel.
    QCOMPARE(f.panel.kernelTable()->selectionModel()->selectedRows().value(0).row(), 1);

    // A node decomposed by a pass: its parts are marked.
    f.controller.select({Selection::Node, "act", {}, {}});
    const auto kernelLines = f.view(Level::Kernel)->markedLines();
    QVERIFY(!kernelLines.empty());
    for (int line : kernelLines) QVERIFY(lineText(f.view(Level::Kernel), line).contains("act."));
    // A group: every line of any of its nodes.
    f.controller.select({Selection::Group, "k0", {}, {}});
    QVERIFY(f.view(Level::Cuda)->markedLines().size() > f.view(Level::Fused)->markedLines().size());
    f.controller.select({});
    for (Level l : {Level::Graph, Level::Fused, Level::Kernel, Level::Cuda, Level::Cpp}) QVERIFY(f.view(l)->markedLines().empty());
  }

  void clickingALineSelectsItsNodes() {
    Fixture f(sample("mlp.tsr"));
    QVERIFY(f.settle());
    CodeView* cuda = f.view(Level::Cuda);
    // One node: that node.
    const int bias = lineWhere(cuda->levelText(), [](const QStringList& n, const QString&) { return n == QStringList{"bias2"}; });
    QVERIFY(bias >= 0);
    cuda->clickLine(bias);
    QCOMPARE(f.controller.selection().kind, Selection::Node);
    QCOMPARE(f.controller.selection().id, QString("bias2"));
    // The clicked view keeps its place; the line is marked.
    QVERIFY(std::count(cuda->markedLines().begin(), cuda->markedLines().end(), bias) == 1);
    // All the nodes of a group (the kernel's header comment): the group.
    const int header = lineWhere(cuda->levelText(), [](const QStringList&, const QString& s) { return s.startsWith("// kernel k0"); });
    QVERIFY(header >= 0);
    cuda->clickLine(header);
    QCOMPARE(f.controller.selection().kind, Selection::Group);
    QCOMPARE(f.controller.selection().id, QString("k0"));
    // A line that stands for no node leaves the selection alone.
    cuda->clickLine(0);
    QCOMPARE(f.controller.selection().id, QString("k0"));
    // The C++ and kernel IR levels link back the same way.
    CodeView* cpp = f.view(Level::Cpp);
    const int erf = lineWhere(cpp->levelText(), [](const QStringList& n, const QString&) { return n == QStringList{"act.erf"}; });
    QVERIFY(erf >= 0);
    cpp->clickLine(erf);
    QCOMPARE(f.controller.selection().id, QString("act.erf"));
    CodeView* kir = f.view(Level::Kernel);
    const int store = lineWhere(kir->levelText(), [](const QStringList& n, const QString& s) { return n == QStringList{"bias2"} && s.contains("out0["); });
    QVERIFY(store >= 0);
    kir->clickLine(store);
    QCOMPARE(f.controller.selection().id, QString("bias2"));
    // Graph IR: a node's line.
    CodeView* graph = f.view(Level::Graph);
    const int fc1 = lineWhere(graph->levelText(), [](const QStringList&, const QString& s) { return s.contains("node fc1 = MatMul"); });
    graph->clickLine(fc1);
    QCOMPARE(f.controller.selection().id, QString("fc1"));
  }

  void ptxFillsInTheBackgroundOrSaysWhy() {
    Fixture f(sample("softmax.tsr"));
    QVERIFY(f.settle());
    QSignalSpy progress(f.controller.code(), &CodeController::progress);
    f.panel.setLevel(Level::Ptx);  // asking for the PTX tab starts the job
    QVERIFY(waitFor([&] { return f.controller.code()->ptx() && f.controller.code()->ptx()->complete(); }, 60000));
    const LevelText& ptx = f.view(Level::Ptx)->levelText();
#if TESSERA_HAVE_CUDA
    QVERIFY2(ptx.note.isEmpty(), qPrintable(ptx.note));
    QVERIFY(ptx.text.contains(".entry tessera_k0"));
    QVERIFY(!progress.isEmpty());
    QCOMPARE(progress.last().at(0).value<Level>(), Level::Ptx);
    // Instructions link back through -lineinfo to the CUDA lines, and so to nodes.
    const int mapped = lineWhere(ptx, [](const QStringList& n, const QString&) { return !n.isEmpty(); });
    QVERIFY(mapped >= 0);
    const QString node = ptx.lineNodes[size_t(mapped)].front();
    f.controller.select({Selection::Node, node, {}, {}});
    QCOMPARE(f.view(Level::Ptx)->markedLines(), linesNaming(ptx, node));
    f.controller.select({});
    f.view(Level::Ptx)->clickLine(mapped);
    QVERIFY(f.controller.selection().kind != Selection::None);
    QVERIFY(f.panel.kernelModel()->index(0, CodeKernelModel::Ptx).data().toString().contains("lines"));
#else
    QVERIFY(f.view(Level::Ptx)->toPlainText().contains("CUDA"));
#endif
  }

  void kernelTableUnderTheModelTester() {
    SessionController controller;
    LevelsPanel panel(&controller);
    QAbstractItemModelTester tester(panel.kernelModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    panel.show();
    controller.openModel(sample("resnet_basic_block.tsr"));
    QVERIFY(waitFor([&] { return panel.kernelModel()->rowCount() > 0 && !controller.code()->busy(); }));
    CodeKernelModel* m = panel.kernelModel();
    QCOMPARE(m->rowCount(), int(controller.compile()->fusion->groups.size()));
    for (int row = 0; row < m->rowCount(); ++row) {
      QCOMPARE(m->index(row, CodeKernelModel::Id).data().toString(), QString("k%1").arg(row));
      QCOMPARE(m->index(row, CodeKernelModel::Entry).data().toString(), QString("tessera_k%1").arg(row));
      QVERIFY(m->index(row, CodeKernelModel::Loops).data().toInt() > 0);
      QVERIFY(m->index(row, CodeKernelModel::CudaLines).data().toInt() > 0);
    }
    QCOMPARE(m->rowOf("k1"), 1);
    QCOMPARE(m->rowOf("nope"), -1);
    // A click on a row selects its group.
    panel.kernelTable()->clicked(m->index(1, CodeKernelModel::Id));
    QCOMPARE(controller.selection().kind, Selection::Group);
    QCOMPARE(controller.selection().id, QString("k1"));
    // PTX status updates and a second model swap in under the tester.
    panel.setLevel(Level::Ptx);
    QVERIFY(waitFor([&] { return controller.code()->ptx() && controller.code()->ptx()->complete(); }));
    controller.openModel(sample("softmax.tsr"));
    QVERIFY(waitFor([&] { return controller.compile() && controller.compile()->graph->name() == "softmax" && m->rowCount() > 0; }));
  }

  void aNewCompileSupersedesTheRunningJob() {
    SessionController controller;
    controller.openModel(sample("transformer_block.tsr"));
    QVERIFY(waitFor([&] { return !controller.busy() && controller.compile(); }));
    auto first = controller.compile();
    auto firstDriver = controller.driver();
    controller.openModel(sample("mlp.tsr"));
    QVERIFY(waitFor([&] { return !controller.busy() && controller.compile() != first; }));
    auto second = controller.compile();
    CodeController code;
    QSignalSpy ready(&code, &CodeController::kernelsReady);
    code.setCompile(firstDriver, first);
    code.requestKernels();
    code.setCompile(controller.driver(), second);  // while the first is lowering
    code.requestKernels();
    QVERIFY(waitFor([&] { return !code.busy(); }));
    QVERIFY(code.kernels());
    QCOMPARE(code.kernels()->compile, second);
    QCOMPARE(ready.size(), 1);  // the superseded job's result never arrives
    QCOMPARE(ready.first().first().value<std::shared_ptr<const CodeResult>>()->compile, second);
    // Asking again hands back the same object, without a new job.
    code.requestKernels();
    QVERIFY(!code.busy());
    QCOMPARE(ready.size(), 2);
    QCOMPARE(ready.last().first().value<std::shared_ptr<const CodeResult>>(), code.kernels());
  }

  void hiddenPanelComputesNothing() {
    MainWindow w;
    w.show();
    w.openModel(sample("mlp.tsr"));
    QVERIFY(test::waitIdle(w));
    QCoreApplication::processEvents();
    auto* dock = w.findChild<QDockWidget*>("levelsDock");
    QVERIFY(dock);
    QVERIFY(!w.tabifiedDockWidgets(dock).isEmpty());  // a tab behind IR / diff
    QVERIFY(!w.controller()->code()->kernels());
    QVERIFY(!w.controller()->code()->busy());
    // Ctrl+4 brings the Levels dock forward at the CUDA tab, which lowers the model.
    QTest::keyClick(&w, Qt::Key_4, Qt::ControlModifier);
    auto* panel = qobject_cast<LevelsPanel*>(dock->widget());
    QCOMPARE(panel->level(), Level::Cuda);
    QVERIFY(waitFor([&] { return w.controller()->code()->kernels() != nullptr; }));
    QVERIFY(panel->view(Level::Cuda)->toPlainText().contains("tessera_k1"));
  }

  void inspectorShowsTheKernel() {
    MainWindow w;
    w.show();
    w.openModel(sample("mlp.tsr"));
    QVERIFY(test::waitIdle(w));
    w.controller()->select({Selection::Node, "bias1", {}, {}});
    QVERIFY(waitFor([&] { return w.inspector()->toPlainText().contains("tessera_k0"); }));
    const QString text = w.inspector()->toPlainText();
    const auto code = w.controller()->code()->kernels();
    QVERIFY(text.contains(QString("loops\n%1\n").arg(code->find("k0")->loops)));
    QVERIFY(text.contains("grid "));
    // The cost model's estimate and bound for the kernel.
    QVERIFY2(text.contains(QRegularExpression("predicted\\n[0-9.e+-]+ ms, (memory|compute|latency)-bound")), qPrintable(text));
    QVERIFY(text.contains(QRegularExpression("bound\\n(memory|compute|latency)\\n")));
    w.controller()->select({Selection::Group, "k1", {}, {}});
    QVERIFY(w.inspector()->toPlainText().contains("tessera_k1"));
  }

  void rendersTheCodeView() {
    QTemporaryDir dir;
    RenderRequest r;
    r.model = sample("mlp.tsr");
    r.view = "code";
    r.select = "fc2";
    r.output = dir.filePath("code.png");
    QCOMPARE(renderHeadless(r), 0);
    const QImage image(r.output);
    QVERIFY(image.width() > 300 && image.height() > 300);
  }

  void highlightersColourTheirTokens() {
    CodeView cuda(Level::Cuda);
    auto f = formatsOf(cuda, "__global__ void f(float* p) { for (int i = 0; i < 4; ++i) p[i] = 1.0f; }  // note");
    QVERIFY(formatAt(f, 0).foreground().color() != formatAt(f, 11).foreground().color());  // __global__ vs void
    QCOMPARE(formatAt(f, 30).fontWeight(), int(QFont::Bold));                              // for
    QVERIFY(formatAt(f, int(QString("__global__ void f(float* p) { for (int i = 0; i < 4; ++i) p[i] = 1.0f; }  // ").size())).fontItalic());
    CodeView ptx(Level::Ptx);
    f = formatsOf(ptx, "\tld.global.nc.f32 \t%f6, [%rd25];  // load");
    QCOMPARE(formatAt(f, 1).fontWeight(), int(QFont::Bold));  // the instruction
    QVERIFY(formatAt(f, 19).foreground().color().isValid() && formatAt(f, 19).foreground() != formatAt(f, 1).foreground());  // %f6
    CodeView ir(Level::Kernel);
    f = formatsOf(ir, "  node fc1 = MatMul(%x, %w1) -> %h1: f32[64,1024]  # fc1");
    QCOMPARE(formatAt(f, 2).fontWeight(), int(QFont::Bold));   // node
    QCOMPARE(formatAt(f, 14).fontWeight(), int(QFont::Bold));  // MatMul
    QVERIFY(formatAt(f, int(QString("  node fc1 = MatMul(%x, %w1) -> %h1: f32[64,1024]  ").size())).fontItalic());  // the comment
    // Block comments span lines in C++.
    LevelText two;
    two.text = "/* one\ntwo */ int x;\n";
    two.lineNodes.resize(2);
    cuda.setLevelText(two);
    QVERIFY(formatAt(cuda.document()->findBlockByNumber(1).layout()->formats(), 0).fontItalic());
    QVERIFY(!formatAt(cuda.document()->findBlockByNumber(1).layout()->formats(), 8).fontItalic());
  }
};

QTEST_MAIN(TestLevels)
#include "test_levels.moc"
