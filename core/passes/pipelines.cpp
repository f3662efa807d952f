#include "passes/pipelines.h"

#include <map>
#include <set>
#include <sstream>

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

// The options written in braces after a pass name: "fold-constants{max-elements=1024}".
class PassOptions {
 public:
  PassOptions(std::string pass, std::map<std::string, std::string> values)
      : pass_(std::move(pass)), values_(std::move(values)) {}
  int64_t integer(const std::string& key, int64_t fallback) {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    used_.insert(key);
    try {
      size_t end = 0;
      int64_t v = std::stoll(it->second, &end);
      if (end == it->second.size()) return v;
    } catch (const std::exception&) {
    }
    fail("pass '" + pass_ + "': option '" + key + "' must be an integer, not '" + it->second + "'");
  }
  // Throws for an option the pass did not ask for (a typo must not be ignored).
  void checkAllUsed() const {
    for (const auto& [key, value] : values_)
      if (!used_.count(key)) fail("pass '" + pass_ + "' has no option '" + key + "'");
  }

 private:
  std::string pass_;
  std::map<std::string, std::string> values_;
  std::set<std::string> used_;
};

struct PassFactory {
  const char* name;
  std::unique_ptr<Pass> (*create)(PassOptions&);
};

template <std::unique_ptr<Pass> (*Create)()>
std::unique_ptr<Pass> plain(PassOptions&) {
  return Create();
}
std::unique_ptr<Pass> foldConstants(PassOptions& o) {
  return createFoldConstantsPass(o.integer("max-elements", kDefaultFoldLimit));
}
std::unique_ptr<Pass> planMemory(PassOptions&) { return createPlanMemoryPass(); }

// To add a pass: one line here (and in a pipeline below if it should run by default).
const PassFactory kPasses[] = {
    {"infer-shapes", plain<createInferShapesPass>},     {"canonicalize", plain<createCanonicalizePass>},
    {"fold-constants", foldConstants},                  {"cse", plain<createCsePass>},
    {"dce", plain<createDcePass>},                      {"decompose", plain<createDecomposePass>},
    {"fold-batchnorm", plain<createFoldBatchNormPass>}, {"layout-nhwc", plain<createLayoutNhwcPass>},
    {"plan-memory", planMemory},
};

std::string trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// Splits at commas outside braces.
std::vector<std::string> split(const std::string& spec) {
  std::vector<std::string> out;
  std::string part;
  int depth = 0;
  for (char c : spec) {
    depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (c == ',' && depth == 0) {
      if (!trim(part).empty()) out.push_back(trim(part));
      part.clear();
    } else {
      part += c;
    }
  }
  if (!trim(part).empty()) out.push_back(trim(part));
  return out;
}

// "name{k=v k2=v2}" → name and options.
std::pair<std::string, std::map<std::string, std::string>> parsePassSpec(const std::string& spec) {
  size_t brace = spec.find('{');
  if (brace == std::string::npos) return {trim(spec), {}};
  std::string name = trim(spec.substr(0, brace));
  if (spec.back() != '}') fail("pass spec '" + spec + "' must end with '}'");
  std::istringstream in(spec.substr(brace + 1, spec.size() - brace - 2));
  std::map<std::string, std::string> options;
  for (std::string item; in >> item;) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) fail("pass '" + name + "': option '" + item + "' must be key=value");
    options[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return {name, options};
}

const PassFactory* findFactory(const std::string& name) {
  for (const PassFactory& f : kPasses)
    if (name == f.name) return &f;
  return nullptr;
}

}  // namespace

std::vector<std::string> passNames() {
  std::vector<std::string> out;
  for (const PassFactory& f : kPasses) out.push_back(f.name);
  return out;
}

std::unique_ptr<Pass> createPass(const std::string& spec) {
  auto [name, values] = parsePassSpec(spec);
  const PassFactory* f = findFactory(name);
  if (!f) fail("unknown pass '" + name + "'");
  PassOptions options(name, std::move(values));
  std::unique_ptr<Pass> pass = f->create(options);
  options.checkAllUsed();
  return pass;
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
  for (const std::string& n : names)
    if (!findFactory(parsePassSpec(n).first)) fail("unknown pipeline or pass '" + n + "'");
  return names;
}

PassManager buildPipeline(const std::string& spec, PipelineOptions options) {
  PassManager pm(std::move(options));
  for (const std::string& name : resolvePipeline(spec)) pm.addPass(createPass(name));
  return pm;
}

}  // namespace tessera
