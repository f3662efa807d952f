#pragma once
// Graph layouts as background jobs (ui/common/background_job.h) on one dedicated worker thread (Graphviz is not
// thread-safe). A new request supersedes the older ones: a queued job that is no longer the latest never starts,
// a running one stops between describing and placing, and its result is dropped.
#include <QObject>
#include <QThreadPool>
#include <memory>

#include "ui/common/background_job.h"
#include "ui/graph/graph_layout.h"

namespace tessera::ui {

class LayoutRunner : public QObject {
  Q_OBJECT
 public:
  explicit LayoutRunner(QObject* parent = nullptr);
  ~LayoutRunner() override;
  // Starts describing and placing `step`; returns the job id. layoutReady follows unless superseded.
  quint64 request(StepPicture step);
  quint64 latest() const { return job_.latest(); }
  bool busy() const { return job_.running(); }
  // Waits for the worker to finish (used before destruction and by headless rendering).
  void waitForDone() { pool_.waitForDone(); }

 signals:
  void layoutReady(quint64 job, std::shared_ptr<const tessera::ui::GraphLayout> layout);

 private:
  QThreadPool pool_;
  BackgroundJob<std::shared_ptr<const GraphLayout>> job_{this, &pool_};
};

}  // namespace tessera::ui
