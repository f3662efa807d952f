#pragma once
// Passes by name and the named pipelines. A pipeline spec is either a pipeline name ("default") or a comma
// list of pass names ("canonicalize,dce").
#include <memory>
#include <string>
#include <vector>

#include "passes/pass_manager.h"

namespace tessera {

struct PipelineInfo {
  std::string name;
  std::string summary;
  std::vector<std::string> passes;
};

std::vector<std::string> passNames();                   // every pass, in registry order
std::unique_ptr<Pass> createPass(const std::string& name);  // throws Error for an unknown name
const std::vector<PipelineInfo>& pipelines();           // "default", "o0", "no-decompose", "nhwc"
// The pass names a spec stands for; throws Error naming an unknown pipeline or pass.
std::vector<std::string> resolvePipeline(const std::string& spec);
// A pass manager holding the passes of `spec`.
PassManager buildPipeline(const std::string& spec, PipelineOptions options = {});

}  // namespace tessera
