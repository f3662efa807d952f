#pragma once
// Graph layouts as background jobs (ui/common/background_job.h) on one dedicated worker thread (Graphviz is not
// thread-safe). A new request supersedes the older ones: a queued job that is no longer the latest never starts,
// a running one stops between describing and placing, and its result is dropped. The worker keeps the layer
// tree of the last graph and the placements of open layers (LayerPlacementCache), so re-opening or closing a
// layer of the same step lays out only the layers that changed.
#include <QObject>
#include <QThreadPool>
#include <memory>

#include "ui/common/background_job.h"
#include "ui/graph/graph_layout.h"
#include "ui/graph/layer_picture.h"

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
  // Touched by the worker thread only (the pool has one thread).
  struct WorkerState {
    std::shared_ptr<const Graph> graph, names;
    std::shared_ptr<const LayerTree> tree, namesTree;
    LayerPlacementCache placements;
  };
  std::shared_ptr<WorkerState> worker_ = std::make_shared<WorkerState>();
  QThreadPool pool_;
  BackgroundJob<std::shared_ptr<const GraphLayout>> job_{this, &pool_};
};

}  // namespace tessera::ui
