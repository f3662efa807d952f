#pragma once
// Lowering, code generation and PTX for the whole model, off the GUI thread. Owned by SessionController
// (views reach it through SessionController::code()); it asks the open model's driver (core/driver) for its
// Kernel, Cuda, Cpp and Ptx stages only when a view asks, so a hidden Levels panel costs nothing. Two jobs
// (ui/common/background_job.h): kernels (the Kernel stage with the user's schedules and the tuning cache, the kernel
// IR, CUDA and C++ text, the estimates on the driver's target), then PTX (one kernel at a time, a snapshot
// after each). A new compile, schedule or backend cancels the running jobs, whose results are dropped.
#include <QObject>
#include <memory>

#include "driver/driver.h"
#include "ui/common/background_job.h"
#include "ui/code/code_levels.h"

namespace tessera::ui {

class CodeController : public QObject {
  Q_OBJECT
 public:
  explicit CodeController(QObject* parent = nullptr);
  ~CodeController() override;

  // A new compile of `driver`'s model (null: none). Earlier results are dropped and running jobs cancelled.
  void setCompile(std::shared_ptr<driver::Driver> driver, std::shared_ptr<const CompileResult> compile);
  std::shared_ptr<const CompileResult> compile() const { return compile_; }
  // The session's schedule overrides, handed to the driver (they win over the tuning cache and the defaults).
  void setSchedules(execute::ScheduleSet schedules);
  // The driver's Kernel stage changed (schedules, backend): lowered results are dropped; when a view had asked
  // for them, they are lowered again and kernelsReady() follows.
  void stagesChanged();
  // Lowers and generates source once per compile; kernelsReady() follows (at once when already there).
  void requestKernels();
  // Also compiles every kernel to PTX; ptxReady() follows after each kernel.
  void requestPtx();

  // The results for the current compile so far (null until ready).
  std::shared_ptr<const CodeResult> kernels() const { return kernels_; }
  std::shared_ptr<const PtxResult> ptx() const { return ptx_; }
  bool busy() const { return kernelJob_.running() || ptxJob_.running(); }

 signals:
  void kernelsReady(std::shared_ptr<const tessera::ui::CodeResult> result);
  void ptxReady(std::shared_ptr<const tessera::ui::PtxResult> result);
  // `level` is Kernel (lowering) or Ptx; done == total when the job ended.
  void progress(tessera::ui::Level level, int done, int total);
  void busyChanged(bool busy);

 private:
  void startKernels();
  void startPtx();
  void acceptKernels(std::shared_ptr<const CodeResult> result);
  void acceptPtx(std::shared_ptr<const PtxResult> result);
  void dropResults();
  void noteBusy(bool was);

  std::shared_ptr<driver::Driver> driver_;
  std::shared_ptr<const CompileResult> compile_;
  std::shared_ptr<const CodeResult> kernels_;
  std::shared_ptr<const PtxResult> ptx_;
  bool ptxWanted_ = false;
  BackgroundJob<std::shared_ptr<const CodeResult>> kernelJob_;
  BackgroundJob<bool> ptxJob_;  // snapshots arrive as progress; the value says it finished
};

}  // namespace tessera::ui

Q_DECLARE_METATYPE(std::shared_ptr<const tessera::ui::CodeResult>)
Q_DECLARE_METATYPE(std::shared_ptr<const tessera::ui::PtxResult>)
