#pragma once
// The levels of a compile as one ordered table of named stages: what the CLI's `--emit` accepts, what the
// window's Levels panel shows and what the driver computes, all read from here (Triton's stage table is the
// model: ttir → ttgir → llir → ptx → cubin).
#include <optional>
#include <span>
#include <string_view>

namespace tessera::driver {

enum class Stage {
  Graph,   // the graph after the pass pipeline
  Fused,   // the same graph partitioned into groups (one kernel each)
  Kernel,  // each group lowered to kernel IR and scheduled (defaults, the tuning cache, the user's schedules)
  Cuda,    // CUDA C++ from the kernel IR
  Cpp,     // C++ from the kernel IR
  Ptx,     // NVRTC's PTX for the CUDA source
  Run,     // built, run, timed and verified on a backend
};

struct StageInfo {
  Stage stage;
  std::string_view name;     // "graph", "fused", "kernel", "cuda", "cpp", "ptx", "run"
  std::string_view summary;  // one line
  Stage after;               // the stage it is computed from (Graph: itself)
};

// Every stage, in pipeline order.
std::span<const StageInfo> stages();
const StageInfo& stageInfo(Stage stage);
std::optional<Stage> stageNamed(std::string_view name);
// True when `later` is computed, directly or not, from `earlier` (a stage depends on itself).
bool dependsOn(Stage later, Stage earlier);

}  // namespace tessera::driver
