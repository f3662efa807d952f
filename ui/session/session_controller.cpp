#include "ui/session/session_controller.h"

#include <QElapsedTimer>
#include <QPointer>
#include <algorithm>

#include "frontend/model_io.h"
#include "ir/error.h"
#include "ui/code/code_controller.h"
#include "ui/run/run_controller.h"

namespace tessera::ui {
namespace {

// One undoable override change: the whole list before and after.
class OverrideCommand : public QUndoCommand {
 public:
  OverrideCommand(SessionController* c, std::vector<Override> before, std::vector<Override> after, const QString& text)
      : QUndoCommand(text), c_(c), before_(std::move(before)), after_(std::move(after)) {}
  void redo() override { c_->applyOverrides(after_); }
  void undo() override { c_->applyOverrides(before_); }

 private:
  SessionController* c_;
  std::vector<Override> before_, after_;
};

// One undoable schedule change: the whole set before and after.
class ScheduleCommand : public QUndoCommand {
 public:
  ScheduleCommand(SessionController* c, execute::ScheduleSet before, execute::ScheduleSet after, const QString& text)
      : QUndoCommand(text), c_(c), before_(std::move(before)), after_(std::move(after)) {}
  void redo() override { c_->applySchedules(after_); }
  void undo() override { c_->applySchedules(before_); }

