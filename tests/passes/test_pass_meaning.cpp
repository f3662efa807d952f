#include <QtTest>
class TestPassMeaning : public QObject {
  Q_OBJECT
 private slots:
  void todo() { QSKIP("not yet"); }
};
QTEST_APPLESS_MAIN(TestPassMeaning)
#include "test_pass_meaning.moc"
