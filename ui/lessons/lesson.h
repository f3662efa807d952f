#pragma once
// A lesson: a sequence of steps, each setting a state of the window (model, session branch, pipeline step,
// selection, open layers, panel and level, overrides, schedule parameters, backend, a run), showing a caption, and possibly
// waiting for the learner to act. The file format (JSON, docs/lessons.md) is read and checked here, with no
// window: every error names the file, the step and the field at fault.
#include <QString>
#include <QStringList>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fusion/overrides.h"

namespace tessera::ui {

// What a step waits for the learner to do before Next goes on (and what a headless player does in their place).
struct LessonWait {
  enum Kind { None, ForceOverride, SetParam, PressRun, GoToStep, SelectNode, PressTune };
  Kind kind = None;
  Override override;                  // ForceOverride: the entry that must be in the session
  std::optional<OverrideState> state; // ForceOverride: and what the compile must make of it (applied, refused)
  QString node;                       // SetParam: a node of the kernel; SelectNode: the node
  QString param;                      // SetParam: the template parameter
  int64_t value = 0;                  // SetParam: its value
  QString step;                       // GoToStep: a pipeline step reference (see LessonStep::step)
  QString hint;                       // what to do, in words ("Right-click the edge ... Force fuse")
};

// Schedule parameters by a node of the kernel they belong to: node id -> {parameter -> value}.
using LessonParams = std::map<QString, std::map<std::string, int64_t>>;

// One step as written: only the fields it sets (std::nullopt keeps what the steps before it set).
struct LessonStep {
  QString title, caption;  // caption: Markdown; links node:ID select a node, panel:NAME opens a panel
  std::optional<QString> model;     // an absolute path (written relative to the lesson file)
  std::optional<QString> branch;    // the session branch shown: switched to, or made from the state so far
  std::optional<QString> step;      // "input", "last", a pass name (its first step) or a row number
  std::optional<QString> select;    // a node id
  std::optional<QStringList> expand;  // layers to open, by path or name
  std::optional<QString> panel, level, backend;
  std::optional<std::vector<Override>> overrides;  // the whole list (replaces what was there)
  LessonParams params;  // merged into what the steps before it set
  bool run = false;     // run the kernels before the step is shown (its figures need a run)
  // The Schedule panel's trace stepper: the selected kernel's loop nest after this many primitives (this step
  // only; unset shows the whole schedule).
  std::optional<int> traceStep;
  LessonWait wait;
};

struct Lesson {
  QString path, title, summary;
  std::vector<LessonStep> steps;
};

// The whole state a step shows: every earlier step's settings and the outcome of its wait, then its own.
struct LessonState {
  QString model, branch = "main", step = "last", select, panel = "graph", level;
  QString backend;  // "" = the player's (LessonPlayer::defaultBackend)
  QStringList expand;
  std::vector<Override> overrides;
  LessonParams params;
  bool run = false;
  int traceStep = -1;  // -1: the whole schedule
};
LessonState lessonStateAt(const Lesson& lesson, int index);

// The panels and levels a step may show (panel "code" takes a level).
const QStringList& lessonPanels();
const QStringList& lessonLevels();

// Throws Error "FILE: steps[2].wait.kind: ..." naming what is wrong (a syntax error: its byte position).
Lesson parseLesson(const std::string& json, const QString& fileName);
Lesson loadLesson(const QString& path);
// The lessons that ship, sorted by file name: $TESSERA_LESSONS_DIR, else the installed or source lessons/.
QString lessonsDirectory();
QStringList shippedLessons();

}  // namespace tessera::ui
