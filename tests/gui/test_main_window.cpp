// The window as a whole: opening every sample, a bad file, menus and shortcuts, the remembered dock layout.
#include <QAbstractItemModelTester>
#include <QDockWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QSignalSpy>
#include <QtTest>

#include "gui_test_util.h"
#include "ui/graph/graph_view.h"
#include "ui/models/node_table_model.h"
#include "ui/session/session_controller.h"

using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::waitIdle;

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void opensEachSample_data() {
    QTest::addColumn<QString>("file");
    for (const char* s : {"mlp.tsr", "transformer_block.tsr", "conv_bn_relu.tsr", "attention.tsr", "layernorm.tsr",
                          "resnet_basic_block.tsr", "softmax.tsr"})
      QTest::newRow(s) << QString(s);
  }
  void opensEachSample() {
    QFETCH(QString, file);
    MainWindow w;
    QAbstractItemModelTester tester(w.nodeModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy loaded(w.controller(), &SessionController::modelLoaded);
    w.openModel(sample(file));
    QVERIFY(waitIdle(w));
    QCOMPARE(loaded.size(), 1);
    const auto result = loaded.takeFirst().at(0).value<LoadedModel>();
    QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
    auto compile = w.controller()->compile();
    QVERIFY(compile && compile->fusion);
    // The window shows the last step: the final graph, its nodes in the table, every node drawn.
    QCOMPARE(w.controller()->currentStep(), int(compile->steps.size()));
    QCOMPARE(w.nodeModel()->rowCount(), int(compile->graph->numNodes()));
    auto layout = w.graphView()->currentLayout();
    QVERIFY(layout);
    QCOMPARE(int(layout->nodes.size()), int(compile->graph->numNodes() + compile->graph->inputs().size()));
    QCOMPARE(int(layout->clusters.size()), int(compile->fusion->groups.size()));
  }

  void mlpHasTheHandCheckedShape() {
    MainWindow w;
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    // 11 recorded steps (10 passes + fuse) after the imported model; decompose turns Gelu into 5 nodes, so 9.
    QCOMPARE(w.controller()->stepCount(), 12);
    QCOMPARE(w.nodeModel()->rowCount(), 9);
    QCOMPARE(int(w.controller()->compile()->fusion->groups.size()), 2);
    QVERIFY(w.windowTitle().startsWith("mlp.tsr"));
  }

  void reportsABadFileWithoutBlocking() {
    QTemporaryFile bad(QDir::tempPath() + "/XXXXXX.onnx");
    QVERIFY(bad.open());
    bad.write("this is not a protobuf");
    bad.close();
    MainWindow w;
    QSignalSpy loaded(w.controller(), &SessionController::modelLoaded);
    w.openModel(bad.fileName());
    QVERIFY(loaded.wait(20000));
    auto result = loaded.takeFirst().at(0).value<LoadedModel>();
    QVERIFY(!result.graph);
    QVERIFY(result.error.contains(bad.fileName()));
    QVERIFY(w.findChild<QMessageBox*>("openErrorBox"));
    QCOMPARE(w.nodeModel()->rowCount(), 0);
  }

  void hasTheMenusAndShortcutsOfUiMd() {
    MainWindow w;
    QStringList menus;
    for (QAction* a : w.menuBar()->actions()) menus << a->text().remove('&');
    QCOMPARE(menus, QStringList({"File", "Edit", "View", "Branch", "Run", "Help"}));
    QStringList shortcuts;
    for (QAction* a : w.findChildren<QAction*>())
      for (const QKeySequence& k : a->shortcuts()) shortcuts << k.toString();
    for (const char* k : {"Ctrl+O", "Ctrl+Z", "Ctrl+Shift+Z", "Ctrl+F", "Ctrl+0", "Ctrl+=", "Ctrl+-", "Alt+Left", "Alt+Right", "F5", "Ctrl+Shift+N", "Ctrl+Shift+C", "Ctrl+Shift+A"})
      QVERIFY2(shortcuts.contains(k), k);
  }

  void remembersTheDockLayout() {
    QByteArray state;
    {
      MainWindow w;
      w.show();
      auto* inspector = w.findChild<QDockWidget*>("inspectorDock");
      QVERIFY(inspector && inspector->isVisible());
      inspector->hide();
      w.close();  // saves geometry and state
    }
    MainWindow again;
    again.show();
    QVERIFY(!again.findChild<QDockWidget*>("inspectorDock")->isVisible());
    QVERIFY(again.findChild<QDockWidget*>("pipelineDock")->isVisible());
    again.findChild<QDockWidget*>("inspectorDock")->show();
    again.close();
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
