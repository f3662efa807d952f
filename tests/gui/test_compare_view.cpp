// Branches, the compare view and the tensor panel, driven as a user would: two branches of mlp (one with a
// forced split), both run on cpu with values kept, compared side by side (synchronized selection, per-kernel
// deltas), a tensor and its error inspected and exported, the session saved and reopened with both branches,
// and `tessera-cli compare --json` on the saved file giving the window's deltas.
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcess>
#include <QScrollBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_util.h"
#include "io/npy.h"
#include "ui/compare/compare_view.h"
#include "ui/compare/tensor_panel.h"
#include "ui/graph/graph_items.h"
#include "ui/graph/graph_view.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"

using namespace tessera;
using namespace tessera::ui;
using namespace tessera::ui::test;

namespace {

QString selectedId(GraphView* view) {
  const auto selected = view->scene()->selectedItems();
  if (selected.size() != 1 || selected.front()->type() != NodeItemType) return {};
  return static_cast<NodeItem*>(selected.front())->node().id;
}

// Waits until nothing runs, compiles or lays out, and the run controller has a run.
bool settle(MainWindow& w) {
  QDeadlineTimer deadline(120000);
  while (!deadline.hasExpired()) {
    if (!waitIdle(w)) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (!w.controller()->runs()->running() && w.controller()->runs()->lastRun() && w.idle()) return true;
    QThread::msleep(5);
  }
  return false;
}

bool waitCompared(CompareView* view) {
  QDeadlineTimer deadline(60000);
  while (!deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    if (!view->busy() && !view->left()->runner()->busy() && !view->right()->runner()->busy()) return true;
    QThread::msleep(5);
  }
  return false;
}

}  // namespace

