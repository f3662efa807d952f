#pragma once
// A lesson played without anyone at the window (`tessera-cli lesson`, the tests): every step set up, the
// learner's action performed where the step waits for one and checked, each step's picture drawn by the window
// itself; as PNG files and as one self-contained HTML page (pictures as data URIs, captions, the code shown).
#include <QByteArray>
#include <QSize>
#include <QString>
#include <functional>
#include <vector>

#include "ui/lessons/lesson.h"

namespace tessera::ui {

class LessonPlayer;

// What one step showed, after its wait was done.
struct LessonPage {
  QString title, caption;  // caption: HTML with its figures filled in
  QString hint;            // what the learner was asked to do ("" when nothing)
  QString codeLevel, code; // the lines of the selection at the level shown (code panel), else empty
  QByteArray png;          // the step's picture
};

// Plays every step of the lesson loaded in `player` (its window shown); `page` is called once per step, after
// its wait is performed and met. Returns "" or what went wrong, naming the lesson file and the step.
QString playToEnd(LessonPlayer& player, int timeoutMs, const std::function<void(int index)>& page = {});
// The step as it is shown now, its picture `size` at most.
LessonPage capturePage(LessonPlayer& player, QSize size);
QString lessonHtml(const Lesson& lesson, const std::vector<LessonPage>& pages);

struct LessonExport {
  QString lesson;     // the lesson file
  QString renderDir;  // step-NN.png for each step ("" for none)
  QString html;       // the page ("" for none)
  QSize size{1600, 1000};
  QString backend;    // the steps' backend where the lesson names none ("": cpu)
  int timeoutMs = 600000;
};
// Returns 0, or prints one line naming the problem to stderr and returns 2.
int exportLesson(const LessonExport& request);

}  // namespace tessera::ui
