#pragma once
// plan-memory: an analysis. Liveness of every intermediate in topological order, then greedy buffer reuse
// (best fit by size) and in-place updates for pointwise ops whose input dies there. Graph inputs and
// initializers are not planned (the caller owns them); graph outputs get buffers that are never reused.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "passes/pass_manager.h"

namespace tessera {

struct ValueLiveness {
  size_t defined = 0;   // position in topological order of the producing node
  size_t lastUse = 0;   // position of the last reader (the end of the order for graph outputs)
  int64_t bytes = 0;
};

struct MemoryPlan {
  std::vector<std::string> order;                // node ids in execution order
  std::map<std::string, ValueLiveness> liveness; // by value name
  std::map<std::string, int> bufferOf;           // value name → buffer index
  std::vector<int64_t> bufferBytes;              // size of each buffer
  std::vector<std::string> inPlace;              // values written over an input that died there
  int64_t naiveBytes = 0;    // one buffer per intermediate
  int64_t plannedBytes = 0;  // sum of the buffers
  int64_t peakLiveBytes = 0; // most bytes alive at once: no plan can use less
};

MemoryPlan planMemory(const Graph& graph);
// The pass records statistics; when `sink` is given, the plan is also stored there for later compile steps.
std::unique_ptr<Pass> createPlanMemoryPass(std::shared_ptr<MemoryPlan> sink = nullptr);

}  // namespace tessera
