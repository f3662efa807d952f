#include <QtTest>
class TestPassGolden : public QObject {
  Q_OBJECT
 private slots:
  void todo() { QSKIP("not yet"); }
};
QTEST_APPLESS_MAIN(TestPassGolden)
#include "test_pass_golden.moc"
