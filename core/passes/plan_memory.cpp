#include "passes/plan_memory.h"

#include <algorithm>
#include <unordered_map>

#include "ops/registry.h"

namespace tessera {
namespace {

bool isPointwise(const Node& n) {
  const OpSchema* s = OpRegistry::instance().find(n.op());
  return s && s->category == OpCategory::Pointwise && n.numOutputs() == 1;
}

class Planner {
 public:
  explicit Planner(const Graph& graph) : order_(graph.topoOrder()) {}

  MemoryPlan run() {
    computeLiveness();
    for (size_t k = 0; k < order_.size(); ++k) step(k);
    for (int64_t b : plan_.bufferBytes) plan_.plannedBytes += b;
    return std::move(plan_);
  }

 private:
  void computeLiveness() {
    size_t end = order_.size();
    for (size_t k = 0; k < order_.size(); ++k) {
      plan_.order.push_back(order_[k]->id());
      for (Value* out : order_[k]->outputs()) {
        ValueLiveness l{k, out->isGraphOutput() ? end : k, out->type().bytes()};
        plan_.liveness[out->name()] = l;
        plan_.naiveBytes += l.bytes;
      }
      for (Value* in : order_[k]->inputs()) {
        if (!in || !in->producer()) continue;
        ValueLiveness& l = plan_.liveness[in->name()];
        l.lastUse = std::max(l.lastUse, k);
      }
    }
  }

  void step(size_t k) {
    const Node& n = *order_[k];
    for (Value* out : n.outputs()) {
      const ValueLiveness& l = plan_.liveness[out->name()];
      int buffer = inPlaceBuffer(n, k, l.bytes);
      if (buffer >= 0) plan_.inPlace.push_back(out->name());
      else buffer = bestFit(l.bytes);
      plan_.bufferOf[out->name()] = buffer;
      live_[buffer] = out->name();
      liveBytes_ += l.bytes;
    }
    plan_.peakLiveBytes = std::max(plan_.peakLiveBytes, liveBytes_);
    // Inputs read for the last time, and outputs nobody reads, free their buffers after this node.
    auto release = [&](Value* v) {
      if (!v || !v->producer()) return;
      auto it = plan_.bufferOf.find(v->name());
      if (it == plan_.bufferOf.end() || plan_.liveness[v->name()].lastUse != k) return;
      auto lv = live_.find(it->second);
      if (lv == live_.end() || lv->second != v->name()) return;  // already taken over in place
      live_.erase(lv);
      liveBytes_ -= plan_.liveness[v->name()].bytes;
      free_.push_back(it->second);
    };
    for (Value* in : n.inputs()) release(in);
    for (Value* out : n.outputs()) release(out);
  }

  // The buffer of an input that dies at this pointwise node and has the output's size; -1 when none.
  int inPlaceBuffer(const Node& n, size_t k, int64_t bytes) {
    if (!isPointwise(n)) return -1;
    for (Value* in : n.inputs()) {
      if (!in || !in->producer() || in->isGraphOutput()) continue;
      const ValueLiveness& l = plan_.liveness[in->name()];
      if (l.lastUse != k || l.bytes != bytes || in->dtype() != n.output(0)->dtype()) continue;
      int buffer = plan_.bufferOf[in->name()];
      auto lv = live_.find(buffer);
      if (lv == live_.end() || lv->second != in->name()) continue;
      live_.erase(lv);  // the output takes the buffer over
      liveBytes_ -= bytes;
      return buffer;
    }
    return -1;
  }

  // Smallest free buffer that fits; else the largest free one grown to fit; else a new one.
  int bestFit(int64_t bytes) {
    auto best = free_.end(), largest = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      int64_t size = plan_.bufferBytes[size_t(*it)];
      if (size >= bytes && (best == free_.end() || size < plan_.bufferBytes[size_t(*best)])) best = it;
      if (largest == free_.end() || size > plan_.bufferBytes[size_t(*largest)]) largest = it;
    }
    auto pick = best != free_.end() ? best : largest;
    if (pick != free_.end()) {
      int buffer = *pick;
      free_.erase(pick);
      int64_t& size = plan_.bufferBytes[size_t(buffer)];
      size = std::max(size, bytes);
      return buffer;
    }
    plan_.bufferBytes.push_back(bytes);
    return int(plan_.bufferBytes.size()) - 1;
  }

  std::vector<Node*> order_;
  MemoryPlan plan_;
  std::unordered_map<int, std::string> live_;  // buffer → value held now
  std::vector<int> free_;
  int64_t liveBytes_ = 0;
};

class PlanMemoryPass : public Pass {
 public:
  explicit PlanMemoryPass(std::shared_ptr<MemoryPlan> sink) : sink_(std::move(sink)) {}
  std::string name() const override { return "plan-memory"; }
  std::string summary() const override { return "plan intermediate buffers: liveness, reuse, in-place updates"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"values", "intermediate values planned"},
            {"buffers", "buffers after reuse"},
            {"in-place", "values computed in place over a dying input"},
            {"naive-bytes", "bytes with one buffer per intermediate"},
            {"planned-bytes", "bytes of all buffers after reuse"},
            {"peak-live-bytes", "most bytes alive at once (a lower bound)"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    MemoryPlan plan = planMemory(graph);
    ctx.count("values", int64_t(plan.bufferOf.size()));
    ctx.count("buffers", int64_t(plan.bufferBytes.size()));
    ctx.count("in-place", int64_t(plan.inPlace.size()));
    ctx.count("naive-bytes", plan.naiveBytes);
    ctx.count("planned-bytes", plan.plannedBytes);
    ctx.count("peak-live-bytes", plan.peakLiveBytes);
    if (sink_) *sink_ = std::move(plan);
  }

 private:
  std::shared_ptr<MemoryPlan> sink_;
};

}  // namespace

MemoryPlan planMemory(const Graph& graph) { return Planner(graph).run(); }

std::unique_ptr<Pass> createPlanMemoryPass(std::shared_ptr<MemoryPlan> sink) {
  return std::make_unique<PlanMemoryPass>(std::move(sink));
}

}  // namespace tessera
