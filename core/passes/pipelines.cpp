#include "passes/pipelines.h"

#include "ir/error.h"
#include "passes/canonicalize.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/decompose.h"
#include "passes/fold_batchnorm.h"
#include "passes/fold_constants.h"
#include "passes/infer_shapes.h"
#include "passes/layout_nhwc.h"
#include "passes/plan_memory.h"

namespace tessera {
namespace {

struct PassFactory {
  const char* name;
  std::unique_ptr<Pass> (*create)();
};

std::unique_ptr<Pass> foldConstantsDefault() { return createFoldConstantsPass(); }
std::unique_ptr<Pass> planMemoryDefault() { return createPlanMemoryPass(); }

// To add a pass: one line here (and in a pipeline below if it should run by default).
const PassFactory kPasses[] = {
    {"infer-shapes", createInferShapesPass},   {"canonicalize", createCanonicalizePass},
    {"fold-constants", foldConstantsDefault},  {"cse", createCsePass},
    {"dce", createDcePass},                    {"decompose", createDecomposePass},
    {"fold-batchnorm", createFoldBatchNormPass}, {"layout-nhwc", createLayoutNhwcPass},
    {"plan-memory", planMemoryDefault},
};

std::vector<std::string> split(const std::string& spec) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    std::string part = spec.substr(start, comma - start);
    while (!part.empty() && part.front() == ' ') part.erase(part.begin());
    while (!part.empty() && part.back() == ' ') part.pop_back();
    if (!part.empty()) out.push_back(part);
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> passNames() {
  std::vector<std::string> out;
  for (const PassFactory& f : kPasses) out.push_back(f.name);
  return out;
}

std::unique_ptr<Pass> createPass(const std::string& name) {
  for (const PassFactory& f : kPasses)
    if (name == f.name) return f.create();
  fail("unknown pass '" + name + "'");
}

const std::vector<PipelineInfo>& pipelines() {
  // fold-batchnorm runs before decompose, which would otherwise split the BatchNormalization it folds.
  static const std::vector<PipelineInfo> kPipelines = {
      {"default", "simplify, fold constants and batch norms, decompose composite ops, plan memory",
       {"infer-shapes", "canonicalize", "fold-constants", "fold-batchnorm", "decompose", "canonicalize",
        "fold-constants", "cse", "dce", "plan-memory"}},
      {"o0", "type inference only", {"infer-shapes"}},
      {"no-decompose", "the default pipeline, keeping composite ops whole",
       {"infer-shapes", "canonicalize", "fold-constants", "fold-batchnorm", "cse", "dce", "plan-memory"}},
      {"nhwc", "the default pipeline with activations laid out NHWC between convolutions",
       {"infer-shapes", "canonicalize", "fold-constants", "fold-batchnorm", "decompose", "canonicalize",
        "fold-constants", "layout-nhwc", "cse", "dce", "plan-memory"}},
  };
  return kPipelines;
}

std::vector<std::string> resolvePipeline(const std::string& spec) {
  for (const PipelineInfo& p : pipelines())
    if (p.name == spec) return p.passes;
  std::vector<std::string> names = split(spec);
  if (names.empty()) fail("empty pipeline '" + spec + "'");
  for (const std::string& n : names) {
    bool known = false;
    for (const PassFactory& f : kPasses) known |= n == f.name;
    if (!known) fail("unknown pipeline or pass '" + n + "'");
  }
  return names;
}

PassManager buildPipeline(const std::string& spec, PipelineOptions options) {
  PassManager pm(std::move(options));
  for (const std::string& name : resolvePipeline(spec)) pm.addPass(createPass(name));
  return pm;
}

}  // namespace tessera
