#pragma once
// Plays a lesson in the window: goTo(i) sets step i's whole state (lessonStateAt) through the session
// controller and the window's panels, one stage at a time, each once the window has no work in flight (the
// model opens, the overrides recompile, the kernels lower, a run runs); stepShown() follows. A step that waits
// for the learner is checked after every change the session reports; performWait() does what the learner
// would (the headless player and the tests use it).
#include <QObject>
#include <QString>
#include <deque>
#include <functional>
#include <memory>

#include "ui/lessons/lesson.h"

class QTimer;

namespace tessera::ui {

class MainWindow;
struct RunResult;

class LessonPlayer : public QObject {
  Q_OBJECT
 public:
  explicit LessonPlayer(MainWindow& window, QObject* parent = nullptr);
  void setLesson(Lesson lesson);  // shows its first step
  const Lesson& lesson() const { return lesson_; }
  bool hasLesson() const { return !lesson_.steps.empty(); }
  int index() const { return index_; }
  int count() const { return int(lesson_.steps.size()); }
  const LessonStep& current() const { return lesson_.steps[size_t(index_)]; }
  MainWindow& window() const { return window_; }
  // The backend of the steps whose lesson names none: the window's when the player was made (cpu in place of
  // the reference interpreter), then whichever the learner picks in the Run panel, so a lesson plays on cuda
  // where the learner runs on a GPU and on cpu without one.
  QString defaultBackend() const { return defaultBackend_; }

  void goTo(int index);
  void next() { goTo(index_ + 1); }
  void previous() { goTo(index_ - 1); }
  void restart() { goTo(0); }
  // Stages of the step (or of performWait) still to run.
  bool busy() const { return !stages_.empty() || running_; }
  // Nothing left to do: no stage, and the window has no compile, layout, lowering, run or tuning in flight.
  bool settled() const { return !busy() && windowIdle(); }
  // Why the step could not be set up, naming the lesson file, the step and the field ("" when it was).
  QString error() const { return error_; }
  // The step's wait is done (always true for a step that waits for nothing), and what is still missing.
  bool waitMet() const;
  QString waitStatus() const;
  void performWait();
  // Resolves a step reference (input, last, a pass name, a row) to a row of the pipeline; -1 when none matches.
  int resolveStep(const QString& reference) const;

 signals:
  void stepShown(int index);
  void waitChanged(bool met);
  void failed(const QString& message);

 private:
  using Stage = std::function<QString()>;  // returns "" or what went wrong
  void queue(Stage stage) { stages_.push_back(std::move(stage)); }
  void runStages();
  bool windowIdle() const;
  void queueState(const LessonState& st);
  QString where(const char* field) const;
  QString openModel(const QString& path);
  QString showPanel(const LessonState& st);
  QString selectNode(const QString& id);
  QString applyParams(const LessonParams& params);
  QString editParamAsLearner(const LessonWait& wait);
  void checkWait();

  MainWindow& window_;
  Lesson lesson_;
  int index_ = 0;
  std::deque<Stage> stages_;
  bool running_ = false;  // a stage is executing (it may spin the event loop)
  QString error_;
  QString defaultBackend_;
  QTimer* timer_;
  bool lastMet_ = false;
  std::shared_ptr<const RunResult> runAtStart_;  // PressRun: a run newer than this one
  int tunesAtStart_ = 0;                         // PressTune: a tune ended after this many
};

}  // namespace tessera::ui
