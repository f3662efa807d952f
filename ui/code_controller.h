#pragma once
// Lowering, code generation and PTX for the whole model, off the GUI thread. Owned by SessionController
// (views reach it through SessionController::code()); it keeps the last compile and computes nothing until a
// view asks, so a hidden Levels panel costs nothing. Two jobs: kernels (lower every group, print the kernel IR,
// generate CUDA and C++), then PTX (NVRTC, one kernel at a time, a snapshot after each). Results come back as
// whole objects through queued calls; a new compile supersedes the running jobs, whose results are dropped.
#include <QObject>
#include <atomic>
#include <memory>

#include "ui/code_levels.h"

namespace tessera::ui {

class CodeController : public QObject {
  Q_OBJECT
 public:
  explicit CodeController(QObject* parent = nullptr);
  ~CodeController() override;

  // A new compile (null: none). Earlier results are dropped and running jobs superseded.
  void setCompile(std::shared_ptr<const CompileResult> compile);
  std::shared_ptr<const CompileResult> compile() const { return compile_; }
  // The session's schedule overrides (replayed instead of the template defaults). Lowered results are
  // dropped; when a view had asked for them, they are lowered again and kernelsReady() follows.
  void setSchedules(execute::ScheduleSet schedules);
  // Lowers and generates source once per compile; kernelsReady() follows (at once when already there).
  void requestKernels();
  // Also compiles every kernel to PTX; ptxReady() follows after each kernel.
  void requestPtx();

  // The results for the current compile so far (null until ready).
  std::shared_ptr<const CodeResult> kernels() const { return kernels_; }
  std::shared_ptr<const PtxResult> ptx() const { return ptx_; }
  bool busy() const { return kernelJob_ || ptxJob_; }

 signals:
  void kernelsReady(std::shared_ptr<const tessera::ui::CodeResult> result);
  void ptxReady(std::shared_ptr<const tessera::ui::PtxResult> result);
  // `what` is "lowering" or "ptx"; done == total when the job ended.
  void progress(const QString& what, int done, int total);
  void busyChanged(bool busy);

 private:
  void startKernels();
  void startPtx();
  void acceptKernels(quint64 generation, std::shared_ptr<const CodeResult> result);
  void acceptPtx(quint64 generation, std::shared_ptr<const PtxResult> result);
  void setJobs(bool kernelJob, bool ptxJob);

  std::shared_ptr<const CompileResult> compile_;
  std::shared_ptr<const execute::ScheduleSet> schedules_ = std::make_shared<execute::ScheduleSet>();
  std::shared_ptr<const CodeResult> kernels_;
  std::shared_ptr<const PtxResult> ptx_;
  bool kernelJob_ = false, ptxJob_ = false, ptxWanted_ = false;
  // Bumped by every new compile: a job whose generation is no longer the latest stops and is dropped.
  std::shared_ptr<std::atomic<quint64>> generation_ = std::make_shared<std::atomic<quint64>>(0);
};

}  // namespace tessera::ui

Q_DECLARE_METATYPE(std::shared_ptr<const tessera::ui::CodeResult>)
Q_DECLARE_METATYPE(std::shared_ptr<const tessera::ui::PtxResult>)
