#include "ui/code_controller.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include "cost/cost_model.h"
#include "cost/device.h"
#include "kernel/visit.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/from_fusion.h"

namespace tessera::ui {
namespace {

using Generation = std::shared_ptr<std::atomic<quint64>>;

int countLoops(const kernel::Kernel& k) {
  int loops = 0;
  if (k.body) kernel::walk(k.body, [&](kernel::StmtNode& s) { loops += s.kind == kernel::StmtKind::For; });
  return loops;
}

// The analytic cost model on the project's GPU (the device file is read once; a missing one is the reason).
void predictCost(KernelCode& k, const Graph& graph) {
  try {
    static const cost::Device device = cost::loadDevice("h200");
    const cost::Estimate e = cost::predict(k.compiled.kernel, device, cost::kernelFlops(graph, k.compiled.kernel));
    k.predicted = QString::fromStdString(e.summary());
    k.bound = e.feasible ? QString::fromStdString(std::string(cost::boundName(e.bound))) : QString();
  } catch (const std::exception& e) {
    k.predicted = QObject::tr("no estimate: %1").arg(QString::fromStdString(e.what()));
  }
}

// Lowers and schedules one group, then prints both sources; a failure stays with the kernel.
KernelCode buildKernel(const std::shared_ptr<const Graph>& graph, const kernel::KernelSpec& spec,
                       const execute::ScheduleSet& schedules) {
  KernelCode k;
  execute::CompiledModel one = execute::compileKernels(graph, {spec}, &schedules);
  k.compiled = std::move(one.kernels.front());
  if (!k.compiled.error.empty()) {
    k.error = QString::fromStdString(k.compiled.error);
    return k;
  }
  k.loops = countLoops(k.compiled.kernel);
  predictCost(k, *graph);
  try {
    k.cuda = codegen::generateCuda(k.compiled.kernel);
    k.cpp = codegen::generateCpp(k.compiled.kernel);
  } catch (const std::exception& e) {
    k.error = QString::fromStdString(e.what());
  }
  return k;
}

// Runs on a worker: every kernel, stopping early when superseded (then the result is null).
template <class Progress>
std::shared_ptr<CodeResult> buildKernels(std::shared_ptr<const CompileResult> compile,
                                         std::shared_ptr<const execute::ScheduleSet> schedules, const Generation& latest,
                                         quint64 generation, Progress&& progress) {
  QElapsedTimer timer;
  timer.start();
  auto result = std::make_shared<CodeResult>();
  result->compile = compile;
  std::vector<kernel::KernelSpec> specs;
  try {
    specs = execute::kernelSpecs(*compile);
  } catch (const std::exception& e) {
    result->error = QString::fromStdString(e.what());
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    if (*latest != generation) return nullptr;
    result->kernels.push_back(buildKernel(compile->graph, specs[i], *schedules));
    progress(int(i + 1), int(specs.size()));
  }
  result->kernel = kernelLevel(result->kernels);
  result->cuda = sourceLevel(result->kernels, codegen::Target::Cuda);
  result->cpp = sourceLevel(result->kernels, codegen::Target::Cpu);
  for (LevelText* level : {&result->kernel, &result->cuda, &result->cpp})
    if (level->note.isEmpty()) level->note = result->error;
  result->ms = double(timer.nsecsElapsed()) / 1e6;
  return result;
}

}  // namespace

CodeController::CodeController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<std::shared_ptr<const CodeResult>>();
  qRegisterMetaType<std::shared_ptr<const PtxResult>>();
}

CodeController::~CodeController() { ++*generation_; }

void CodeController::setCompile(std::shared_ptr<const CompileResult> compile) {
  ++*generation_;
  compile_ = std::move(compile);
  kernels_ = nullptr;
  ptx_ = nullptr;
  ptxWanted_ = false;
  setJobs(false, false);
}

void CodeController::setSchedules(execute::ScheduleSet schedules) {
  const bool wanted = kernels_ || kernelJob_;
  const bool ptxWanted = ptxWanted_;
  ++*generation_;
  schedules_ = std::make_shared<const execute::ScheduleSet>(std::move(schedules));
  kernels_ = nullptr;
  ptx_ = nullptr;
  setJobs(false, false);
  ptxWanted_ = ptxWanted;
  if (wanted && compile_) startKernels();
}

void CodeController::requestKernels() {
  if (!compile_) return;
  if (kernels_) emit kernelsReady(kernels_);
  else if (!kernelJob_) startKernels();
}

void CodeController::requestPtx() {
  if (!compile_) return;
  ptxWanted_ = true;
  if (!kernels_) return requestKernels();  // the PTX job follows the kernels
  if (ptx_ && ptx_->complete()) emit ptxReady(ptx_);
  else if (!ptxJob_) startPtx();
}

