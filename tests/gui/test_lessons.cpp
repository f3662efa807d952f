// Lessons (ui/lessons): the file format's checks, every shipped lesson played to its end with the learner's
// actions performed, the exported page, and Help > Lessons.
#include <QAction>
#include <QDockWidget>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

#include "gui_test_util.h"
#include "ir/error.h"
#include "ui/graph/graph_items.h"
#include "ui/graph/graph_view.h"
#include "ui/lessons/lesson.h"
#include "ui/lessons/lesson_caption.h"
#include "ui/lessons/lesson_export.h"
#include "ui/lessons/lesson_player.h"
#include "ui/run/run_controller.h"
#include "ui/schedule/schedule_panel.h"
#include "ui/lessons/presentation.h"
#include "ui/lessons/lessons_dock.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"

using namespace tessera;
using namespace tessera::ui;

namespace {

const QString kLessonFile = QStringLiteral(TESSERA_SOURCE_DIR "/lessons/test.json");

std::string lessonWith(const std::string& step) {
  return R"({"format": "tessera-lesson", "version": 1, "title": "t", "steps": [
    {"title": "a", "caption": "c", "model": "../samples/mlp.tsr"}, )" + step + "]}";
}

QString errorOf(const std::string& json) {
  try {
    parseLesson(json, kLessonFile);
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestLessons : public QObject {
  Q_OBJECT
 private slots:
  void badFilesNameFileStepAndField_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("expected");
    auto row = [](const char* name, const std::string& json, const char* expected) {
      QTest::newRow(name) << QString::fromStdString(json) << QString(expected);
    };
    row("syntax", "{\"format\": ", "test.json: not JSON at byte");
    row("format", R"({"format": "x", "version": 1, "title": "t", "steps": []})", "test.json: format: expected \"tessera-lesson\"");
    row("no steps", R"({"format": "tessera-lesson", "version": 1, "title": "t", "steps": []})", "test.json: steps: expected a non-empty list");
    row("unknown field", lessonWith(R"({"title": "b", "caption": "c", "panle": "graph"})"), "test.json: steps[1].panle: unknown field");
    row("panel", lessonWith(R"({"title": "b", "caption": "c", "panel": "graf"})"), "test.json: steps[1].panel: 'graf' is not one of");
    row("model", lessonWith(R"({"title": "b", "caption": "c", "model": "nope.tsr"})"), "test.json: steps[1].model: no such file");
    row("caption", lessonWith(R"({"title": "b"})"), "test.json: steps[1].caption: missing");
    row("branch", lessonWith(R"({"title": "b", "caption": "c", "branch": " "})"), "test.json: steps[1].branch: expected a branch name");
    row("wait kind", lessonWith(R"({"title": "b", "caption": "c", "wait": {"kind": "dance"}})"), "test.json: steps[1].wait.kind: 'dance'");
    row("wait value", lessonWith(R"({"title": "b", "caption": "c", "wait": {"kind": "param", "node": "fc1", "param": "block_m"}})"),
        "test.json: steps[1].wait.value: missing");
    row("override", lessonWith(R"({"title": "b", "caption": "c", "overrides": [{"kind": "fuse-harder"}]})"), "test.json: steps[1].overrides");
    row("param type", lessonWith(R"({"title": "b", "caption": "c", "params": {"fc1": {"block_m": "big"}}})"),
        "test.json: steps[1].params.fc1.block_m: expected an integer");
  }
  void badFilesNameFileStepAndField() {
    QFETCH(QString, json);
    QFETCH(QString, expected);
    const QString error = errorOf(json.toStdString());
    QVERIFY2(error.contains(expected), qPrintable(error));
  }

  // A step's state holds what earlier steps set and what the learner did at their waits; a new model resets it.
  void stateFoldsEarlierStepsAndWaits() {
    Lesson lesson = parseLesson(lessonWith(R"({"title": "b", "caption": "c", "branch": "tiles", "select": "fc1", "params": {"fc1": {"block_m": 32}},
        "wait": {"kind": "override", "override": {"kind": "forbid-fuse", "producer": "fc1", "consumer": "bias1"}}},
      {"title": "d", "caption": "c", "panel": "run"}, {"title": "e", "caption": "c", "model": "../samples/softmax.tsr"})"), kLessonFile);
    const LessonState atWait = lessonStateAt(lesson, 1), after = lessonStateAt(lesson, 2), fresh = lessonStateAt(lesson, 3);
    QVERIFY(atWait.overrides.empty());  // the learner has not acted yet
    QCOMPARE(after.overrides.size(), size_t(1));
    QCOMPARE(after.select, QString("fc1"));
    QCOMPARE(after.params.at("fc1").at("block_m"), int64_t(32));
    QCOMPARE(after.panel, QString("run"));
    QCOMPARE(lessonStateAt(lesson, 0).branch, QString("main"));
    QCOMPARE(after.branch, QString("tiles"));
    QVERIFY(fresh.overrides.empty() && fresh.select.isEmpty() && fresh.params.empty());
    QCOMPARE(fresh.branch, QString("main"));
    QVERIFY(fresh.model.endsWith("samples/softmax.tsr"));
  }

  // Every shipped lesson plays to its end: each step set up, each wait performed as the learner would and met,
  // every figure of every caption filled from the session.
  void everyShippedLessonPlaysToItsEnd() {
    const QStringList lessons = shippedLessons();
    QVERIFY2(lessons.size() >= 8, qPrintable(QString("%1 lessons ship").arg(lessons.size())));
    for (const QString& path : lessons) {
      MainWindow w;
      w.sessionFiles()->setPrompts({});
      w.show();
      LessonPlayer player(w);
      player.setLesson(loadLesson(path));
      int waits = 0;
      QStringList unknown;
      const QString error = playToEnd(player, 240000, [&](int) {
        waits += player.current().wait.kind != LessonWait::None;
        fillFigures(player.current().caption, *w.controller(), &unknown);
      });
      QVERIFY2(error.isEmpty(), qPrintable(error));
      QVERIFY2(unknown.isEmpty(), qPrintable(path + ": figures not filled: " + unknown.join(", ")));
      QVERIFY2(waits >= 1, qPrintable(path + ": no step waits for the learner"));
      QCOMPARE(player.index(), player.count() - 1);
    }
  }

  // Steps whose lesson names no backend play on the learner's: the window's (cpu in place of the reference
  // interpreter), then whichever they pick in the Run panel. On a GPU that is cuda, and the figures are the GPU's;
  // without one, asking the headless player for cuda fails saying why.
  void stepsPlayOnTheLearnersBackend() {
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.show();
    RunController* runs = w.controller()->runs();
    runs->setBackend("reference");
    LessonPlayer player(w);
    QCOMPARE(player.defaultBackend(), QString("cpu"));
    bool gpu = false;
    for (const BackendInfo& b : runs->backends()) gpu = gpu || (b.name == "cuda" && b.unavailable.isEmpty());
    const QString expected = gpu ? "cuda" : "cpu";
    if (gpu) runs->setBackend("cuda");
    QCOMPARE(player.defaultBackend(), expected);
    player.setLesson(loadLesson(TESSERA_SOURCE_DIR "/lessons/08-graph-to-ptx.json"));
    const QString error = playToEnd(player, 240000);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    QCOMPARE(runs->backend().name, expected);
    QVERIFY(runs->lastRun());
    QCOMPARE(runs->lastRun()->backend, expected);
    if (gpu) return;
    qInfo("no GPU here: the lesson played on cpu; checking that --backend cuda is refused");
    LessonExport r;
    r.lesson = TESSERA_SOURCE_DIR "/lessons/08-graph-to-ptx.json";
    r.backend = "cuda";
    QCOMPARE(exportLesson(r), 2);
  }

  // A step that waits is not met until the learner acts, and is met once they did.
  void waitIsCheckedBeforeAndAfterTheAction() {
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.show();
    LessonPlayer player(w);
    player.setLesson(loadLesson(QStringLiteral(TESSERA_SOURCE_DIR "/lessons/03-fusion-legality.json")));
    player.goTo(1);
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
    QVERIFY2(player.error().isEmpty(), qPrintable(player.error()));
    QVERIFY(!player.waitMet());
    QVERIFY(player.waitStatus().contains("masked"));
    player.performWait();
    QTRY_VERIFY_WITH_TIMEOUT(player.settled() && player.waitMet(), 60000);
    QVERIFY(fillFigures("{overrides}", *w.controller()).contains("refused by rule `gemm-into-reduction`"));
    player.previous();  // the state of step 0: the learner's override is gone again
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
    QVERIFY(w.controller()->overrides().empty());
    // Step 3 makes branch `unfused` with the forbid override; step 6 goes back to `main`, which never had it.
    player.goTo(3);
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
    QVERIFY2(player.error().isEmpty(), qPrintable(player.error()));
    QCOMPARE(w.controller()->branchNames(), (QStringList{"main", "unfused"}));
    QCOMPARE(w.controller()->currentBranch(), QString("unfused"));
    QCOMPARE(w.controller()->overrides().size(), size_t(1));
    player.goTo(6);
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 120000);
    QVERIFY2(player.error().isEmpty(), qPrintable(player.error()));
    QCOMPARE(w.controller()->currentBranch(), QString("main"));
    QVERIFY(w.controller()->overrides().empty());
    QCOMPARE(w.controller()->branches().back().overrides.size(), size_t(1));  // unfused keeps its override
  }

  // Lesson 5 steps through the schedule's trace: a step's trace_step shows the selected kernel's loop nest after
  // that many primitives, and the row it names is the primitive the caption speaks of.
  void traceStepShowsTheNestAfterThatPrimitive() {
    MainWindow w;
    LessonPlayer player(w);
    const Lesson lesson = loadLesson(QStringLiteral(TESSERA_SOURCE_DIR "/lessons/05-schedule-primitives.json"));
    player.setLesson(lesson);
    auto* schedule = w.findChild<SchedulePanel*>();
    QVERIFY(schedule);
    int checked = 0;
    for (int i = 0; i < int(lesson.steps.size()); ++i) {
      const std::optional<int> at = lesson.steps[size_t(i)].traceStep;
      if (!at) continue;
      player.goTo(i);
      QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
      QVERIFY2(player.error().isEmpty(), qPrintable(player.error()));
      QCOMPARE(schedule->traceList()->currentRow(), *at);
      QCOMPARE(schedule->traceStep(), *at == schedule->traceList()->count() - 1 ? -1 : *at);  // the last row: the whole schedule
      // The title names the primitive of that row ("tile: block tiles" at the tile step).
      const QString primitive = lesson.steps[size_t(i)].title.section(':', 0, 0).section(',', -1).trimmed();
      if (*at > 0) QVERIFY2(schedule->traceList()->item(*at)->text().contains(primitive), qPrintable(schedule->traceList()->item(*at)->text() + " / " + primitive));
      ++checked;
    }
    QVERIFY(checked >= 5);
  }

  void exportedPageIsSelfContained() {
    QTemporaryDir dir;
    LessonExport r;
    r.lesson = TESSERA_SOURCE_DIR "/lessons/01-model-to-graph-ir.json";
    r.renderDir = dir.filePath("png");
    r.html = dir.filePath("lesson.html");
    r.size = QSize(800, 500);
    QCOMPARE(exportLesson(r), 0);
    const Lesson lesson = loadLesson(r.lesson);
    QFile f(r.html);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString html = QString::fromUtf8(f.readAll());
    QCOMPARE(html.count("src=\"data:image/png;base64,"), int(lesson.steps.size()));
    QVERIFY2(!html.contains(QRegularExpression("src=\"(?!data:)")), "a picture is not embedded");
    QVERIFY(!html.contains("node:") && !html.contains("⟨no figure"));
    for (const LessonStep& s : lesson.steps) QVERIFY2(html.contains(s.title.toHtmlEscaped()), qPrintable(s.title));
    QVERIFY(html.contains("Your turn:"));
    QVERIFY(html.contains("tessera_k0"));  // the code shown at the CUDA level
    QVERIFY(QFileInfo(dir.filePath("png/step-06.png")).size() > 1000);
  }

  // A recorded lesson plays back to the state it was recorded in.
  void recordedLessonPlaysBack() {
    QTemporaryDir dir;
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.show();
    LessonsDock* panel = lessonsDock(w);
    w.openModel(test::sample("mlp.tsr"));
    QVERIFY(test::waitIdle(w));
    panel->recordStep();
    w.controller()->addOverride({OverrideKind::ForbidFuse, "fc1", "bias1", {}, {}}, "forbid");
    QVERIFY(test::waitIdle(w));
    w.controller()->setCurrentStep(3);
    w.controller()->select({Selection::Node, "fc2", {}, {}});
    panel->recordStep();
    QVERIFY(panel->saveRecording(dir.filePath("recorded.json")));
    const Lesson lesson = loadLesson(dir.filePath("recorded.json"));
    QCOMPARE(lesson.steps.size(), size_t(2));
    MainWindow again;
    again.sessionFiles()->setPrompts({});
    again.show();
    LessonPlayer player(again);
    player.setLesson(lesson);
    QVERIFY2(playToEnd(player, 60000).isEmpty(), qPrintable(player.error()));
    QCOMPARE(again.controller()->currentStep(), 3);
    QCOMPARE(again.controller()->selection().id, QString("fc2"));
    QCOMPARE(again.controller()->overrides().size(), size_t(1));
    player.goTo(0);
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
    QVERIFY(again.controller()->overrides().empty());
  }

  // Presentation mode: full screen, larger fonts, only the Lessons dock and the step's panel; leaving restores.
  void presentationShowsOnlyTheStepsDocks() {
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.show();
    LessonsDock* panel = lessonsDock(w);
    panel->parentWidget()->show();
    QVERIFY(panel->open(TESSERA_SOURCE_DIR "/lessons/01-model-to-graph-ir.json"));
    panel->player()->goTo(1);  // the inspector step
    QTRY_VERIFY_WITH_TIMEOUT(panel->player()->settled(), 60000);
    const qreal size = w.font().pointSizeF();
    panel->setPresenting(true);
    QVERIFY(panel->presenting() && w.isFullScreen());
    QVERIFY(w.font().pointSizeF() > size * 1.5);
    QStringList shown;
    for (QDockWidget* d : w.findChildren<QDockWidget*>())
      if (d->isVisible()) shown << d->objectName();
    shown.sort();
    QCOMPARE(shown, QStringList({"inspectorDock", "lessonsDock"}));
    // The caption's links act in the window: node:ID selects the node in every panel, panel:NAME brings it up.
    emit panel->captionView()->anchorClicked(QUrl("node:act"));
    QCOMPARE(w.controller()->selection().id, QString("act"));
    const auto picked = w.graphView()->scene()->selectedItems();
    QVERIFY(picked.size() == 1 && picked.front()->type() == NodeItemType);
    QCOMPARE(static_cast<NodeItem*>(picked.front())->node().id, QString("act"));
    QCOMPARE(w.graphView()->spotlitDrawn(), QStringList({"act"}));  // the halo follows the link followed
    emit panel->captionView()->anchorClicked(QUrl("panel:run"));
    QVERIFY(w.findChild<QDockWidget*>(dockOfPanel("run"))->isVisible());
    // A clicker's keys while presenting: Right goes on, Left back; F7 leaves (Esc is the window's Cancel).
    QTest::keyClick(&w, Qt::Key_Right);
    QTRY_COMPARE_WITH_TIMEOUT(panel->player()->index(), 2, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(panel->player()->settled(), 60000);
    QTest::keyClick(&w, Qt::Key_Left);
    QTRY_COMPARE_WITH_TIMEOUT(panel->player()->index(), 1, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(panel->player()->settled(), 60000);
    QTest::keyClick(&w, Qt::Key_F7);
    QVERIFY(!panel->presenting());
    QCOMPARE(w.font().pointSizeF(), size);
    QVERIFY(w.findChild<QDockWidget*>("pipelineDock")->isVisible());
    QTest::keyClick(&w, Qt::Key_Right);  // not presenting: the arrows are the panels' again
    QTest::qWait(100);
    QCOMPARE(panel->player()->index(), 1);
  }

  // Each step spotlights the nodes its caption links to, in the window and in the exported pictures.
  void stepsSpotlightTheirLinkedNodes() {
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.show();
    LessonPlayer player(w);
    const Lesson lesson = loadLesson(TESSERA_SOURCE_DIR "/lessons/09-flash-attention.json");
    player.setLesson(lesson);
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
    QCOMPARE(nodeLinks(lesson.steps[0].caption), QStringList({"context"}));
    QCOMPARE(w.graphView()->spotlight(), QStringList({"context"}));
    QVERIFY(!w.graphView()->spotlitDrawn().isEmpty());
    player.goTo(1);
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
    QCOMPARE(w.graphView()->spotlight(), QStringList({"masked"}));
    player.goTo(3);  // a step whose caption links no node
    QTRY_VERIFY_WITH_TIMEOUT(player.settled(), 60000);
    QVERIFY(w.graphView()->spotlitDrawn().isEmpty());
  }

  // The session file keeps the lesson, its step and its bookmarks.
  void sessionKeepsTheLessonAndStep() {
    QTemporaryDir dir;
    const QString session = dir.filePath("lesson.tessera");
    {
      MainWindow w;
      w.sessionFiles()->setPrompts({});
      w.show();
      LessonsDock* panel = lessonsDock(w);
      QVERIFY(panel->open(TESSERA_SOURCE_DIR "/lessons/01-model-to-graph-ir.json"));
      panel->player()->goTo(3);
      QTRY_VERIFY_WITH_TIMEOUT(panel->player()->settled(), 60000);
      panel->toggleBookmark();
      QVERIFY(w.sessionFiles()->saveAs(session));
    }
    MainWindow again;
    again.sessionFiles()->setPrompts({});
    again.show();
    again.openModel(session);
    LessonsDock* panel = lessonsDock(again);
    QTRY_VERIFY_WITH_TIMEOUT(panel->player()->hasLesson() && panel->player()->settled(), 60000);
    QCOMPARE(panel->player()->index(), 3);
    QVERIFY(panel->bookmarks().contains(3));
  }

  // Help > Lessons opens the list; a lesson opened there plays, Page Down waits for the learner.
  void helpMenuOpensTheLessonList() {
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.show();
    auto* action = w.findChild<QAction*>("lessonsAction");
    QVERIFY(action);
    action->trigger();
    auto* dock = w.findChild<QDockWidget*>("lessonsDock");
    QVERIFY(dock && dock->isVisible());
    LessonsDock* panel = lessonsDock(w);
    QVERIFY(panel->open(TESSERA_SOURCE_DIR "/lessons/01-model-to-graph-ir.json"));
    QCOMPARE(panel->stepList()->count(), 6);
    QTRY_VERIFY_WITH_TIMEOUT(panel->player()->settled() && panel->nextButton()->isEnabled(), 60000);
    QVERIFY(panel->captionView()->toPlainText().contains("5 nodes"));
    panel->nextButton()->click();
    panel->nextButton()->click();  // ignored while step 1 is still being set up
    QTRY_VERIFY_WITH_TIMEOUT(panel->player()->settled(), 60000);
    QCOMPARE(panel->player()->index(), 1);
    panel->player()->goTo(2);  // waits for a selection
    QTRY_VERIFY_WITH_TIMEOUT(panel->player()->settled(), 60000);
    QVERIFY(!panel->nextButton()->isEnabled());
    w.controller()->select({Selection::Node, "act", {}, {}});
    QTRY_VERIFY(panel->nextButton()->isEnabled());
    panel->toggleBookmark();
    QVERIFY(panel->bookmarks().contains(2));
    QVERIFY(panel->stepList()->item(2)->text().startsWith("★"));
  }
};

QTEST_MAIN(TestLessons)
#include "test_lessons.moc"
