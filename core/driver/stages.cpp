#include "driver/stages.h"

#include <array>

namespace tessera::driver {
namespace {

constexpr std::array<StageInfo, 7> kStages{{
    {Stage::Graph, "graph", "the graph after the pass pipeline", Stage::Graph},
    {Stage::Fused, "fused", "the graph partitioned into fused groups, one kernel each", Stage::Graph},
    {Stage::Kernel, "kernel", "each group lowered to kernel IR and scheduled", Stage::Fused},
    {Stage::Cuda, "cuda", "CUDA C++ generated from the kernel IR", Stage::Kernel},
    {Stage::Cpp, "cpp", "C++ generated from the kernel IR", Stage::Kernel},
    {Stage::Ptx, "ptx", "PTX compiled from the CUDA source by NVRTC", Stage::Cuda},
    {Stage::Run, "run", "built, run, timed and verified on a backend", Stage::Kernel},
}};

}  // namespace

std::span<const StageInfo> stages() { return kStages; }

const StageInfo& stageInfo(Stage stage) { return kStages[static_cast<size_t>(stage)]; }

std::optional<Stage> stageNamed(std::string_view name) {
  for (const StageInfo& s : kStages)
    if (s.name == name) return s.stage;
  return std::nullopt;
}

bool dependsOn(Stage later, Stage earlier) {
  for (Stage s = later;; s = stageInfo(s).after) {
    if (s == earlier) return true;
    if (stageInfo(s).after == s) return false;
  }
}

}  // namespace tessera::driver
