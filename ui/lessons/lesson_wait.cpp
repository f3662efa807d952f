// LessonPlayer's waits: whether the learner did what the step asks, and doing it in their place.
#include "ui/lessons/lesson_player.h"

#include <QDockWidget>
#include <QTimer>

#include "ui/code/code_controller.h"
#include "ui/run/run_controller.h"
#include "ui/schedule/schedule_panel.h"
#include "ui/session/session_controller.h"
#include "ui/window/main_window.h"

namespace tessera::ui {
namespace {

const OverrideStatus* statusOf(const SessionController& c, const Override& o) {
  if (!c.compile()) return nullptr;
  for (const OverrideStatus& s : c.compile()->overrides)
    if (s.override == o) return &s;
  return nullptr;
}

std::optional<int64_t> paramOfNode(const SessionController& c, const QString& node, const QString& param) {
  auto code = c.code()->kernels();
  if (!code || code->compile != c.compile()) return std::nullopt;
  for (const KernelCode& k : code->kernels)
    for (const std::string& id : k.compiled.spec.nodeIds)
      if (QString::fromStdString(id) == node) {
        auto it = k.compiled.kernel.params.find(param.toStdString());
        if (it == k.compiled.kernel.params.end()) return std::nullopt;
        return it->second;
      }
  return std::nullopt;
}

QString overrideText(const Override& o) {
  if (o.kind == OverrideKind::Split) return QString("split %1").arg(QString::fromStdString(o.group));
  if (o.kind == OverrideKind::DisablePass) return QString("disable %1").arg(QString::fromStdString(o.pass));
  return QString("%1 %2 → %3").arg(QString::fromStdString(std::string(overrideKindName(o.kind))),
                                   QString::fromStdString(o.producer), QString::fromStdString(o.consumer));
}

}  // namespace

// Read while the last stage runs too (it announces the step), so only the stages left count.
bool LessonPlayer::waitMet() const { return hasLesson() && stages_.empty() && waitStatus().isEmpty(); }

// "" when the wait is done, else what is still missing.
QString LessonPlayer::waitStatus() const {
  if (!hasLesson()) return tr("no lesson");
  const LessonWait& w = current().wait;
  const SessionController& c = *window_.controller();
  switch (w.kind) {
    case LessonWait::None: return {};
    case LessonWait::ForceOverride: {
      const OverrideStatus* s = statusOf(c, w.override);
      if (!s) return tr("waiting for the override %1").arg(overrideText(w.override));
      if (w.state && s->status != *w.state)
        return tr("the override %1 is %2, not %3").arg(overrideText(w.override), QString::fromStdString(overrideStateName(s->status)),
                                                       QString::fromStdString(overrideStateName(*w.state)));
      return {};
    }
    case LessonWait::SetParam: {
      const auto v = paramOfNode(c, w.node, w.param);
      if (v == w.value) return {};
      return tr("waiting for %1 = %2 on the kernel of %3").arg(w.param).arg(w.value).arg(w.node);
    }
    case LessonWait::PressRun: {
      auto last = c.runs()->lastRun();
      if (last && last != runAtStart_ && !c.runs()->running()) return last->error.isEmpty() ? QString() : tr("the run failed: %1").arg(last->error);
      return tr("waiting for a run (Run ▸ Run, F5)");
    }
    case LessonWait::PressTune:
      if (c.runs()->tunesFinished() > tunesAtStart_ && !c.runs()->tuning()) return {};
      return tr("waiting for a tune (Run ▸ Tune, Ctrl+T) to finish");
    case LessonWait::GoToStep:
      return c.currentStep() == resolveStep(w.step) ? QString() : tr("waiting for the pipeline step %1").arg(w.step);
    case LessonWait::SelectNode:
      return c.selection().id == w.node ? QString() : tr("waiting for node %1 to be selected").arg(w.node);
  }
  return {};
}

void LessonPlayer::checkWait() {
  if (!hasLesson() || !stages_.empty()) return;
  if (current().wait.kind == LessonWait::SetParam && !window_.controller()->code()->kernels() && window_.controller()->compile())
    window_.controller()->code()->requestKernels();  // the parameter is read off the lowered kernel
  const bool met = waitMet();
  if (met == lastMet_) return;
  lastMet_ = met;
  emit waitChanged(met);
}

void LessonPlayer::performWait() {
  if (!hasLesson()) return;
  const LessonWait w = current().wait;
  SessionController* c = window_.controller();
  switch (w.kind) {
    case LessonWait::None: break;
    case LessonWait::ForceOverride:  // what the graph's right-click menu does
      queue([c, w] { return c->addOverride(w.override, tr("lesson: %1").arg(overrideText(w.override))), QString(); });
      break;
    case LessonWait::SetParam:
      queue([this, w] { return selectNode(w.node); });
      queue([c] { return c->code()->requestKernels(), QString(); });
      queue([this, w] { return editParamAsLearner(w); });
      break;
    case LessonWait::PressRun: queue([c] { return c->runs()->run(), QString(); }); break;
    case LessonWait::PressTune: queue([c] { return c->runs()->tune(), QString(); }); break;
    case LessonWait::GoToStep: queue([this, c, w] { return c->setCurrentStep(resolveStep(w.step)), QString(); }); break;
    case LessonWait::SelectNode: queue([this, w] { return selectNode(w.node); }); break;
  }
  queue([this] { return checkWait(), QString(); });
  timer_->start();
}

// The Schedule panel's parameter box, as the learner would choose the value in it.
QString LessonPlayer::editParamAsLearner(const LessonWait& w) {
  if (auto* dock = window_.findChild<QDockWidget*>("scheduleDock")) {
    dock->show();
    dock->raise();
  }
  auto* panel = window_.findChild<SchedulePanel*>();
  if (!panel || !panel->paramBox(w.param))
    return where("wait.param") + QString(": the kernel of %1 has no parameter %2").arg(w.node, w.param);
  if (!panel->editParam(w.param, w.value) && !panel->error().isEmpty()) return where("wait.value") + ": " + panel->error();
  return {};
}

}  // namespace tessera::ui
