// Session files in the window: save after an override and reopen in a fresh window (same graph, groups,
// overrides, step, selection, panel parts); corrupt and newer-version files refused with a message naming the
// file while the window keeps what it had; autosave written on change and offered back; a changed model warned.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <fstream>

#include "gui_test_util.h"
#include "session/session.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"
#include "ui/session/session_state.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::waitIdle;

namespace {

// Prompts that never block: errors are recorded, recovery is answered with `restore` (and counted).
struct RecordingPrompts {
  QStringList errors;
  int recoveryOffers = 0;
  SessionPrompts make(bool restore) {
    SessionPrompts p;
    p.showError = [this](const QString&, const QString& message) { errors << message; };
    p.offerRecovery = [this, restore](const QString&, const QString&, std::function<void(bool)> answer) {
      ++recoveryOffers;
      answer(restore);
    };
    return p;
  }
};

QStringList groupsOf(const SessionController& c) {
  QStringList out;
  for (const FusedGroup& g : c.compile()->fusion->groups) {
    QString s = QString::fromStdString(g.id) + ":";
    for (const GroupNode& n : g.nodes) s += " " + QString::fromStdString(n.id);
    out << s;
  }
  return out;
}

QString copyInto(const QTemporaryDir& dir, const QString& name) {
  const QString to = dir.filePath(name);
  QFile::copy(sample(name), to);
  QFile(to).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
  return to;
}

}  // namespace

