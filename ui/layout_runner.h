#pragma once
// Graph layouts as jobs: each request gets an id and runs on one dedicated worker thread (Graphviz is not
// thread-safe). A new request supersedes the older ones: a queued job that is no longer the latest never starts,
// and the result of a superseded running job is dropped. Results return as one object via a queued call.
#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <memory>

#include "ui/graph_layout.h"

namespace tessera::ui {

class LayoutRunner : public QObject {
  Q_OBJECT
 public:
  explicit LayoutRunner(QObject* parent = nullptr);
  ~LayoutRunner() override;
  // Starts describing and placing `step`; returns the job id. layoutReady follows unless superseded.
  quint64 request(StepPicture step);
  quint64 latest() const { return *latest_; }
  bool busy() const { return busy_; }
  // Waits for the worker to finish (used before destruction and by headless rendering).
  void waitForDone() { pool_.waitForDone(); }

 signals:
  void layoutReady(quint64 job, std::shared_ptr<const tessera::ui::GraphLayout> layout);

 private:
  QThreadPool pool_;
  std::shared_ptr<std::atomic<quint64>> latest_ = std::make_shared<std::atomic<quint64>>(0);
  bool busy_ = false;
};

}  // namespace tessera::ui
