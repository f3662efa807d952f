#pragma once
// The step recorder: an instrumentation that keeps, for every pass application, the IR after it and what
// changed. The GUI's step-through and the CLI's --print-after-all both read these steps. It belongs to the
// compile session that registers it (no global state).
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/pass_manager.h"

namespace tessera {

// One recorded pass application.
struct Step {
  size_t index = 0;
  std::string pass, summary;
  // The IR after the pass. An unchanged step shares its predecessor's snapshot; tensors share bytes, so a
  // snapshot costs the graph structure, not the weights.
  std::shared_ptr<const Graph> graph;
  std::vector<std::string> added, removed, rewritten;  // node ids, sorted
  StatisticValues statistics;
  double wallMs = 0;
  bool changed = false;  // the graph fingerprint differs from before the pass
  bool failed = false;
  std::string error;  // when failed
};

class StepRecorder : public Instrumentation {
 public:
  void beforePass(const Pass& pass, const Graph& graph) override;
  void afterPass(const Pass& pass, const Graph& graph, const PassRunInfo& info) override;
  void afterFailure(const Pass& pass, const Graph& graph, const PassRunInfo& info, const std::string& message) override;

  const std::vector<Step>& steps() const { return steps_; }
  // Called with each step as soon as it is recorded, on the thread running the pipeline: a streaming
  // --print-after-all, or progress in a view (post it to the GUI thread).
  void setOnStep(std::function<void(const Step&)> onStep) { onStep_ = std::move(onStep); }
  // The IR before the first recorded pass; null before any. Call clear() before recording another compile.
  std::shared_ptr<const Graph> input() const { return input_; }
  void clear();

 private:
  Step record(const Pass& pass, const Graph& graph, const PassRunInfo& info);

  std::function<void(const Step&)> onStep_;
  std::vector<Step> steps_;
  std::shared_ptr<const Graph> input_;
  std::shared_ptr<const Graph> before_;  // snapshot the next step is compared with
  std::unordered_map<std::string, uint64_t> beforeNodes_;
  uint64_t beforeGraph_ = 0;
};

}  // namespace tessera
