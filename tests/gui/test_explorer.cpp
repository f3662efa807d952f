// Driving the explorer as a user: stepping through the pipeline (list, slider, keys), the IR diff, the
// inspector, overrides applied, undone and redone, a pass toggle, and headless rendering.
#include <QAbstractItemModelTester>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSlider>
#include <QTableView>
#include <QtTest>

#include "gui_test_util.h"
#include <QMenu>

#include "ui/graph/graph_items.h"
#include "ui/graph/graph_view.h"
#include "ui/window/headless_render.h"
#include "ui/pipeline/inspector_panel.h"
#include "ui/pipeline/ir_panel.h"
#include "ui/models/overrides_model.h"
#include "ui/pipeline/overrides_panel.h"
#include "ui/models/pipeline_model.h"
#include "ui/pipeline/pipeline_panel.h"
#include "ui/session/session_controller.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::waitIdle;

class TestExplorer : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void stepsThroughThePipeline() {
    MainWindow w;
    w.show();
    QAbstractItemModelTester tester(w.pipelinePanel()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    SessionController* c = w.controller();
    QCOMPARE(c->currentStep(), 11);
    QCOMPARE(w.pipelinePanel()->slider()->value(), 11);
    // Keys: Alt+← walks back one step at a time, down to the imported model.
    for (int expected = 10; expected >= 0; --expected) {
      QTest::keyClick(&w, Qt::Key_Left, Qt::AltModifier);
      QCOMPARE(c->currentStep(), expected);
      QVERIFY(waitIdle(w));
      QCOMPARE(int(w.graphView()->currentLayout()->nodes.size() > 0), 1);
    }
    QTest::keyClick(&w, Qt::Key_Left, Qt::AltModifier);
    QCOMPARE(c->currentStep(), 0);  // stays at the first
    // The slider and the list drive the same step.
    w.pipelinePanel()->slider()->setValue(5);
    QCOMPARE(c->currentStep(), 5);
    QCOMPARE(w.pipelinePanel()->view()->currentIndex().row(), 5);
    w.pipelinePanel()->view()->selectRow(4);
    QCOMPARE(c->currentStep(), 4);
    QTest::keyClick(&w, Qt::Key_Right, Qt::AltModifier);
    QCOMPARE(c->currentStep(), 5);
    QVERIFY(waitIdle(w));
    // The IR panel diffs decompose against the previous step: the Gelu line goes, its five nodes come.
    const QString diff = w.irPanel()->editor()->toPlainText();
    QVERIFY(diff.contains(QRegularExpression("^- .*Gelu", QRegularExpression::MultilineOption)));
    QCOMPARE(diff.count(QRegularExpression("^\\+ .*node ", QRegularExpression::MultilineOption)), 5);
    w.irPanel()->setDiff(false);
    QVERIFY(!w.irPanel()->editor()->toPlainText().contains("\n- "));
    QVERIFY(w.irPanel()->editor()->toPlainText().startsWith("graph mlp"));
  }

  void inspectorShowsNodeAndDecisions() {
    MainWindow w;
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    w.controller()->select({Selection::Node, "fc1", {}, {}});
    const QString text = w.inspector()->toPlainText();
    QVERIFY(text.contains("MatMul fc1"));
    QVERIFY(text.contains("33,554,432"));  // FLOPs: 2 · 64 · 256 · 1024
    QVERIFY(text.contains("k0 · gemm+epilogue"));
    QVERIFY(text.contains("fused fc1 → bias1 [epilogue]"));
    w.controller()->select({Selection::Group, "k1", {}, {}});
    QVERIFY(w.inspector()->toPlainText().contains("k1 · gemm+epilogue"));
    w.controller()->select({Selection::Value, "a", "act.out", "fc2"});
    const QString value = w.inspector()->toPlainText();
    QVERIFY(value.contains("f32[64,1024]"));
    QVERIFY(value.contains("262,144"));  // bytes: 64 · 1024 · 4
    QVERIFY(value.contains("separate act.out → fc2 [gemm-into-gemm]"));
  }

