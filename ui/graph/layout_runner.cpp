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
  auto work = [step = std::move(step), state = worker_](const JobContext& job) mutable {
    if (!step.layers && step.graph) {
      if (step.names && state->names != step.names) {
        state->namesTree = std::make_shared<const LayerTree>(LayerTree::build(*step.names));
        state->names = step.names;
        state->graph.reset();
      }
      if (state->graph != step.graph) {
        const LayerTree* names = step.names && step.names != step.graph ? state->namesTree.get() : nullptr;
        state->tree = step.names == step.graph ? state->namesTree
                                               : std::make_shared<const LayerTree>(LayerTree::build(*step.graph, names));
      }
      state->graph = step.graph;
      step.layers = state->tree;
    }
    auto layout = std::make_shared<GraphLayout>(describeStep(step));
    job.cancel.check();
    placeLayers(*layout, &state->placements);
    return std::shared_ptr<const GraphLayout>(layout);
  };
  job_.start(work, [this](JobOutcome<std::shared_ptr<const GraphLayout>> outcome) {
    if (outcome.ok()) emit layoutReady(job_.latest(), *outcome.value);
  });
  return job_.latest();
}

}  // namespace tessera::ui