 private:
  SessionController* c_;
  execute::ScheduleSet before_, after_;
};

}  // namespace

SessionController::SessionController(QObject* parent)
    : QObject(parent), parts_(new SessionParts(this)), undo_(new QUndoStack(this)), code_(new CodeController(this)),
      job_(this) {
  qRegisterMetaType<LoadedModel>();
  qRegisterMetaType<Selection>();
  // Connected first, so every view's compiled() handler finds the code controller already on the new compile.
  connect(this, &SessionController::compiled, code_, [this] { code_->setCompile(driver_, compile_); });
  runs_ = new RunController(this);  // after code_: it listens to the lowering
}

SessionController::~SessionController() = default;

void SessionController::openModel(const QString& path) { openModel(path, nullptr, CompileOptions{}); }

void SessionController::openModel(const QString& path, std::function<Graph()> load, CompileOptions options) {
  startJob(tr("Loading and compiling %1").arg(path), path, nullptr, std::move(load), std::move(options));
}

void SessionController::startJob(const QString& what, const QString& path, std::shared_ptr<const Graph> input,
                                 std::function<Graph()> load, CompileOptions options) {
  busy_ = true;
  emit busyChanged(true, what);
  // A recompile of the open model keeps its driver (and so its backend); a new model gets one of its own.
  std::shared_ptr<driver::Driver> reuse = input && driver_ && driver_->model() == input ? driver_ : nullptr;
  const execute::BackendKind backend = runs_->backend().kind;
  const std::string remote = runs_->backend().remote.toStdString();
  const kernel::Tf32Policy tf32 = runs_->tf32();
  auto work = [path, input, load, options, reuse, backend, remote, tf32](const JobContext& job) {
    LoadedModel result{path, input, nullptr, {}, 0, options, reuse};
    try {
      if (!result.graph) result.graph = std::make_shared<const Graph>(load ? load() : loadModel(path.toStdString()));
      job.cancel.check();
      if (!result.driver) {
        driver::DriverOptions o;
        o.backend = backend;
        o.remote = remote;
        o.tf32 = tf32;
        result.driver = std::make_shared<driver::Driver>(result.graph, o);
      }
      QElapsedTimer timer;
      timer.start();
      result.driver->setCompileOptions(options);
      result.compile = result.driver->compiled(job.cancel);
      result.compileMs = double(timer.nsecsElapsed()) / 1e6;
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      result.error = QString::fromStdString(e.what());
      if (!input) result.graph = nullptr;
    }
    return result;
  };
  job_.start(work, [this](JobOutcome<LoadedModel> outcome) {
    if (outcome.ok()) return acceptJob(*outcome.value);
    acceptJob(LoadedModel{path_, nullptr, nullptr, outcome.error, 0, {}, nullptr});
  });
}

void SessionController::cancel() {
  if (!busy_) return;
  job_.cancel();
  busy_ = false;
  emit busyChanged(false, tr("Cancelled"));
}

void SessionController::acceptJob(const LoadedModel& result) {
  busy_ = false;
  const bool newModel = result.graph && result.graph != input_;
  if (result.graph) {
    if (newModel) {
      pipeline_ = result.options;
      overrides_ = result.options.overrides;
      pipeline_.overrides.clear();
      undo_->clear();
      selection_ = {};
      schedules_ = {};
      code_->setSchedules(schedules_);
      branches_ = {SessionBranch{}};
      branch_ = "main";
      pendingBranch_.reset();
    }
    input_ = result.graph;
    driver_ = result.driver;
    compile_ = result.compile;
    path_ = result.path;
    compileMs_ = result.compileMs;
    step_ = stepCount() - 1;  // show the final IR
  }
  emit busyChanged(false, {});
  emit modelLoaded(result);
  if (result.graph) {
    emit compiled();
    if (pendingBranch_) restoreBranchParts();
    emit overridesChanged();
    emit stepChanged(step_);
    if (newModel) emit selectionChanged(selection_);
    if (newModel) emit branchesChanged();
  }
}

void SessionController::changeSchedules(execute::ScheduleSet next, const QString& text) {
  if (!input_) return;
  undo_->push(new ScheduleCommand(this, schedules_, std::move(next), text));
}

void SessionController::applySchedules(execute::ScheduleSet schedules) {
  schedules_ = std::move(schedules);
  code_->setSchedules(schedules_);
  emit schedulesChanged();
}

std::shared_ptr<const Graph> SessionController::graph() const {
  return compile_ && compile_->graph ? compile_->graph : input_;
}

void SessionController::changeOverrides(std::vector<Override> next, const QString& text) {
  if (!input_) return;
  undo_->push(new OverrideCommand(this, overrides_, std::move(next), text));
}

void SessionController::addOverride(const Override& entry, const QString& text) {
  std::vector<Override> next;
  // A new fuse verdict on an edge replaces an older one on the same edge.
  for (const Override& o : overrides_) {
    const bool sameEdge = (o.kind == OverrideKind::ForceFuse || o.kind == OverrideKind::ForbidFuse) &&
                          (entry.kind == OverrideKind::ForceFuse || entry.kind == OverrideKind::ForbidFuse) &&
                          o.producer == entry.producer && o.consumer == entry.consumer;
    if (!sameEdge && o != entry) next.push_back(o);
  }
  next.push_back(entry);
  changeOverrides(std::move(next), text);
}

void SessionController::setPassDisabled(const std::string& pass, bool disabled) {
  std::vector<Override> next;
  for (const Override& o : overrides_)
    if (!(o.kind == OverrideKind::DisablePass && o.pass == pass)) next.push_back(o);
  if (disabled) next.push_back(Override{OverrideKind::DisablePass, {}, {}, {}, pass});
  changeOverrides(std::move(next), (disabled ? tr("Disable pass %1") : tr("Enable pass %1")).arg(QString::fromStdString(pass)));
}

void SessionController::applyOverrides(std::vector<Override> overrides) {
  overrides_ = std::move(overrides);
  emit overridesChanged();
  if (!input_) return;
  CompileOptions options = pipeline_;
  options.overrides = overrides_;
  startJob(tr("Recompiling with %n override(s)", nullptr, int(overrides_.size())), path_, input_, nullptr, options);
}

int SessionController::stepCount() const {
  if (!input_) return 0;
  return 1 + (compile_ ? int(compile_->steps.size()) : 0);
}

void SessionController::setCurrentStep(int step) {
  step = std::clamp(step, 0, std::max(0, stepCount() - 1));
  if (step == step_) return;
  step_ = step;
  emit stepChanged(step_);
}

QString SessionController::stepTitle(int step) const {
  if (step <= 0 || !compile_ || step > int(compile_->steps.size())) return tr("input (as imported)");
  const Step& s = compile_->steps[size_t(step - 1)];
  return tr("step %1 · %2").arg(step).arg(QString::fromStdString(s.pass));
}

std::shared_ptr<const Graph> SessionController::graphAt(int step) const {
  if (step <= 0 || !compile_ || step > int(compile_->steps.size())) return input_;
  const Step& s = compile_->steps[size_t(step - 1)];
  return s.graph ? s.graph : graphAt(step - 1);
}

StepPicture SessionController::picture(int step) const {
  StepPicture p;
  p.graph = graphAt(step);
  p.names = input_;
  if (step <= 0 || !compile_ || step > int(compile_->steps.size())) return p;
  const Step& s = compile_->steps[size_t(step - 1)];
  p.previous = graphAt(step - 1);
  p.added = s.added;
  p.removed = s.removed;
  p.rewritten = s.rewritten;
  // Groups belong to the final graph: draw them from the fuse step on.
  if (compile_->fusion && step == int(compile_->steps.size())) p.fusion = compile_->fusion;
  return p;
}

void SessionController::select(const Selection& selection) {
  if (selection == selection_) return;
  selection_ = selection;
  emit selectionChanged(selection_);
}

}  // namespace tessera::ui
