#pragma once
// Passes by name and the named pipelines. A pipeline spec is either a pipeline name ("default") or a comma
// list of pass specs ("canonicalize,dce"); a pass spec may carry options in braces, separated by spaces
// ("fold-constants{max-elements=1024}"). Options of the passes: fold-constants max-elements (default 65536).
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
// A pass from its spec; throws Error for an unknown pass or option.
std::unique_ptr<Pass> createPass(const std::string& spec);
const std::vector<PipelineInfo>& pipelines();           // "default", "o0", "no-decompose", "nhwc"
// The pass specs a pipeline spec stands for; throws Error naming an unknown pipeline or pass.
std::vector<std::string> resolvePipeline(const std::string& spec);
// A pass manager holding the passes of `spec`.
PassManager buildPipeline(const std::string& spec, PipelineOptions options = {});

}  // namespace tessera
