#include <QAbstractItemModelTester>
#include <QMessageBox>
#include <QSignalSpy>
#include <QtTest>

#include "ui/main_window.h"
#include "ui/node_table_model.h"
#include "ui/session_controller.h"

using namespace tessera::ui;

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void opensEachSample_data() {
    QTest::addColumn<QString>("sample");
    QTest::addColumn<int>("nodes");
    QTest::newRow("mlp") << "mlp.tsr" << 5;
    QTest::newRow("transformer_block") << "transformer_block.tsr" << 26;
    QTest::newRow("conv_bn_relu") << "conv_bn_relu.tsr" << 3;
  }
  void opensEachSample() {
    QFETCH(QString, sample);
    QFETCH(int, nodes);
    MainWindow w;
    QAbstractItemModelTester tester(w.nodeModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy loaded(w.controller(), &SessionController::modelLoaded);
    w.openModel(QString(TESSERA_SOURCE_DIR "/samples/") + sample);
    QVERIFY(loaded.wait(20000));
    QCOMPARE(w.nodeModel()->rowCount(), nodes);
    QCOMPARE(w.nodeModel()->index(0, NodeTableModel::Op).data().toString().isEmpty(), false);
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
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