class TestCompareView : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  QString path(const QString& name) const { return tmp_.path() + "/" + name; }

 private slots:
  void branchesCompareTensorsAndReopen() {
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.resize(1400, 900);
    w.show();
    SessionController* c = w.controller();
    RunController* runs = c->runs();
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    QCOMPARE(c->branchNames(), QStringList{"main"});
    runs->setBackend("cpu");
    runs->setKeepValues(true);
    runs->run();
    QVERIFY(waitForRun(runs, nullptr));
    const auto mainRun = runs->lastRun();
    QVERIFY(mainRun->report.ran && mainRun->values);

    // A second branch, with a forced split: it runs again by itself (the run was asked for) with one kernel more.
    QCOMPARE(c->createBranch("split"), QString());
    QCOMPARE(c->currentBranch(), QString("split"));
    QCOMPARE(c->createBranch("split"), QString("there is a branch 'split' already"));
    c->addOverride(Override{OverrideKind::Split, {}, {}, "fc1", {}}, "split fc1");
    QVERIFY(waitForRun(runs, mainRun));
    QVERIFY(settle(w));
    QVERIFY(runs->lastRun()->report.kernels.size() > mainRun->report.kernels.size());
    // Rename and delete are undoable; the current branch cannot be deleted.
    QVERIFY(!c->deleteBranch("split").isEmpty());
    QCOMPARE(c->renameBranch("split", "split2"), QString());
    QCOMPARE(c->branchNames(), (QStringList{"main", "split2"}));
    c->undoStack()->undo();
    QCOMPARE(c->branchNames(), (QStringList{"main", "split"}));
    QCOMPARE(c->currentBranch(), QString("split"));

    // Switching back recompiles main (no overrides) and gives it its own run back.
    QCOMPARE(c->switchBranch("main"), QString());
    QVERIFY(settle(w));
    QVERIFY(c->overrides().empty());
    QCOMPARE(runs->lastRun()->report.kernels.size(), mainRun->report.kernels.size());

    // The compare view: split against main, per-kernel deltas for every group change.
    auto* view = w.findChild<CompareView*>();
    QVERIFY(view);
    view->compareBranches("main", "split");
    QVERIFY(waitCompared(view));
    QVERIFY2(view->comparison(), qPrintable(view->error()));
    const compare::Comparison& cmp = *view->comparison();
    QVERIFY(cmp.kernelsB > cmp.kernelsA);
    QVERIFY(std::any_of(cmp.groups.begin(), cmp.groups.end(), [](auto& g) { return g.kind == compare::GroupChange::Split; }));
    QCOMPARE(view->deltaTable()->rowCount(), int(cmp.kernels.size()));
    for (size_t i = 0; i < cmp.kernels.size(); ++i) {
      QVERIFY(cmp.kernels[i].msA >= 0 && cmp.kernels[i].msB >= 0);
      QCOMPARE(view->deltaTable()->item(int(i), 5)->text(), QString::number(cmp.kernels[i].deltaMs(), 'f', 4));
    }
    QVERIFY(QString::fromStdString(cmp.summary).startsWith("split vs main: "));
    // The split is marked on both graphs: B's groups name A's group they came from, A's names B's.
    auto labelled = [](GraphView* g, const QString& text) {
      const auto layout = g->currentLayout();
      return layout && std::any_of(layout->clusters.begin(), layout->clusters.end(),
                                   [&](const LayoutCluster& c) { return c.label.contains(text); });
    };
    QVERIFY(labelled(view->right(), "split: A's "));
    QVERIFY(labelled(view->left(), "split: B's "));
    QVERIFY(view->diffText()->toPlainText().contains("=== fused: +"));
    QVERIFY(view->diffText()->toPlainText().contains("=== kernel: +"));
    QVERIFY(view->diffText()->toPlainText().contains("=== cuda: +"));
    QVERIFY(view->diffText()->toPlainText().contains("=== cpp: +"));
    QVERIFY(!view->diffText()->toPlainText().contains("=== ptx:"));
    // One level picked shows that level alone; PTX, picked, compiles both sides and diffs them too.
    view->levelPick()->setCurrentText("cuda");
    QVERIFY(view->diffText()->toPlainText().startsWith("=== cuda: +"));
    QVERIFY(!view->diffText()->toPlainText().contains("=== kernel:"));
    QVERIFY(view->diffText()->toPlainText().contains("+ // kernel"));  // the split's extra kernel
    view->levelPick()->setCurrentText("ptx");
    QVERIFY(view->busy());
    QVERIFY(waitCompared(view));
    QVERIFY2(view->diffText()->toPlainText().startsWith("=== ptx: +"), qPrintable(view->diffText()->toPlainText().left(200)));
    view->levelPick()->setCurrentIndex(0);
    QVERIFY(view->diffText()->toPlainText().contains("=== ptx: +"));
    QVERIFY(view->diffText()->toPlainText().contains("=== graph: +"));
    // Selecting in one graph selects the matched node in the other, both ways.
    QVERIFY(view->selectNode("fc2", false));
    QCOMPARE(selectedId(view->left()), QString("fc2"));
    QCOMPARE(selectedId(view->right()), QString("fc2"));
    QVERIFY(view->selectNode("bias1", true));
    QCOMPARE(selectedId(view->left()), QString("bias1"));
    // Panning one graph pans the other to the same share of its range (both zoomed in, so both scroll).
    view->left()->zoomBy(4);
    view->right()->zoomBy(4);
    QScrollBar *leftBar = view->left()->verticalScrollBar(), *rightBar = view->right()->verticalScrollBar();
    QVERIFY(leftBar->maximum() > leftBar->minimum() && rightBar->maximum() > rightBar->minimum());
    leftBar->setValue(leftBar->maximum());
    QCOMPARE(rightBar->value(), rightBar->maximum());
    rightBar->setValue(rightBar->minimum());
    QCOMPARE(leftBar->value(), leftBar->minimum());

    // The tensor panel on an edge: the first kernel's output, checked against the reference.
    auto* tensor = w.findChild<TensorPanel*>();
    QVERIFY(tensor);
    QString kept;
    for (const auto& [name, t] : runs->lastRun()->values->run)
      if (runs->lastRun()->values->reference.count(name) && t.shape().size() == 2 && name != "x") kept = QString::fromStdString(name);
    QVERIFY(!kept.isEmpty());
    c->select({Selection::Value, kept, {}, {}});
    QCOMPARE(tensor->valueName(), kept);
    QVERIFY(tensor->stats() && tensor->stats()->count > 0);
    QVERIFY(tensor->error() && tensor->error()->comparable);
    QVERIFY(tensor->error()->maxRel < 1e-3);
    QCOMPARE(int64_t(tensor->sliceTable()->columnCount()), std::min<int64_t>(64, tensor->stats()->shape[1]));
    QCOMPARE(tensor->exportNpy(path("t.npy")), QString());
    QCOMPARE(readNpy(path("t.npy").toStdString()).shape(), tensor->stats()->shape);
    QVERIFY(!tensor->showValue("no-such-value"));
    // The accuracy overlay: every group the run kept a value of carries its error against the reference.
    auto* accuracy = w.findChild<QAction*>("accuracyOverlayAction");
    QVERIFY(accuracy);
    accuracy->setChecked(true);
    const auto overlay = w.graphView()->timeOverlay();
    QCOMPARE(overlay.size(), c->compile()->fusion->groups.size());
    for (const auto& [group, t] : overlay) QVERIFY2(t.relError >= 0 && t.relError < 1e-3, qPrintable(group));
    QVERIFY(overlay.begin()->second.text().startsWith("rel err "));
    accuracy->setChecked(false);
    QVERIFY(w.graphView()->timeOverlay().begin()->second.relError < 0);

    // Save with both branches; reopen; the CLI compares the saved branches with the window's deltas.
    view->compareBranches("main", "split");  // from the state being saved
    QVERIFY(waitCompared(view));
    const nlohmann::json windowKernels = view->comparison()->toJson()["kernels"];
    QVERIFY(w.sessionFiles()->saveAs(path("two.tessera")));
    QProcess cli;
    cli.start(TESSERA_CLI, {"compare", path("two.tessera") + "#main", path("two.tessera") + "#split", "--json"});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json j = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    QCOMPARE(j["kernels"], windowKernels);

    MainWindow again;
    again.sessionFiles()->setPrompts({});
    again.openModel(path("two.tessera"));
    QVERIFY(waitIdle(again));
    QCOMPARE(again.controller()->branchNames(), (QStringList{"main", "split"}));
    QCOMPARE(again.controller()->currentBranch(), QString("main"));
    QCOMPARE(again.controller()->switchBranch("split"), QString());
    QVERIFY(waitIdle(again));
    QCOMPARE(again.controller()->overrides().size(), size_t(1));
  }

  // render --view compare draws the two branches of a saved session.
  // B from a file: another model (mlp with a ReLU for its GELU, fc2 under another id and output name) against
  // the main branch. Unmapped, fc2 is matched by id, name or provenance if at all; mapped by the user, fc2 is proj. A mapping naming an absent node, a malformed one and an unreadable file are refused
  // naming what is wrong, and the view stays usable.
  void comparesWithAFileAndAMapping() {
    QFile in(sample("mlp.tsr"));
    QVERIFY(in.open(QIODevice::ReadOnly));
    QString text = QString::fromUtf8(in.readAll());
    QVERIFY(text.contains("node act = Gelu(%h1b) -> %a\n"));
    text.replace("node act = Gelu(%h1b) -> %a\n", "node act = Relu(%h1b) -> %a\n");
    QVERIFY(text.contains("node fc2 = MatMul(%a, %w2) -> %h2\n"));
    text.replace("node fc2 = MatMul(%a, %w2) -> %h2\n", "node proj = MatMul(%a, %w2) -> %p\n").replace("Add(%h2, %b2)", "Add(%p, %b2)");
    const QString other = path("mlp_relu.tsr");
    QFile out(other);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(text.toUtf8());
    out.close();
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    auto* view = w.findChild<CompareView*>();
    view->compareWithFile("main", other);
    QVERIFY(waitCompared(view));
    QVERIFY2(view->comparison() && view->error().isEmpty(), qPrintable(view->error()));
    auto matchOf = [&](const std::string& a) -> const compare::NodeMatch* {
      for (const compare::NodeMatch& m : view->comparison()->nodes.matched)
        if (m.a == a) return &m;
      return nullptr;
    };
    const compare::NodeMatch* unmapped = matchOf("fc2");
    QVERIFY(!unmapped || unmapped->by != compare::MatchBy::Mapping);
    QVERIFY(QString::fromStdString(view->comparison()->labelB).contains("mlp_relu"));
    view->mappingEdit()->setText("fc2=proj");
    view->compareWithFile("main", other);
    QVERIFY(waitCompared(view));
    QVERIFY2(view->comparison() && view->error().isEmpty(), qPrintable(view->error()));
    const compare::NodeMatch* mapped = matchOf("fc2");
    QVERIFY(mapped);
    QCOMPARE(mapped->b, std::string("proj"));
    QVERIFY(mapped->by == compare::MatchBy::Mapping);
    QVERIFY(std::find(view->comparison()->nodes.added.begin(), view->comparison()->nodes.added.end(), "proj") ==
            view->comparison()->nodes.added.end());
    // A mapped node that a pass rewrote (decompose turns the GELU into erf arithmetic) is named in a note.
    view->mappingEdit()->setText("fc2=proj, act=act");
    view->compareWithFile("main", other);
    QVERIFY(waitCompared(view));
    QVERIFY2(view->comparison(), qPrintable(view->error()));
    const auto& notes = view->comparison()->notes;
    QVERIFY(std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return n.find("'act'") != std::string::npos; }));
    view->mappingEdit()->setText("fc2=nope");
    view->compareWithFile("main", other);
    QVERIFY2(view->error().contains("no node 'nope' in B"), qPrintable(view->error()));
    view->mappingEdit()->setText("fc2");
    view->compareWithFile("main", other);
    QVERIFY2(view->error().contains("'fc2' is not A_NODE=B_NODE"), qPrintable(view->error()));
    view->mappingEdit()->clear();
    view->compareWithFile("main", path("missing.tsr"));
    QVERIFY2(view->error().contains("missing.tsr"), qPrintable(view->error()));
    view->compareBranches("main", "main");  // still usable
    QVERIFY(waitCompared(view));
    QVERIFY2(view->comparison() && view->error().isEmpty(), qPrintable(view->error()));
  }

  // Two pass steps of one branch: main after canonicalize against main after decompose (the GELU decomposed
  // into erf arithmetic): graphs alone, no kernels; `tessera-cli compare --step-a --step-b` says the same.
  void comparesTwoPassSteps() {
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    auto* view = w.findChild<CompareView*>();
    QVERIFY(view->stepPick(false)->findText("decompose") > 0);
    view->stepPick(false)->setCurrentText("canonicalize");
    view->stepPick(true)->setCurrentText("decompose");
    view->compareBranches("main", "main");
    QVERIFY(waitCompared(view));
    QVERIFY2(view->comparison() && view->error().isEmpty(), qPrintable(view->error()));
    const compare::Comparison& cmp = *view->comparison();
    QCOMPARE(QString::fromStdString(cmp.labelB), QString("main @ decompose"));
    QVERIFY(std::find(cmp.nodes.added.begin(), cmp.nodes.added.end(), "act.erf") != cmp.nodes.added.end());
    QVERIFY(std::find(cmp.nodes.removed.begin(), cmp.nodes.removed.end(), "act") != cmp.nodes.removed.end());
    QVERIFY(cmp.kernels.empty() && cmp.groups.empty());
    QVERIFY2(QString::fromStdString(cmp.summary).contains("graphs compared"), cmp.summary.c_str());
    QProcess cli;
    cli.start(TESSERA_CLI, {"compare", sample("mlp.tsr"), sample("mlp.tsr"), "--step-a", "canonicalize", "--step-b",
                            "decompose", "--json"});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    const nlohmann::json j = nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
    QCOMPARE(j["nodes"]["added"].size(), cmp.nodes.added.size());
    QCOMPARE(j["nodes"]["removed"].size(), cmp.nodes.removed.size());
    view->stepPick(false)->setCurrentIndex(0);  // last: kernels again
    view->stepPick(true)->setCurrentIndex(0);
    view->compareBranches("main", "main");
    QVERIFY(waitCompared(view));
    QVERIFY(view->comparison() && !view->comparison()->groups.empty());
  }

  void renderCompareView() {
    QVERIFY(QFile::exists(path("two.tessera")));
    QProcess cli;
    cli.start(TESSERA_CLI, {"render", path("two.tessera"), "--view", "compare", "-o", path("compare.png"), "--width", "900",
                            "--height", "600"});
    QVERIFY(cli.waitForFinished(120000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    QCOMPARE(QImage(path("compare.png")).size(), QSize(900, 600));
  }

  void initTestCase() { QVERIFY(tmp_.isValid()); }
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
