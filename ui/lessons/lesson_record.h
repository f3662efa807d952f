#pragma once
// Recording a lesson: each recorded step is the window's state as the user left it (model, pipeline step,
// selection, the panel in front, overrides, schedule parameters, backend), with a caption to be edited after.
// Written in the lesson format (lesson.h), so a recording plays back like any lesson.
#include <string>

#include "ui/lessons/lesson.h"

namespace tessera::ui {

class MainWindow;

// The window's state now, as a step that sets every field (so it plays the same wherever it is moved).
LessonStep captureStep(MainWindow& window, const QString& title);
// The lesson file's text; model paths are written relative to `lesson.path`'s folder.
std::string lessonToJson(const Lesson& lesson);

}  // namespace tessera::ui
