#include "ui/lessons/lesson_record.h"

#include <QDir>
#include <QDockWidget>
#include <QFileInfo>

#include "ui/code/levels_panel.h"
#include "ui/lessons/presentation.h"
#include "ui/run/run_controller.h"
#include "ui/schedule/schedule_edit.h"
#include "ui/session/session_controller.h"
#include "ui/window/main_window.h"

namespace tessera::ui {
namespace {

// The panel the user looks at: the first lesson panel whose dock is shown and in front, else the graph.
QString panelInFront(MainWindow& w) {
  for (const QString& panel : lessonPanels()) {
    auto* dock = w.findChild<QDockWidget*>(dockOfPanel(panel));
    if (dock && dock->isVisible() && !dock->visibleRegion().isEmpty() && panel != "pipeline" && panel != "overrides") return panel;
  }
  return "graph";
}

}  // namespace

LessonStep captureStep(MainWindow& w, const QString& title) {
  SessionController* c = w.controller();
  LessonStep s;
  s.title = title;
  s.caption = QObject::tr("(Write what this step shows; figures such as {kernels} or {run} are filled in when it plays.)");
  s.model = c->modelPath();
  s.branch = c->currentBranch();
  s.step = QString::number(c->currentStep());
  s.select = c->selection().kind == Selection::Node ? c->selection().id : QString();
  s.panel = panelInFront(w);
  if (*s.panel == "code")
    if (auto* levels = w.findChild<LevelsPanel*>()) s.level = levelName(levels->level());
  s.backend = c->runs()->backend().name;
  s.overrides = c->overrides();
  for (const auto& [key, trace] : c->schedules().traces) {
    const QString node = QString::fromStdString(key.substr(0, key.find(',')));  // a node of the kernel
    for (const auto& [name, value] : paramsOfTrace(trace)) s.params[node][name] = value;
  }
  return s;
}

std::string lessonToJson(const Lesson& lesson) {
  const QDir base = QFileInfo(lesson.path).dir();
  nlohmann::json steps = nlohmann::json::array();
  auto str = [](const QString& s) { return s.toStdString(); };
  for (const LessonStep& s : lesson.steps) {
    nlohmann::json j{{"title", str(s.title)}, {"caption", str(s.caption)}};
    if (s.model) j["model"] = str(base.relativeFilePath(*s.model));
    if (s.branch) j["branch"] = str(*s.branch);
    if (s.step) j["step"] = str(*s.step);
    if (s.select) j["select"] = str(*s.select);
    if (s.panel) j["panel"] = str(*s.panel);
    if (s.level) j["level"] = str(*s.level);
    if (s.backend) j["backend"] = str(*s.backend);
    if (s.overrides) j["overrides"] = overrideListToJson(*s.overrides);
    for (const auto& [node, params] : s.params)
      for (const auto& [name, value] : params) j["params"][str(node)][name] = value;
    steps.push_back(j);
  }
  nlohmann::json file{{"format", "tessera-lesson"}, {"version", 1}, {"title", str(lesson.title)},
                      {"summary", str(lesson.summary)}, {"steps", steps}};
  return file.dump(2) + "\n";
}

}  // namespace tessera::ui
