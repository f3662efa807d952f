#include "ui/code/code_controller.h"

#include <QElapsedTimer>

#include "cost/cost_model.h"
#include "kernel/visit.h"

namespace tessera::ui {
namespace {

int countLoops(const kernel::Kernel& k) {
  int loops = 0;
  if (k.body) kernel::walk(k.body, [&](kernel::StmtNode& s) { loops += s.kind == kernel::StmtKind::For; });
  return loops;
}

// The analytic cost model on the driver's target.
void predictCost(KernelCode& k, const Graph& graph, const cost::Device& device) {
  try {
    const cost::Estimate e = cost::predict(k.compiled.kernel, device, cost::kernelFlops(graph, k.compiled.kernel));
    k.predicted = QString::fromStdString(e.summary());
    k.bound = e.feasible ? QString::fromStdString(std::string(cost::boundName(e.bound))) : QString();
  } catch (const std::exception& e) {
    k.predicted = QObject::tr("no estimate: %1").arg(QString::fromStdString(e.what()));
  }
}

// Kernel i of the driver's stages: its schedule, both sources, or the first error on the way.
KernelCode kernelCode(const driver::SourceStage& cuda, const driver::SourceStage& cpp, size_t i,
                      const cost::Device& device) {
  KernelCode k;
  k.compiled = cuda.kernels->model.kernels[i];
  if (k.compiled.onHost()) {
    k.host = QString::fromStdString(k.compiled.placement.describe());
    return k;
  }
  k.loops = countLoops(k.compiled.kernel);
  predictCost(k, *cuda.kernels->model.graph, device);
  const std::string& error = !cuda.errors[i].empty() ? cuda.errors[i] : cpp.errors[i];
  if (!error.empty()) k.error = QString::fromStdString(error);
  else k.cuda = cuda.generated[i], k.cpp = cpp.generated[i];
  return k;
}

// Runs on a worker: the Kernel, Cuda and Cpp stages as the window's CodeResult.
std::shared_ptr<const CodeResult> buildKernels(driver::Driver& d, std::shared_ptr<const CompileResult> compile,
                                               const JobContext& job) {
  QElapsedTimer timer;
  timer.start();
  auto result = std::make_shared<CodeResult>();
  result->compile = std::move(compile);
  try {
    auto kernels = d.kernels(job.cancel, [&](size_t done, size_t total) { job.report("lowering", int(done), int(total)); });
    result->compile = kernels->compile;
    auto cuda = d.source(codegen::Target::Cuda, job.cancel);
    auto cpp = d.source(codegen::Target::Cpu, job.cancel);
    result->device = d.target()->costDevice;
    for (size_t i = 0; i < cuda->generated.size(); ++i) result->kernels.push_back(kernelCode(*cuda, *cpp, i, result->device));
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    result->error = QString::fromStdString(e.what());
  }
  result->kernel = kernelLevel(result->kernels);
  result->cuda = sourceLevel(result->kernels, codegen::Target::Cuda);
  result->cpp = sourceLevel(result->kernels, codegen::Target::Cpu);
  for (LevelText* level : {&result->kernel, &result->cuda, &result->cpp})
    if (level->note.isEmpty()) level->note = result->error;
  result->ms = double(timer.nsecsElapsed()) / 1e6;
  return result;
}

// The PTX stage as far as it got, as the window's PtxResult.
std::shared_ptr<const PtxResult> ptxSnapshot(const CodeResult& code, const driver::PtxStage& p, size_t done,
                                             double ms) {
  auto snapshot = std::make_shared<PtxResult>();
  snapshot->total = int(code.kernels.size());
  snapshot->done = int(done);
  snapshot->status.resize(code.kernels.size());
  std::vector<QString> ptx(code.kernels.size());
  for (size_t i = 0; i < done && i < code.kernels.size(); ++i) {
    if (!code.kernels[i].hasSource()) {
      snapshot->status[i] = code.kernels[i].host.isEmpty() ? QObject::tr("no source") : QObject::tr("on the host");
      continue;
    }
    const bool ok = p.errors[i].empty();
    ptx[i] = QString::fromStdString(ok ? p.ptx[i] : "// " + p.errors[i] + "\n");
    if (!ok) snapshot->kernelErrors << QString::fromStdString(code.kernels[i].compiled.spec.id + ": " + p.errors[i]);
    snapshot->status[i] = ok ? QObject::tr("%1 lines · %2 ms").arg(ptx[i].count('\n')).arg(p.compileMs[i], 0, 'f', 0)
                             : QString::fromStdString(p.errors[i]);
  }
  snapshot->ptx = ptxLevel(code.kernels, ptx);
  snapshot->ms = ms;
  return snapshot;
}

// No toolkit at build time, or NVRTC itself failed: every kernel says why.
std::shared_ptr<const PtxResult> noPtx(const CodeResult& code, const QString& why) {
  auto snapshot = std::make_shared<PtxResult>();
  snapshot->total = snapshot->done = int(code.kernels.size());
  snapshot->ptx.note = QObject::tr("No PTX: %1").arg(why);
  snapshot->status.assign(code.kernels.size(), snapshot->ptx.note);
  return snapshot;
}

}  // namespace

CodeController::CodeController(QObject* parent) : QObject(parent), kernelJob_(this), ptxJob_(this) {
  qRegisterMetaType<std::shared_ptr<const CodeResult>>();
  qRegisterMetaType<std::shared_ptr<const PtxResult>>();
}

CodeController::~CodeController() = default;

void CodeController::noteBusy(bool was) {
  if (was != busy()) emit busyChanged(busy());
}

void CodeController::dropResults() {
  const bool was = busy();
  kernelJob_.cancel();
  ptxJob_.cancel();
  kernels_ = nullptr;
  ptx_ = nullptr;
  noteBusy(was);
}

void CodeController::setCompile(std::shared_ptr<driver::Driver> driver, std::shared_ptr<const CompileResult> compile) {
  dropResults();
  driver_ = std::move(driver);
  compile_ = std::move(compile);
  ptxWanted_ = false;
}

void CodeController::setSchedules(execute::ScheduleSet schedules) {
  if (driver_) driver_->setSchedules(std::move(schedules));
  stagesChanged();
}

void CodeController::stagesChanged() {
  const bool wanted = kernels_ || kernelJob_.running();
  dropResults();
  if (wanted && compile_) startKernels();
}

void CodeController::requestKernels() {
  if (!compile_ || !driver_) return;
  if (kernels_) emit kernelsReady(kernels_);
  else if (!kernelJob_.running()) startKernels();
}

void CodeController::requestPtx() {
  if (!compile_ || !driver_) return;
  ptxWanted_ = true;
  if (!kernels_) return requestKernels();  // the PTX job follows the kernels
  if (ptx_ && ptx_->complete()) emit ptxReady(ptx_);
  else if (!ptxJob_.running()) startPtx();
}

void CodeController::startKernels() {
  const bool was = busy();
  std::shared_ptr<driver::Driver> d = driver_;
  kernelJob_.start([d, compile = compile_](const JobContext& job) { return buildKernels(*d, compile, job); },
                   [this](JobOutcome<std::shared_ptr<const CodeResult>> outcome) {
                     auto result = outcome.value.value_or(nullptr);
                     if (!result) {
                       auto failed = std::make_shared<CodeResult>();
                       failed->compile = compile_;
                       failed->error = outcome.error;
                       result = failed;
                     }
                     acceptKernels(result);
                   },
                   [this](const QString&, int done, int total) { emit progress(Level::Kernel, done, total); });
  noteBusy(was);
}

void CodeController::acceptKernels(std::shared_ptr<const CodeResult> result) {
  kernels_ = std::move(result);
  noteBusy(true);
  emit kernelsReady(kernels_);
  if (ptxWanted_) requestPtx();
}

void CodeController::startPtx() {
  const bool was = busy();
  std::shared_ptr<driver::Driver> d = driver_;
  std::shared_ptr<const CodeResult> code = kernels_;
  auto work = [this, d, code](const JobContext& job) {
    QElapsedTimer timer;
    timer.start();
    auto publish = [&](std::shared_ptr<const PtxResult> snapshot) {
      job.post([this, snapshot] { acceptPtx(snapshot); });
    };
    try {
      d->ptx({}, {"-lineinfo"}, job.cancel, [&](const driver::PtxStage& p, size_t done) {
        publish(ptxSnapshot(*code, p, done, double(timer.nsecsElapsed()) / 1e6));
      });
      if (code->kernels.empty()) publish(ptxSnapshot(*code, driver::PtxStage{}, 0, 0));
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      publish(noPtx(*code, QString::fromStdString(e.what())));
    }
    return true;
  };
  ptxJob_.start(work, [this](JobOutcome<bool>) { noteBusy(true); });
  noteBusy(was);
}

void CodeController::acceptPtx(std::shared_ptr<const PtxResult> result) {
  ptx_ = std::move(result);
  emit progress(Level::Ptx, ptx_->done, ptx_->total);
  emit ptxReady(ptx_);
}

}  // namespace tessera::ui
