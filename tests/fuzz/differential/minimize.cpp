#include "minimize.h"

#include <optional>
#include <string>
#include <vector>

#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "ops/infer.h"
#include "ops/verify.h"

namespace tessera::fuzz {
namespace {

// One candidate step: its edit of a copy of the graph (false: it does not apply).
using GraphEdit = std::function<bool(Graph&)>;

void removeDeadCode(Graph& g) {
  for (bool changed = true; changed;) {
    changed = false;
    for (Node* n : g.nodes()) {
      bool used = false;
      for (Value* o : n->outputs()) used = used || !o->uses().empty() || o->isGraphOutput();
      if (!used) g.removeNode(n), changed = true;
    }
  }
  std::vector<Value*> unused;
  for (Value* v : g.values())
    if (!v->producer() && v->uses().empty() && !v->isGraphOutput()) unused.push_back(v);
  for (Value* v : unused) g.removeValue(v);
}

// The case's graph after `edit`, printed, or nothing when the edit does not apply or leaves an invalid graph.
std::optional<std::string> edited(const std::string& tsr, const GraphEdit& edit) {
  try {
    Graph g = parseTsr(tsr, "case.tsr");
    if (!edit(g)) return std::nullopt;
    removeDeadCode(g);
    if (g.outputs().empty()) return std::nullopt;
    inferTypes(g);
    verifyOrThrow(g);
    std::string text = printTsr(g);
    parseTsr(text, "edited.tsr");  // the declared types must agree with inference
    return text;
  } catch (const Error&) {
    return std::nullopt;
  }
}

GraphEdit dropOutput(size_t i) {
  return [i](Graph& g) {
    if (g.outputs().size() < 2 || i >= g.outputs().size()) return false;
    std::vector<Value*> outs = g.outputs();
    outs.erase(outs.begin() + long(i));
    g.setOutputs(outs);
    return true;
  };
}

// The node's outputs become graph inputs of the same types.
GraphEdit cutNode(std::string id) {
  return [id](Graph& g) {
    Node* n = g.findNode(id);
    if (!n) return false;
    for (Value* o : n->outputs())
      g.replaceAllUsesWith(o, g.addInput(g.uniqueValueName(o->name() + "_cut"), o->type()));
    g.removeNode(n);
    return true;
  };
}

// The node's output replaced by its first input of the same type.
GraphEdit bypassNode(std::string id) {
  return [id](Graph& g) {
    Node* n = g.findNode(id);
    if (!n || n->numOutputs() != 1) return false;
    for (Value* in : n->inputs())
      if (in && in->type() == n->output(0)->type()) {
        g.replaceAllUsesWith(n->output(0), in);
        return true;
      }
    return false;
  };
}

// Graph input `i`'s dim `d` set to `to(old)`.
GraphEdit shrinkDim(size_t i, size_t d, int64_t (*to)(int64_t)) {
  return [=](Graph& g) {
    if (i >= g.inputs().size() || d >= g.inputs()[i]->shape().size()) return false;
    Value* v = g.inputs()[i];
    if (v->initializer()) return false;
    TensorType t = v->type();
    int64_t smaller = to(t.shape[d]);
    if (smaller >= t.shape[d]) return false;
    t.shape[d] = smaller;
    v->setType(t);
    return true;
  };
}

std::vector<GraphEdit> graphEdits(const std::string& tsr) {
  Graph g = parseTsr(tsr, "case.tsr");
  std::vector<GraphEdit> edits;
  for (size_t i = 0; i < g.outputs().size(); ++i) edits.push_back(dropOutput(i));
  std::vector<Node*> nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) edits.push_back(cutNode((*it)->id()));
  for (Node* n : nodes) edits.push_back(bypassNode(n->id()));
  for (size_t i = 0; i < g.inputs().size(); ++i)
    for (size_t d = 0; d < g.inputs()[i]->shape().size(); ++d) {
      edits.push_back(shrinkDim(i, d, [](int64_t) { return int64_t(1); }));
      edits.push_back(shrinkDim(i, d, [](int64_t x) { return x / 2; }));
    }
  return edits;
}

// Candidates that drop one override or one parameter entry.
std::vector<FuzzCase> caseEdits(const FuzzCase& c) {
  std::vector<FuzzCase> out;
  for (size_t i = 0; i < c.overrides.size(); ++i) {
    FuzzCase e = c;
    e.overrides.erase(e.overrides.begin() + long(i));
    out.push_back(e);
  }
  for (const auto& [node, params] : c.params) {
    FuzzCase e = c;
    e.params.erase(node);
    out.push_back(e);
  }
  return out;
}

}  // namespace

MinimizeResult minimizeCase(const FuzzCase& failing, const StillFails& stillFails, int maxEvaluations) {
  MinimizeResult r{failing};
  auto tryCase = [&](const FuzzCase& candidate) {
    if (r.evaluations >= maxEvaluations) return false;
    ++r.evaluations;
    if (!stillFails(candidate)) return false;
    r.smallest = candidate;
    ++r.kept;
    return true;
  };
  for (bool progress = true; progress && r.evaluations < maxEvaluations;) {
    progress = false;
    for (const FuzzCase& e : caseEdits(r.smallest))
      if (tryCase(e)) { progress = true; break; }
    if (progress) continue;
    for (const GraphEdit& edit : graphEdits(r.smallest.tsr)) {
      std::optional<std::string> text = edited(r.smallest.tsr, edit);
      if (!text) continue;
      FuzzCase e = r.smallest;
      e.tsr = *text;
      if (tryCase(e)) { progress = true; break; }
    }
  }
  return r;
}

}  // namespace tessera::fuzz
