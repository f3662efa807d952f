#include "passes/step_recorder.h"

#include <algorithm>

#include "passes/fingerprint.h"

namespace tessera {

void StepRecorder::clear() {
  steps_.clear();
  input_.reset();
  before_.reset();
  beforeNodes_.clear();
}

void StepRecorder::beforePass(const Pass&, const Graph& graph) {
  // Someone may edit the graph between runs (or between passes): re-snapshot whenever it differs.
  uint64_t fp = graphFingerprint(graph);
  if (before_ && fp == beforeGraph_) return;
  before_ = std::make_shared<const Graph>(graph.clone());
  beforeNodes_ = nodeFingerprints(graph);
  beforeGraph_ = fp;
  if (!input_) input_ = before_;
}

Step StepRecorder::record(const Pass& pass, const Graph& graph, const PassRunInfo& info) {
  Step step;
  step.index = steps_.size();
  step.pass = pass.name();
  step.summary = pass.summary();
  step.statistics = info.statistics;
  step.wallMs = info.wallMs;
  uint64_t fp = graphFingerprint(graph);
  step.changed = fp != beforeGraph_;
  if (!step.changed) {
    step.graph = before_;
    return step;
  }
  auto after = nodeFingerprints(graph);
  for (const auto& [id, f] : after) {
    auto it = beforeNodes_.find(id);
    if (it == beforeNodes_.end()) step.added.push_back(id);
    else if (it->second != f) step.rewritten.push_back(id);
  }
  for (const auto& [id, f] : beforeNodes_)
    if (!after.count(id)) step.removed.push_back(id);
  for (auto* list : {&step.added, &step.removed, &step.rewritten}) std::sort(list->begin(), list->end());
  step.graph = std::make_shared<const Graph>(graph.clone());
  before_ = step.graph;
  beforeNodes_ = std::move(after);
  beforeGraph_ = fp;
  return step;
}

void StepRecorder::afterPass(const Pass& pass, const Graph& graph, const PassRunInfo& info) {
  steps_.push_back(record(pass, graph, info));
  if (onStep_) onStep_(steps_.back());
}

void StepRecorder::afterFailure(const Pass& pass, const Graph& graph, const PassRunInfo& info,
                                const std::string& message) {
  Step step = record(pass, graph, info);
  step.failed = true;
  step.error = message;
  steps_.push_back(std::move(step));
  if (onStep_) onStep_(steps_.back());
}

}  // namespace tessera
