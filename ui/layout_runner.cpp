#include "ui/layout_runner.h"

#include <QPointer>

namespace tessera::ui {

LayoutRunner::LayoutRunner(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
  qRegisterMetaType<std::shared_ptr<const GraphLayout>>();
}

LayoutRunner::~LayoutRunner() {
  ++*latest_;  // queued jobs become stale and skip their work
  pool_.waitForDone();
}

quint64 LayoutRunner::request(StepPicture step) {
  const quint64 job = ++*latest_;
  busy_ = true;
  QPointer<LayoutRunner> self(this);
  std::shared_ptr<std::atomic<quint64>> latest = latest_;
  pool_.start([self, latest, job, step = std::move(step)] {
    if (*latest != job) return;  // superseded before it started
    auto layout = std::make_shared<GraphLayout>(describeStep(step));
    if (*latest != job) return;
    placeWithDot(*layout);
    if (*latest != job) return;
    std::shared_ptr<const GraphLayout> result = layout;
    QMetaObject::invokeMethod(
        self.data(),
        [self, job, result] {
          if (!self || *self->latest_ != job) return;
          self->busy_ = false;
          emit self->layoutReady(job, result);
        },
        Qt::QueuedConnection);
  });
  return job;
}

}  // namespace tessera::ui
