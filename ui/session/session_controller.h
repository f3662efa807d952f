#pragma once
// The one door from views to the core. It owns the session: the model, the overrides (with their undo stack),
// the last compile, the pipeline step shown and the one selection every panel shares. Long work (load + compile)
// runs as a job with an id on a worker thread; the result comes back through a queued call as one object, and a
// newer request (or cancel()) supersedes an older one, whose result is dropped.
#include <QObject>
#include <QString>
#include <QStringList>
#include <QUndoStack>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "driver/driver.h"
#include "fusion/compile.h"
#include "ui/common/background_job.h"
#include "runtime/execute/compiled_model.h"
#include "ui/graph/graph_layout.h"
#include "session/session.h"
#include "ui/session/session_parts.h"

namespace tessera::ui {

// What a finished load or compile hands to the views.
struct LoadedModel {
  QString path;
  std::shared_ptr<const Graph> graph;            // the model as imported; null when loading failed
  std::shared_ptr<const CompileResult> compile;  // null when loading failed
  QString error;                                 // one line naming the file and the problem
  double compileMs = 0;
  CompileOptions options;  // the pipeline options and overrides it was compiled with
  std::shared_ptr<driver::Driver> driver;  // the model's stages; null when loading failed
};

// The one selection shared by all panels.
struct Selection {
  enum Kind { None, Node, Value, Group };
  Kind kind = None;
  QString id;                      // node id, value name or group id
  QString producer, consumer;      // for a value picked on an edge
  QStringList nodes{};             // a Node pick that stands for several nodes (a source line): all of them, id first
  bool operator==(const Selection&) const = default;
};

class CodeController;
class RunController;

class SessionController : public QObject {
  Q_OBJECT
 public:
  explicit SessionController(QObject* parent = nullptr);
  ~SessionController() override;

  // Loads and compiles on a worker thread; modelLoaded() follows.
  void openModel(const QString& path);
  // Loads with `load` (e.g. a session's embedded copy) and compiles with `options` (pipeline and overrides);
  // the model becomes current only when both succeed. The window's session files open through here.
  void openModel(const QString& path, std::function<Graph()> load, CompileOptions options);
  // Stops the running job at its next pass boundary and drops its result.
  void cancel();
  bool busy() const { return busy_; }

  std::shared_ptr<const Graph> input() const { return input_; }
  std::shared_ptr<const CompileResult> compile() const { return compile_; }
  // The final graph of the last compile (the input while none is there).
  std::shared_ptr<const Graph> graph() const;
  QString modelPath() const { return path_; }
  double lastCompileMs() const { return compileMs_; }
  // The open model's compile driver (null before one is open): its stages are what every panel shows.
  std::shared_ptr<driver::Driver> driver() const { return driver_; }
  // Lowering, source and PTX of the last compile, computed when a view asks (ui/code/code_controller.h).
  CodeController* code() const { return code_; }
  // The pipeline options of the current model (its overrides are overrides()).
  const CompileOptions& pipelineOptions() const { return pipeline_; }
  // What panels save in and restore from session files (ui/session/session_parts.h).
  SessionParts* sessionParts() const { return parts_; }

  // --- overrides (every change goes through the undo stack) ---
  const std::vector<Override>& overrides() const { return overrides_; }
  // Pushes an undoable change to `next` and recompiles.
  void changeOverrides(std::vector<Override> next, const QString& text);
  void addOverride(const Override& entry, const QString& text);
  void setPassDisabled(const std::string& pass, bool disabled);
  QUndoStack* undoStack() const { return undo_; }
  // Sets the overrides and recompiles, without touching the undo stack (the undo commands call it).
  void applyOverrides(std::vector<Override> overrides);

  // --- schedule overrides: traces by group key (node ids) from parameter edits and tuning; undoable too ---
  const execute::ScheduleSet& schedules() const { return schedules_; }
  // Pushes an undoable change to `next`; the kernels are lowered again with it (the graph is not recompiled).
  void changeSchedules(execute::ScheduleSet next, const QString& text);
  // Sets them without the undo stack (the undo commands and session files call it).
  void applySchedules(execute::ScheduleSet schedules);
  // Runs and tuning of the kernels (ui/run/run_controller.h).
  RunController* runs() const { return runs_; }

  // --- branches: named variants of the model, each with its own pipeline options, overrides (pass toggles
  // included), schedules, tuning and last run (core/session's SessionBranch). Every change goes through the
  // undo stack; switching recompiles and hands the branch's stored parts back to their panels. Each returns ""
  // or why it was refused (an empty or taken name, an unknown branch, deleting the current one).
  QStringList branchNames() const;
  QString currentBranch() const { return QString::fromStdString(branch_); }
  // Every branch in order, the current one as it is now (its panels' parts captured).
  std::vector<SessionBranch> branches() const;
  QString createBranch(const QString& name);  // a copy of the current state, made current
  QString switchBranch(const QString& name);
  QString renameBranch(const QString& from, const QString& to);
  QString deleteBranch(const QString& name);
  // Sets them without the undo stack (the undo commands call it); recompiles when the current state changes.
  void applyBranches(std::vector<SessionBranch> branches, const std::string& current);
  // Sets the list as opened from a file, whose current branch is what was just compiled (no recompile).
  void restoreBranches(std::vector<SessionBranch> branches, const std::string& current);

  // --- pipeline steps: 0 is the imported model, i is the IR after recorded step i-1 ---
  int stepCount() const;
  int currentStep() const { return step_; }
  void setCurrentStep(int step);
  QString stepTitle(int step) const;
  StepPicture picture(int step) const;
  std::shared_ptr<const Graph> graphAt(int step) const;

  // --- selection ---
  const Selection& selection() const { return selection_; }
  void select(const Selection& selection);

 signals:
  void busyChanged(bool busy, const QString& what);
  void modelLoaded(const tessera::ui::LoadedModel& result);
  void compiled();  // compile() changed (after a load or an override)
  void stepChanged(int step);
  void selectionChanged(const tessera::ui::Selection& selection);
  void overridesChanged();
  void schedulesChanged();
  void branchesChanged();

 private:
  void startJob(const QString& what, const QString& path, std::shared_ptr<const Graph> input,
                std::function<Graph()> load, CompileOptions options);
  void acceptJob(const LoadedModel& result);
  SessionBranch captureBranch() const;
  void restoreBranchParts();
  QString pushBranches(std::vector<SessionBranch> next, const std::string& current, const QString& text);

  std::shared_ptr<const Graph> input_;
  std::shared_ptr<const CompileResult> compile_;
  QString path_;
  double compileMs_ = 0;
  CompileOptions pipeline_;
  SessionParts* parts_;
  std::vector<Override> overrides_;
  QUndoStack* undo_;
  int step_ = 0;
  Selection selection_;
  CodeController* code_ = nullptr;
  execute::ScheduleSet schedules_;
  RunController* runs_ = nullptr;
  bool busy_ = false;
  std::shared_ptr<driver::Driver> driver_;  // the open model's stages (compile, kernels, runs)
  BackgroundJob<LoadedModel> job_;          // load + compile
  std::vector<SessionBranch> branches_{SessionBranch{}};  // in order; the current one's entry is captured on demand
  std::string branch_ = "main";
  std::optional<SessionBranch> pendingBranch_;  // switched to: its parts are restored once its compile lands
};

}  // namespace tessera::ui

Q_DECLARE_METATYPE(tessera::ui::LoadedModel)
Q_DECLARE_METATYPE(tessera::ui::Selection)
