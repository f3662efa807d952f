#pragma once
// Runs and tuning of the current compile's kernels, off the GUI thread. Owned by SessionController (views reach
// it through SessionController::runs()). A run is the model driver's Run stage (core/driver): the kernels of its
// Kernel stage (the session's schedules, else the tuning cache's for the backend, else the defaults), so what
// runs is what the Levels and Schedule panels show and what `tessera-cli run` runs; it generates, builds, times
// and verifies every kernel, shows that RunResult, then times the unfused baseline and shows it again with it; a tune ranks and measures each kernel's candidates (core/tune) and comes back as schedule
// overrides, pushed through the undo stack. After the first run, a new compile or schedule re-runs by itself.
#include <QObject>
#include <atomic>
#include <map>
#include <memory>
#include <vector>

#include "fusion/compile.h"
#include "kernel/kernel_ir.h"
#include "ui/common/background_job.h"
#include "ui/graph/graph_items.h"
#include "ui/models/run_result.h"

namespace tessera::ui {

class SessionController;
struct CodeResult;

struct BackendInfo {
  execute::BackendKind kind = execute::BackendKind::Cpu;
  QString name;         // "reference", "cpu", "cuda"
  QString device;       // "NVIDIA H200", "host CPU, 16 threads"
  QString unavailable;  // why it cannot run here ("no libcuda.so.1"); empty when it can
  QString remote;       // HOST:PORT of the worker that runs it (docs/remote.md); "" for this machine
  double latencyMs = -1;  // the worker's greeting round trip when it was last asked
  // "cuda cannot run here: no libcuda.so.1 ...", said once: a reason that already says so is kept as it is.
  QString cannotRunText() const;
};

// The graph overlay of a run: group id → time, share of the total, share of the roofline, verdict.
std::map<QString, GroupTiming> timeOverlay(const RunResult& run);
// A finished tune: the schedules it kept, its report (tune::TuneReport::toJson) and a summary line.
struct TuneOutcome {
  execute::ScheduleSet tuned;
  nlohmann::json report;
  QString summary;
};

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(SessionController* session);
  ~RunController() override;

  // reference, cpu and cuda (probed once: cuda says the device's name or why it cannot run).
  const std::vector<BackendInfo>& backends();
  const BackendInfo& backend();
  void setBackend(const QString& name);  // an unknown or unavailable name is refused with message()
  // A remote worker (`tessera-cli serve`, docs/remote.md) beside cpu and cuda, named "remote:HOST:PORT": asked in
  // the background what it runs (the token from $TESSERA_REMOTE_TOKEN), chosen when it answers, else listed
  // with the reason. Asking again for a listed worker reconnects to it.
  void addRemote(const QString& address);
  // Asks the chosen remote worker again: its state and latency.
  void reconnect();
  // Where f32 products may round to tf32 (Driver::setTf32); a new model's driver starts with it too.
  kernel::Tf32Policy tf32() const { return tf32_; }
  void setTf32(kernel::Tf32Policy tf32);

  // Runs keep their tensor values (RunResult::values) within `budgetBytes` (0: the budget as it is), with the
  // reference's for the same inputs: the tensor panel and the accuracy overlay read them.
  void setKeepValues(bool keep, int64_t budgetBytes = 0);
  bool keepValues() const { return keepValues_; }
  int64_t valueBudget() const { return valueBudget_; }
  // The host memory limit of runs and tunes (setting 'memory/hostLimit'): "16G", "512M", bytes; "" for none. A
  // run over it is refused before it starts, with the estimate. A text that is not a size is refused: the
  // returned reason says why ("" when stored).
  static QString hostMemoryLimit();
  static QString setHostMemoryLimit(const QString& size);
  // The threads the cpu backend's kernels run with (setting 'cpu/threads', runtime/cpu/cpu_threads.h): n > 0, or 0
  // for $OMP_NUM_THREADS, else every hardware thread. Applied to the runs and tunes started from then on.
  static int cpuThreads();
  static void setCpuThreads(int n);

  // Lowers when needed, then generates, builds, runs, verifies, and runs the unfused baseline on a worker.
  void run();
  // Tunes every kernel on the chosen backend; the kept schedules become one undoable schedule change.
  void tune();
  // Stops the running run or tune (its token fires: the core stops at the next kernel, repetition or candidate)
  // and drops its result.
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
  int tunesFinished() const { return tunesFinished_; }  // tunes ended (kept, failed or cancelled) since the start
  // The overlay of the last run while it belongs to the compile shown (empty after the groups changed).
  std::map<QString, GroupTiming> currentOverlay() const;

 signals:
  void backendChanged(const tessera::ui::BackendInfo& backend);
  void backendsChanged();  // a remote worker was added, or its state changed
  void tf32Changed(tessera::kernel::Tf32Policy tf32);
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
  void acceptRun(std::shared_ptr<const CompileResult> compile, std::shared_ptr<const RunResult> run);
  // A run's result made the last: the finished one, or one still timing its baseline (which then replaces it).
  void showRun(std::shared_ptr<const CompileResult> compile, std::shared_ptr<const RunResult> run);
  // The last run no longer waits for a baseline (cancelled, or another run started).
  void settleBaseline();
  void acceptTune(const execute::ScheduleSet& tuned, const nlohmann::json& report, const QString& summary);
  void onCompiled();
  void wantRun();
  void setBusy(bool running, bool tuning, const QString& what);
  void registerSessionParts();
  void restoreRun(const nlohmann::json& j);
  void acceptRemote(const BackendInfo& b);

  SessionController* session_;
  std::vector<BackendInfo> backends_;
  size_t chosen_ = 1;  // cpu
  kernel::Tf32Policy tf32_;  // off
  std::shared_ptr<const RunResult> last_, previous_;
  nlohmann::json lastTune_ = nlohmann::json::object();
  std::shared_ptr<const CompileResult> lastCompile_;  // the compile the last run was made from
  std::shared_ptr<const Graph> model_;  // to tell a newly opened model from a recompile
  bool running_ = false, tuning_ = false;
  int tunesFinished_ = 0;
  bool runWanted_ = false, tuneWanted_ = false;  // waiting for the kernels
  bool autoRun_ = false;  // a run was asked for: new kernels run again by themselves
  bool keepValues_ = false;
  size_t shownMessages_ = 0;  // the last run's messages already said
  int64_t valueBudget_ = int64_t(512) << 20;
  BackgroundJob<std::shared_ptr<const RunResult>> runJob_;
  BackgroundJob<TuneOutcome> tuneJob_;
  BackgroundJob<BackendInfo> remoteJob_;
};

}  // namespace tessera::ui

Q_DECLARE_METATYPE(tessera::ui::BackendInfo)
