#include "ui/lessons/lesson_player.h"

#include <QDockWidget>
#include <QFileInfo>
#include <QTimer>

#include "ui/code/code_controller.h"
#include "ui/code/levels_panel.h"
#include "ui/graph/graph_view.h"
#include "ui/run/run_controller.h"
#include "ui/schedule/schedule_panel.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"
#include "ui/window/headless_render.h"
#include "ui/window/main_window.h"
#include "ui/window/run_docks.h"
#include "ui/lessons/lesson_caption.h"
#include "ui/lessons/presentation.h"

namespace tessera::ui {
namespace {

bool sameFile(const QString& a, const QString& b) {
  return !a.isEmpty() && QFileInfo(a).canonicalFilePath() == QFileInfo(b).canonicalFilePath();
}

// The kernel of the last lowering that contains `node` (null when none, or not lowered yet).
const KernelCode* kernelOfNode(const SessionController& c, const QString& node) {
  auto code = c.code()->kernels();
  if (!code || code->compile != c.compile()) return nullptr;
  for (const KernelCode& k : code->kernels)
    for (const std::string& id : k.compiled.spec.nodeIds)
      if (QString::fromStdString(id) == node) return &k;
  return nullptr;
}

}  // namespace

LessonPlayer::LessonPlayer(MainWindow& window, QObject* parent) : QObject(parent), window_(window), timer_(new QTimer(this)) {
  timer_->setInterval(15);
  connect(timer_, &QTimer::timeout, this, &LessonPlayer::runStages);
  SessionController* c = window_.controller();
  for (auto signal : {&SessionController::overridesChanged, &SessionController::compiled, &SessionController::schedulesChanged})
    connect(c, signal, this, &LessonPlayer::checkWait);
  connect(c, &SessionController::stepChanged, this, &LessonPlayer::checkWait);
  connect(c, &SessionController::selectionChanged, this, &LessonPlayer::checkWait);
  connect(c->runs(), &RunController::runFinished, this, &LessonPlayer::checkWait);
  connect(c->code(), &CodeController::kernelsReady, this, &LessonPlayer::checkWait);
  const QString shown = c->runs()->backend().name;
  defaultBackend_ = shown == "reference" ? "cpu" : shown;
  connect(c->runs(), &RunController::backendChanged, this, [this](const BackendInfo& b) {
    if (!running_ && b.name != "reference") defaultBackend_ = b.name;  // the learner's choice, not a step's
  });
}

void LessonPlayer::setLesson(Lesson lesson) {
  lesson_ = std::move(lesson);
  index_ = -1;
  goTo(0);
}

void LessonPlayer::goTo(int index) {
  if (!hasLesson()) return;
  index_ = std::clamp(index, 0, count() - 1);
  error_.clear();
  stages_.clear();
  queueState(lessonStateAt(lesson_, index_));
  queue([this] {  // the nodes the caption links to, haloed in the graph (the presenter's pointer)
    window_.graphView()->setSpotlight(nodeLinks(current().caption));
    return QString();
  });
  queue([this] {
    runAtStart_ = window_.controller()->runs()->lastRun();
    tunesAtStart_ = window_.controller()->runs()->tunesFinished();
    lastMet_ = !waitMet();  // so that checkWait announces the state
    checkWait();
    emit stepShown(index_);
    return QString();
  });
  timer_->start();
}

bool LessonPlayer::windowIdle() const {
  SessionController* c = window_.controller();
  return window_.idle() && !c->code()->busy() && !c->runs()->running() && !c->runs()->tuning();
}

// One stage at a time, each once the work the one before it started is done.
void LessonPlayer::runStages() {
  if (running_) return;
  if (stages_.empty()) return timer_->stop();
  if (!windowIdle()) return;
  Stage stage = std::move(stages_.front());
  stages_.pop_front();
  running_ = true;
  const QString why = stage();
  running_ = false;
  if (why.isEmpty()) return;
  error_ = why;
  stages_.clear();
  emit failed(why);
}

QString LessonPlayer::where(const char* field) const {
  return QString("%1: steps[%2].%3").arg(lesson_.path).arg(index_).arg(field);
}

void LessonPlayer::queueState(const LessonState& st) {
  SessionController* c = window_.controller();
  queue([this, st] { return openModel(st.model); });
  queue([this, c, st] {
    if (c->currentBranch() == st.branch) return QString();
    const QString why = c->branchNames().contains(st.branch) ? c->switchBranch(st.branch) : c->createBranch(st.branch);
    return why.isEmpty() ? why : where("branch") + ": " + why;
  });
  queue([this, c, st] {
    if (c->overrides() != st.overrides) c->applyOverrides(st.overrides);
    const QString backend = st.backend.isEmpty() ? defaultBackend_ : st.backend;
    if (c->runs()->backend().name == backend) return QString();
    const QString why = chooseBackend(window_, backend);
    return why.isEmpty() ? why : where("backend") + ": " + why;
  });
  queue([this, c, st] {
    const int row = resolveStep(st.step);
    if (row < 0) return where("step") + QString(": no pipeline step matches '%1'").arg(st.step);
    c->setCurrentStep(row);
    return showPanel(st);
  });
  queue([this, st] { return selectNode(st.select); });
  queue([this, st] {
    const QString why = openNamedLayers(window_, -1, st.expand);
    return why.isEmpty() ? why : where("expand") + ": " + why;
  });
  queue([c] {
    if (!c->schedules().traces.empty()) c->applySchedules({});  // back to the templates' defaults
    return QString();
  });
  if (!st.params.empty()) {
    queue([c] { return c->code()->requestKernels(), QString(); });
    queue([this, st] { return applyParams(st.params); });
  }
  if (st.run) queue([c] { return c->runs()->run(), QString(); });
  if (st.traceStep >= 0) {
    queue([c] { return c->code()->requestKernels(), QString(); });
    queue([this, st] {
      auto* schedule = window_.findChild<SchedulePanel*>();
      if (schedule && schedule->showTraceStep(st.traceStep)) return QString();
      return where("trace_step") + QString(": the selected kernel's trace could not be shown at step %1").arg(st.traceStep);
    });
  }
}

QString LessonPlayer::openModel(const QString& path) {
  if (sameFile(window_.controller()->modelPath(), path) && window_.controller()->input()) return {};
  // A lesson opens the model as shipped: an autosave of the learner's own work is not offered here.
  SessionFiles* files = window_.sessionFiles();
  const SessionPrompts saved = files->prompts();
  SessionPrompts quiet = saved;
  quiet.offerRecovery = [](const QString&, const QString&, std::function<void(bool)> answer) { answer(false); };
  files->setPrompts(quiet);
  window_.openModel(path);
  stages_.push_front([this, files, saved, path] {
    files->setPrompts(saved);
    if (sameFile(window_.controller()->modelPath(), path) && window_.controller()->input()) return QString();
    return where("model") + ": could not open " + path;
  });
  return {};
}

QString LessonPlayer::showPanel(const LessonState& st) {
  if (const QString name = dockOfPanel(st.panel); !name.isEmpty()) {
    if (auto* dock = window_.findChild<QDockWidget*>(name)) {
      dock->show();
      dock->raise();
    }
  }
  if (st.panel == "pipeline")
    if (auto* ir = window_.findChild<QDockWidget*>("irDock")) ir->raise();  // the step's diff beside its row
  const std::optional<Level> level = driver::stageNamed(st.level.toStdString());
  auto* levels = window_.findChild<LevelsPanel*>();
  if (levels && level && int(*level) < kLevelCount) levels->setLevel(*level);
  return {};
}

QString LessonPlayer::selectNode(const QString& id) {
  SessionController* c = window_.controller();
  if (id.isEmpty()) return c->select({}), QString();
  auto shown = c->graphAt(c->currentStep());
  auto last = c->graph();
  if (!(shown && shown->findNode(id.toStdString())) && !(last && last->findNode(id.toStdString())))
    return where("select") + QString(": no node '%1' in %2").arg(id, c->modelPath());
  c->select({Selection::Node, id, {}, {}});
  return {};
}

QString LessonPlayer::applyParams(const LessonParams& params) {
  SessionController* c = window_.controller();
  execute::ScheduleSet next;
  for (const auto& [node, values] : params) {
    const KernelCode* k = kernelOfNode(*c, node);
    if (!k) return where("params") + QString(": no kernel of node '%1' was lowered").arg(node);
    kernel::TemplateParams p = k->compiled.kernel.params;
    for (const auto& [name, value] : values) p[name] = value;
    try {
      next.traces[execute::ScheduleSet::keyOf(k->compiled.spec.nodeIds)] = kernel::traceWithParams(*c->compile()->graph, k->compiled.spec, p);
    } catch (const std::exception& e) {
      return where("params") + QString(": %1 refused: %2").arg(node, QString::fromStdString(e.what()));
    }
  }
  c->applySchedules(std::move(next));
  return {};
}

int LessonPlayer::resolveStep(const QString& reference) const {
  SessionController* c = window_.controller();
  const int rows = c->stepCount();
  if (reference == "input") return 0;
  if (reference == "last") return rows - 1;
  bool number = false;
  const int row = reference.toInt(&number);
  if (number) return row < rows ? row : -1;
  for (int i = 0; c->compile() && i < int(c->compile()->steps.size()); ++i)
    if (QString::fromStdString(c->compile()->steps[size_t(i)].pass) == reference) return i + 1;
  return -1;
}

}  // namespace tessera::ui
