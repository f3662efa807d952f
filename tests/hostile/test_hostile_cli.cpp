// The hostile-inputs corpus through tessera-cli: every refused file exits 2 with one line on stderr naming the
// file and its fault, within the test's time; the valid extremes open (info) and run on the reference backend.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "hostile_corpus.h"

using tessera::hostile::HostileFile;

class TestHostileCli : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::vector<HostileFile> refused_, extremes_;

  struct Result {
    int code;
    QString out, err;
  };
  static Result cli(const std::vector<std::string>& command, const std::string& path) {
    QStringList args;
    for (const auto& a : command) args << QString::fromStdString(a);
    args << QString::fromStdString(path);
    QProcess p;
    p.start(TESSERA_CLI, args);
    if (!p.waitForFinished(120000)) p.kill();
    return {p.exitStatus() == QProcess::CrashExit ? -1 : p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
  }

  static void rows(const std::vector<HostileFile>& files) {  // one data row a file, by its index
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < files.size(); ++i) QTest::newRow(files[i].name.c_str()) << int(i);
  }

 private slots:
  void initTestCase() {
    refused_ = tessera::hostile::writeHostileCorpus(dir_.path().toStdString());
    extremes_ = tessera::hostile::writeValidExtremes(dir_.path().toStdString());
  }
  void refusedWithOneLine_data() { rows(refused_); }
  void refusedWithOneLine() {
    QFETCH(int, index);
    const HostileFile& f = refused_[size_t(index)];
    Result r = cli(f.command, f.path);
    QString err = r.err.trimmed();
    QVERIFY2(r.code == 2, qPrintable(QString("exit %1, stderr: %2").arg(r.code).arg(err)));
    QVERIFY2(!err.contains('\n'), qPrintable(err));
    QVERIFY2(err.contains(QString::fromStdString(f.name)), qPrintable(err));
    QVERIFY2(err.contains(QString::fromStdString(f.fault)), qPrintable(err));
  }
  void validExtremesOpenAndRun_data() { rows(extremes_); }
  void validExtremesOpenAndRun() {
    QFETCH(int, index);
    const HostileFile& f = extremes_[size_t(index)];
    Result r = cli(f.command, f.path);
    QVERIFY2(r.code == 0, qPrintable(QString("exit %1, stderr: %2").arg(r.code).arg(r.err)));
    QVERIFY2(r.out.contains(QString::fromStdString(f.fault)), qPrintable(r.out.left(2000)));
  }
};

QTEST_GUILESS_MAIN(TestHostileCli)
#include "test_hostile_cli.moc"