void CodeController::setJobs(bool kernelJob, bool ptxJob) {
  const bool was = busy();
  kernelJob_ = kernelJob;
  ptxJob_ = ptxJob;
  if (was != busy()) emit busyChanged(busy());
}

void CodeController::startKernels() {
  setJobs(true, ptxJob_);
  const quint64 generation = *generation_;
  QPointer<CodeController> self(this);
  Generation latest = generation_;
  std::shared_ptr<const CompileResult> compile = compile_;
  std::shared_ptr<const execute::ScheduleSet> schedules = schedules_;
  (void)QtConcurrent::run([self, latest, generation, compile, schedules] {
    auto progress = [self, latest, generation](int done, int total) {
      QMetaObject::invokeMethod(self.data(), [self, latest, generation, done, total] {
        if (self && *latest == generation) emit self->progress("lowering", done, total);
      }, Qt::QueuedConnection);
    };
    std::shared_ptr<const CodeResult> result = buildKernels(compile, schedules, latest, generation, progress);
    if (!result) return;
    QMetaObject::invokeMethod(self.data(), [self, generation, result] {
      if (self) self->acceptKernels(generation, result);
    }, Qt::QueuedConnection);
  });
}

void CodeController::acceptKernels(quint64 generation, std::shared_ptr<const CodeResult> result) {
  if (generation != *generation_) return;  // superseded by a newer compile
  kernels_ = std::move(result);
  setJobs(false, ptxJob_);
  emit kernelsReady(kernels_);
  if (ptxWanted_) requestPtx();
}

void CodeController::startPtx() {
  setJobs(kernelJob_, true);
  const quint64 generation = *generation_;
  QPointer<CodeController> self(this);
  Generation latest = generation_;
  std::shared_ptr<const CodeResult> code = kernels_;
  (void)QtConcurrent::run([self, latest, generation, code] {
    QElapsedTimer timer;
    timer.start();
    std::vector<QString> ptx(code->kernels.size());
    PtxResult snapshot;
    snapshot.total = int(code->kernels.size());
    snapshot.status.resize(code->kernels.size());
    // Sends the PTX so far as a whole new object.
    auto publish = [&] {
      snapshot.ptx = ptxLevel(code->kernels, ptx);
      snapshot.ms = double(timer.nsecsElapsed()) / 1e6;
      auto copy = std::make_shared<const PtxResult>(snapshot);
      QMetaObject::invokeMethod(self.data(), [self, generation, copy] {
        if (self) self->acceptPtx(generation, copy);
      }, Qt::QueuedConnection);
    };
    try {
      const cuda::NvrtcCompiler nvrtc;
      for (size_t i = 0; i < code->kernels.size(); ++i) {
        if (*latest != generation) return;
        const KernelCode& k = code->kernels[i];
        if (k.error.isEmpty()) {
          cuda::NvrtcResult r = nvrtc.compile(k.cuda.source, ptxProgramName(k).toStdString(), {"-lineinfo"});
          ptx[i] = QString::fromStdString(r.ok ? r.ptx : "// " + r.error + "\n");
          if (!r.ok) snapshot.kernelErrors << QString::fromStdString(k.compiled.spec.id + ": " + r.error);
          snapshot.status[i] = r.ok ? QObject::tr("%1 lines · %2 ms").arg(ptx[i].count('\n')).arg(r.compileMs, 0, 'f', 0)
                                    : QString::fromStdString(r.error);
        } else {
          snapshot.status[i] = QObject::tr("no source");
        }
        snapshot.done = int(i + 1);
        publish();
      }
      if (code->kernels.empty()) publish();
    } catch (const std::exception& e) {  // no toolkit at build time, or NVRTC itself failed
      snapshot.done = snapshot.total;
      snapshot.ptx = {};
      snapshot.ptx.note = QObject::tr("No PTX: %1").arg(QString::fromStdString(e.what()));
      for (QString& status : snapshot.status) status = snapshot.ptx.note;
      auto copy = std::make_shared<const PtxResult>(snapshot);
      QMetaObject::invokeMethod(self.data(), [self, generation, copy] {
        if (self) self->acceptPtx(generation, copy);
      }, Qt::QueuedConnection);
    }
  });
}

void CodeController::acceptPtx(quint64 generation, std::shared_ptr<const PtxResult> result) {
  if (generation != *generation_) return;
  ptx_ = std::move(result);
  if (ptx_->complete()) setJobs(kernelJob_, false);
  emit progress("ptx", ptx_->done, ptx_->total);
  emit ptxReady(ptx_);
}

}  // namespace tessera::ui
