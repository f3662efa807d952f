#pragma once
// Runs and tuning of the current compile's kernels, off the GUI thread. Owned by SessionController (views reach
// it through SessionController::runs()). The kernels come from CodeController (lowered with the session's
// schedule overrides), so what runs is what the Levels and Schedule panels show. A run generates, builds, times
// and verifies every kernel and the unfused baseline (execute::executeWithBaseline) and comes back as one
// RunResult; a tune ranks and measures each kernel's candidates (core/tune) and comes back as schedule
// overrides, pushed through the undo stack. After the first run, a new compile or schedule re-runs by itself.
#include <QObject>
#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "fusion/compile.h"
#include "ui/graph_items.h"
#include "ui/run_result.h"

namespace tessera::ui {

class SessionController;
struct CodeResult;

struct BackendInfo {
  execute::BackendKind kind = execute::BackendKind::Cpu;
  QString name;         // "reference", "cpu", "cuda"
  QString device;       // "NVIDIA H200", "host CPU, 16 threads"
  QString unavailable;  // why it cannot run here ("no libcuda.so.1"); empty when it can
};

// The graph overlay of a run: group id → time, share of the total, share of the roofline, verdict.
std::map<QString, GroupTiming> timeOverlay(const RunResult& run);
// The compiled model a CodeResult stands for (its graph and every lowered kernel, failures included).
execute::CompiledModel compiledModelOf(const CodeResult& code);

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(SessionController* session);
  ~RunController() override;

  // reference, cpu and cuda (probed once: cuda says the device's name or why it cannot run).
  const std::vector<BackendInfo>& backends();
  const BackendInfo& backend();
  void setBackend(const QString& name);  // an unknown or unavailable name is refused with message()

  // Lowers when needed, then generates, builds, runs, verifies, and runs the unfused baseline on a worker.
  void run();
  // Tunes every kernel on the chosen backend; the kept schedules become one undoable schedule change.
  void tune();
  // Drops the running job's result (the worker finishes its current kernel and stops reporting).
  void cancel();
  bool running() const { return running_; }
  bool tuning() const { return tuning_; }
  // Whether Tune can work now; `why` says what is missing.
  bool canTune(QString* why = nullptr);

  std::shared_ptr<const RunResult> lastRun() const { return last_; }
  std::shared_ptr<const RunResult> previousRun() const { return previous_; }
  // The last tune's report (tune::TuneReport::toJson: per kernel candidates, measured, cache, best and predicted
  // ms); saved in a session as `tuning` and handed back as saved. Empty before any tune.
  const nlohmann::json& lastTune() const { return lastTune_; }
  // The overlay of the last run while it belongs to the compile shown (empty after the groups changed).
  std::map<QString, GroupTiming> currentOverlay() const;

 signals:
  void backendChanged(const tessera::ui::BackendInfo& backend);
  void busyChanged(bool running, bool tuning, const QString& what);
  // A job's progress: `done` of `total` steps (total 0: no fraction known).
  void progress(const QString& what, int done, int total);
  void runFinished(std::shared_ptr<const tessera::ui::RunResult> run);
  void overlayChanged(const std::map<QString, tessera::ui::GroupTiming>& overlay);
  void message(const QString& line);

 private:
  void onKernels(std::shared_ptr<const CodeResult> code);
  void startRun(std::shared_ptr<const CodeResult> code);
  void startTune(std::shared_ptr<const CodeResult> code);
  void acceptRun(quint64 job, std::shared_ptr<const CompileResult> compile, std::shared_ptr<const RunResult> run);
  void acceptTune(quint64 job, const execute::ScheduleSet& tuned, const nlohmann::json& report, const QString& summary);
  void onCompiled();
  void wantRun();
  void setBusy(bool running, bool tuning, const QString& what);
  void registerSessionParts();
  void restoreRun(const nlohmann::json& j);

  SessionController* session_;
  std::vector<BackendInfo> backends_;
  size_t chosen_ = 1;  // cpu
  std::shared_ptr<const RunResult> last_, previous_;
  nlohmann::json lastTune_ = nlohmann::json::object();
  std::shared_ptr<const CompileResult> lastCompile_;  // the compile the last run was made from
  std::shared_ptr<const Graph> model_;  // to tell a newly opened model from a recompile
  bool running_ = false, tuning_ = false;
  bool runWanted_ = false, tuneWanted_ = false;  // waiting for the kernels
  bool autoRun_ = false;  // a run was asked for: new kernels run again by themselves
  std::shared_ptr<std::atomic<quint64>> job_ = std::make_shared<std::atomic<quint64>>(0);
  std::shared_ptr<std::atomic<bool>> cancelTune_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace tessera::ui

Q_DECLARE_METATYPE(tessera::ui::BackendInfo)
