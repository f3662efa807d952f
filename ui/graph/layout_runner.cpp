#include "ui/graph/layout_runner.h"

namespace tessera::ui {

LayoutRunner::LayoutRunner(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
  qRegisterMetaType<std::shared_ptr<const GraphLayout>>();
}

LayoutRunner::~LayoutRunner() {
  job_.cancel();  // queued jobs become stale and skip their work
  pool_.waitForDone();
}

quint64 LayoutRunner::request(StepPicture step) {
  auto work = [step = std::move(step)](const JobContext& job) {
    auto layout = std::make_shared<GraphLayout>(describeStep(step));
    job.cancel.check();
    placeWithDot(*layout);
    return std::shared_ptr<const GraphLayout>(layout);
  };
  job_.start(work, [this](JobOutcome<std::shared_ptr<const GraphLayout>> outcome) {
    if (outcome.ok()) emit layoutReady(job_.latest(), *outcome.value);
  });
  return job_.latest();
}

}  // namespace tessera::ui
