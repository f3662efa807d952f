#include "fusion/compile.h"

#include <algorithm>

#include "ir/error.h"
#include "passes/pipelines.h"

namespace tessera {
namespace {

std::vector<OverrideStatus> disablePasses(const std::vector<std::string>& names, const CompileOptions& options,
                                          std::set<std::string>& disabled) {
  std::vector<OverrideStatus> out;
  for (const Override& o : options.overrides) {
    if (o.kind != OverrideKind::DisablePass) continue;
    OverrideStatus st;
    st.override = o;
    st.status = OverrideState::Applied;
    if (std::find(names.begin(), names.end(), o.pass) == names.end()) {
      st.status = OverrideState::Stale;
      st.detail = "no pass '" + o.pass + "' in the pipeline";
    } else {
      disabled.insert(o.pass);
      st.detail = "pass '" + o.pass + "' skipped";
    }
    out.push_back(st);
  }
  return out;
}

// The overrides in the order given, from the fusion statuses and the disable-pass statuses.
std::vector<OverrideStatus> inOrder(const CompileOptions& options, const std::vector<OverrideStatus>& passes,
                                    const FusionResult* fusion) {
  std::vector<OverrideStatus> out;
  size_t p = 0, f = 0;
  for (const Override& o : options.overrides) {
    if (o.kind == OverrideKind::DisablePass) {
      out.push_back(passes[p++]);
    } else if (fusion && f < fusion->overrides.size()) {
      out.push_back(fusion->overrides[f++]);
    } else {
      out.push_back({o, OverrideState::Stale, "", "fusion did not run"});
    }
  }
  return out;
}

// fold-batchnorm and its kind remove a node and rewrite the producer it read: the producer absorbed it.
std::map<std::string, std::vector<std::string>> absorbedNodes(const StepRecorder& rec) {
  std::map<std::string, std::vector<std::string>> out;
  std::shared_ptr<const Graph> before = rec.input();
  for (const Step& s : rec.steps()) {
    for (const std::string& r : s.removed) {
      const Node* n = before ? before->findNode(r) : nullptr;
      if (!n) continue;
      for (const Value* v : n->inputs()) {
        if (!v || !v->producer()) continue;
        const std::string& p = v->producer()->id();
        if (!std::binary_search(s.rewritten.begin(), s.rewritten.end(), p)) continue;
        auto& list = out[p];
        list.push_back(r);
        if (auto it = out.find(r); it != out.end()) list.insert(list.end(), it->second.begin(), it->second.end());
        break;
      }
    }
    if (s.graph) before = s.graph;
  }
  return out;
}

}  // namespace

CompileResult compileGraph(Graph graph, const CompileOptions& options) {
  std::vector<std::string> names = resolvePipeline(options.pipeline);
  names.push_back("fuse");
  PipelineOptions po;
  po.stopAfter = options.stopAfter;
  po.disabled = options.disabled;
  po.fuel = options.fuel;
  po.cancel = options.cancel;
  std::vector<OverrideStatus> passStatuses = disablePasses(names, options, po.disabled);
  PassManager pm(po);
  auto plan = std::make_shared<MemoryPlan>();
  auto fusion = std::make_shared<FusionResult>();
  bool planned = false, fused = false;
  for (const std::string& n : names) {
    if (n == "plan-memory") pm.addPass(createPlanMemoryPass(plan));
    else if (n == "fuse") pm.addPass(createFusionPass(fusion, options.fusion, options.overrides));
    else pm.addPass(createPass(n));
  }
  auto recorder = std::make_shared<StepRecorder>();
  pm.addInstrumentation(recorder);
  CompileResult result;
  result.input = std::make_shared<const Graph>(graph.clone());
  options.cancel.check();  // the clone of a large graph takes as long as a pass
  try {
    pm.run(graph);
  } catch (const Cancelled&) {
    throw;
  } catch (const Error& e) {
    result.error = e.what();
  }
  options.cancel.check();
  for (const Step& s : recorder->steps()) {
    planned |= s.pass == "plan-memory" && !s.failed;
    fused |= s.pass == "fuse" && !s.failed;
  }
  result.steps = recorder->steps();
  result.graph = std::make_shared<const Graph>(graph.clone());
  if (fused) result.fusion = fusion;
  result.memory = planned ? *plan : planMemory(graph);
  result.overrides = inOrder(options, passStatuses, result.fusion.get());
  result.absorbed = absorbedNodes(*recorder);
  return result;
}

}  // namespace tessera