  void appliesUndoesAndRedoesAnOverride() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QAbstractItemModelTester tester(w.overridesPanel()->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    SessionController* c = w.controller();
    QCOMPARE(int(c->compile()->fusion->groups.size()), 2);
    c->addOverride({OverrideKind::ForbidFuse, "fc2", "bias2", {}, {}}, "Forbid fuse fc2 → bias2");
    QVERIFY(waitIdle(w));
    QCOMPARE(int(c->compile()->fusion->groups.size()), 3);  // bias2 runs as its own kernel
    QCOMPARE(w.overridesPanel()->model()->rowCount(), 1);
    QCOMPARE(w.overridesPanel()->model()->index(0, OverridesModel::Status).data().toString(), QString("applied"));
    QCOMPARE(c->undoStack()->undoText(), QString("Forbid fuse fc2 → bias2"));
    QTest::keyClick(&w, Qt::Key_Z, Qt::ControlModifier);  // undo
    QVERIFY(waitIdle(w));
    QCOMPARE(int(c->compile()->fusion->groups.size()), 2);
    QCOMPARE(w.overridesPanel()->model()->rowCount(), 0);
    QTest::keyClick(&w, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);  // redo
    QVERIFY(waitIdle(w));
    QCOMPARE(int(c->compile()->fusion->groups.size()), 3);
    // A refused override shows the rule it breaks: a gemm cannot take another gemm as its epilogue.
    c->addOverride({OverrideKind::ForceFuse, "act.out", "fc2", {}, {}}, "Force fuse act.out → fc2");
    QVERIFY(waitIdle(w));
    const OverrideStatus& forced = w.overridesPanel()->model()->entry(1);
    QCOMPARE(forced.status, OverrideState::Refused);
    QCOMPARE(QString::fromStdString(forced.rule), QString("gemm-into-gemm"));
    QCOMPARE(w.overridesPanel()->model()->index(1, OverridesModel::Status).data().toString(),
             QString("refused [gemm-into-gemm]"));
    QCOMPARE(int(c->compile()->fusion->groups.size()), 3);  // nothing else changed
  }

  void rightClickOnAnEdgeForbidsFusion() {
    MainWindow w;
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    EdgeItem* edge = nullptr;
    for (QGraphicsItem* item : w.graphView()->scene()->items())
      if (item->type() == EdgeItemType) {
        auto* e = static_cast<EdgeItem*>(item);
        if (e->edge().producerId == "fc2" && e->edge().consumerId == "bias2") edge = e;
      }
    QVERIFY(edge);
    QMenu menu;
    w.graphView()->fillContextMenu(edge, menu);
    QStringList texts;
    for (QAction* a : menu.actions()) texts << a->text();
    QCOMPARE(texts, QStringList({"Force fuse fc2 → bias2", "Forbid fuse fc2 → bias2"}));
    menu.actions().at(1)->trigger();
    QVERIFY(waitIdle(w));
    QCOMPARE(int(w.controller()->compile()->fusion->groups.size()), 3);
    QCOMPARE(w.controller()->undoStack()->count(), 1);
    // A group offers Split and Collapse; splitting k0 by its first node is applied.
    ClusterItem* k0 = nullptr;
    for (QGraphicsItem* item : w.graphView()->scene()->items())
      if (item->type() == ClusterItemType && static_cast<ClusterItem*>(item)->cluster().id == "k0")
        k0 = static_cast<ClusterItem*>(item);
    QVERIFY(k0);
    QMenu groupMenu;
    w.graphView()->fillContextMenu(k0, groupMenu);
    QCOMPARE(groupMenu.actions().at(0)->text(), QString("Split k0"));
    QCOMPARE(groupMenu.actions().at(1)->text(), QString("Collapse k0"));
    groupMenu.actions().at(0)->trigger();
    QVERIFY(waitIdle(w));
    QCOMPARE(w.overridesPanel()->model()->index(1, OverridesModel::Kind).data().toString(), QString("split"));
    QCOMPARE(w.overridesPanel()->model()->index(1, OverridesModel::Status).data().toString(), QString("applied"));
    QVERIFY(int(w.controller()->compile()->fusion->groups.size()) > 3);
  }

  void passToggleDisablesAPassUndoably() {
    MainWindow w;
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    QListWidget* passes = w.overridesPanel()->passes();
    QListWidgetItem* decompose = passes->findItems("decompose", Qt::MatchExactly).value(0);
    QVERIFY(decompose);
    decompose->setCheckState(Qt::Unchecked);
    QVERIFY(waitIdle(w));
    QCOMPARE(int(w.controller()->compile()->graph->numNodes()), 5);  // Gelu stays whole
    w.controller()->undoStack()->undo();
    QVERIFY(waitIdle(w));
    QCOMPARE(int(w.controller()->compile()->graph->numNodes()), 9);
    QCOMPARE(decompose->checkState(), Qt::Checked);
  }

  void cancelDropsTheRunningCompile() {
    MainWindow w;
    w.openModel(sample("transformer_block.tsr"));
    w.controller()->cancel();
    QVERIFY(!w.controller()->busy());
    QTest::qWait(500);
    QVERIFY(!w.controller()->input());  // the result of the cancelled job never arrived
  }

  void rendersPanelsHeadless() {
    QTemporaryDir dir;
    for (const char* view : {"graph", "pipeline", "inspector"}) {
      RenderRequest r;
      r.model = sample("mlp.tsr");
      r.view = view;
      r.step = 5;
      r.size = QSize(1200, 800);
      r.output = dir.filePath(QString(view) + ".png");
      QCOMPARE(renderHeadless(r), 0);
      QImage image(r.output);
      QVERIFY(!image.isNull());
      QVERIFY(image.width() > 200 && image.height() > 200);
    }
    RenderRequest bad;
    bad.model = sample("mlp.tsr");
    bad.view = "nonsense";
    bad.output = dir.filePath("x.png");
    QCOMPARE(renderHeadless(bad), 1);
  }
};

QTEST_MAIN(TestExplorer)
#include "test_explorer.moc"