class TestSessionFiles : public QObject {
  Q_OBJECT
  QTemporaryDir cache_;

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(cache_.isValid());
    qputenv("XDG_CACHE_HOME", cache_.path().toUtf8());  // autosaves go here, not to the user's cache
  }

  void savesAndReopensTheSameState() {
    QTemporaryDir dir;
    const QString file = dir.filePath("mlp.tessera");
    RecordingPrompts prompts;
    MainWindow w;
    w.sessionFiles()->setPrompts(prompts.make(false));
    nlohmann::json run = {{"backend", "cpu"}, {"kernels", {{{"group", "k0"}, {"ms", 0.5}}}}};
    w.controller()->sessionParts()->add("last_run", [&run] { return run; }, nullptr);
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    SessionController* c = w.controller();
    const int groupsBefore = int(c->compile()->fusion->groups.size());
    c->addOverride({OverrideKind::ForbidFuse, "fc2", "bias2", {}, {}}, "Forbid fuse fc2 → bias2");
    QVERIFY(waitIdle(w));
    QCOMPARE(int(c->compile()->fusion->groups.size()), groupsBefore + 1);  // the override took effect
    QVERIFY(w.sessionFiles()->dirty());
    c->setCurrentStep(5);
    c->select({Selection::Node, "fc1", {}, {}});
    QVERIFY(waitIdle(w));
    QVERIFY(w.sessionFiles()->saveAs(file));
    QVERIFY(!w.sessionFiles()->dirty());
    QVERIFY(prompts.errors.isEmpty());

    MainWindow again;
    again.sessionFiles()->setPrompts(prompts.make(false));
    nlohmann::json restoredRun;
    again.controller()->sessionParts()->add("last_run", nullptr, [&](const nlohmann::json& j) { restoredRun = j; });
    again.openModel(file);
    QVERIFY(waitIdle(again));
    SessionController* d = again.controller();
    QVERIFY(d->compile() && d->compile()->fusion);
    QCOMPARE(groupsOf(*d), groupsOf(*c));
    QCOMPARE(compileFingerprint(*d->compile()), compileFingerprint(*c->compile()));
    QCOMPARE(d->overrides().size(), size_t(1));
    QCOMPARE(QString::fromStdString(d->overrides()[0].producer), QString("fc2"));
    QCOMPARE(d->currentStep(), 5);
    QCOMPARE(d->selection(), (Selection{Selection::Node, "fc1", {}, {}}));
    QCOMPARE(restoredRun, run);  // handed back to its owner, not recomputed
    QCOMPARE(again.sessionFiles()->sessionPath(), file);
    QVERIFY(!again.sessionFiles()->dirty());
    QVERIFY(again.windowTitle().startsWith("mlp.tessera"));
    QVERIFY(prompts.errors.isEmpty());
    // The undo stack starts clean at the saved state; undoing the saved override is a new change.
    QCOMPARE(d->undoStack()->count(), 0);
  }

  void keepsUnclaimedFieldsVerbatim() {
    QTemporaryDir dir;
    Session s = sessionForModel(sample("softmax.tsr").toStdString());
    s.tuning = {{"k0", {{"tile", 64}}}};
    s.view = {{"level", "kernel"}, {"future_panel", {1, 2, 3}}};
    const QString first = dir.filePath("a.tessera"), second = dir.filePath("b.tessera");
    saveSession(s, first.toStdString());
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.openModel(first);
    QVERIFY(waitIdle(w));
    QVERIFY(w.sessionFiles()->saveAs(second));
    Session back = loadSession(second.toStdString());
    QCOMPARE(back.tuning, s.tuning);
    QCOMPARE(back.view["level"], s.view["level"]);
    QCOMPARE(back.view["future_panel"], s.view["future_panel"]);
  }

  void refusesCorruptAndNewerFiles_data() {
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("corrupt") << QByteArray("{\"format\": \"tessera-session\", \"model\": {") << "byte";
    QTest::newRow("newer") << QByteArray(R"({"format": "tessera-session", "schema_version": 99, "model": {"path": "x.tsr"}})")
                           << "newer";
    QTest::newRow("not a session") << QByteArray(R"({"hello": 1})") << "format";
  }
  void refusesCorruptAndNewerFiles() {
    QFETCH(QByteArray, text);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    const QString bad = dir.filePath("bad.tessera");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
    f.close();
    RecordingPrompts prompts;
    MainWindow w;
    w.sessionFiles()->setPrompts(prompts.make(false));
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    w.controller()->addOverride({OverrideKind::ForbidFuse, "fc2", "bias2", {}, {}}, "Forbid fuse");
    QVERIFY(waitIdle(w));
    w.controller()->setCurrentStep(3);
    auto input = w.controller()->input();
    auto compile = w.controller()->compile();
    QSignalSpy loaded(w.controller(), &SessionController::modelLoaded);
    w.openModel(bad);
    QVERIFY(waitIdle(w));
    QCOMPARE(prompts.errors.size(), 1);
    QVERIFY2(prompts.errors[0].contains("bad.tessera") && prompts.errors[0].contains(expected), qPrintable(prompts.errors[0]));
    QCOMPARE(loaded.size(), 0);  // nothing was loaded or compiled
    QCOMPARE(w.controller()->input(), input);
    QCOMPARE(w.controller()->compile(), compile);
    QCOMPARE(w.controller()->overrides().size(), size_t(1));
    QCOMPARE(w.controller()->currentStep(), 3);
    QVERIFY(w.sessionFiles()->dirty());  // the unsaved override is still there to save
    QCOMPARE(w.sessionFiles()->documentPath(), sample("mlp.tsr"));
  }

  void autosavesAndRecovers() {
    QTemporaryDir dir;
    const QString model = copyInto(dir, "mlp.tsr");
    RecordingPrompts prompts;
    QString autosave;
    {
      MainWindow w;
      w.sessionFiles()->setPrompts(prompts.make(false));
      w.sessionFiles()->setAutosaveInterval(100);
      w.openModel(model);
      QVERIFY(waitIdle(w));
      QCOMPARE(prompts.recoveryOffers, 0);
      QVERIFY(!QFile::exists(QString::fromStdString(autosavePath(model.toStdString()))));
      w.controller()->addOverride({OverrideKind::ForbidFuse, "fc2", "bias2", {}, {}}, "Forbid fuse");
      QVERIFY(waitIdle(w));
      autosave = QString::fromStdString(autosavePath(model.toStdString()));
      QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(autosave), 5000);  // written by the change timer, no call needed
      QCOMPARE(loadSession(autosave.toStdString()).overrides.size(), size_t(1));
      // The window "crashes": destroyed without saving.
    }
    {
      MainWindow w;
      w.sessionFiles()->setPrompts(prompts.make(true));
      w.openModel(model);
      QVERIFY(waitIdle(w));
      QCOMPARE(prompts.recoveryOffers, 1);
      QCOMPARE(w.controller()->overrides().size(), size_t(1));
      QVERIFY(w.sessionFiles()->dirty());  // recovered work is not saved yet
      QCOMPARE(w.sessionFiles()->documentPath(), model);
      QVERIFY(w.sessionFiles()->sessionPath().isEmpty());
    }
    {
      MainWindow w;  // declining opens the file as saved and discards the autosave
      w.sessionFiles()->setPrompts(prompts.make(false));
      w.openModel(model);
      QVERIFY(waitIdle(w));
      QCOMPARE(prompts.recoveryOffers, 2);
      QCOMPARE(w.controller()->overrides().size(), size_t(0));
      QVERIFY(!QFile::exists(autosave));
    }
    QVERIFY(prompts.errors.isEmpty());
  }

  void savingDiscardsTheAutosave() {
    QTemporaryDir dir;
    const QString model = copyInto(dir, "softmax.tsr");
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.openModel(model);
    QVERIFY(waitIdle(w));
    w.controller()->setPassDisabled("cse", true);
    QVERIFY(waitIdle(w));
    const QString autosave = w.sessionFiles()->autosaveNow();
    QVERIFY(QFile::exists(autosave));
    QVERIFY(w.sessionFiles()->saveAs(dir.filePath("s.tessera")));
    QVERIFY(!QFile::exists(autosave));
    QVERIFY(w.sessionFiles()->autosaveNow().isEmpty());  // nothing changed since the save
  }

  void warnsWhenTheModelChanged() {
    QTemporaryDir dir;
    const QString model = copyInto(dir, "mlp.tsr");
    const QString file = dir.filePath("mlp.tessera");
    {
      MainWindow w;
      w.sessionFiles()->setPrompts({});
      w.openModel(model);
      QVERIFY(waitIdle(w));
      QVERIFY(w.sessionFiles()->saveAs(file));
    }
    std::ofstream(model.toStdString(), std::ios::app) << "\n# edited after saving\n";
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    QSignalSpy messages(w.sessionFiles(), &SessionFiles::message);
    w.openModel(file);
    QVERIFY(waitIdle(w));
    QVERIFY(w.controller()->compile());
    bool warned = false;
    for (const auto& m : messages) warned |= m.at(0).toString().contains("changed since the session was saved");
    QVERIFY(warned);
  }
};

QTEST_MAIN(TestSessionFiles)
#include "test_session_files.moc"
