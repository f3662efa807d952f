#include "passes/cse.h"

#include <algorithm>
#include <unordered_map>

#include "ops/registry.h"
#include "passes/fingerprint.h"
#include "passes/rewrite.h"

namespace tessera {
namespace {

constexpr int64_t kMaxMergedInitializer = 1 << 16;  // elements; larger weights are not compared byte-wise

// Random ops' results are not a function of their inputs and attributes alone; nor, as far as anyone here
// knows, are an unknown op's (a custom op may keep state).
bool isPure(const Node& n) { return isKnownOp(n.op()) && !opTraits(n.op()).random; }

// The inputs in an order that makes Add(a, b) and Add(b, a) the same computation. Ordered by value name, which
// is unique and, unlike an address, the same on every run.
std::vector<Value*> canonicalInputs(const Node& n) {
  std::vector<Value*> ins = n.inputs();
  if (opTraits(n.op()).commutative && std::find(ins.begin(), ins.end(), nullptr) == ins.end())
    std::sort(ins.begin(), ins.end(), [](const Value* a, const Value* b) { return a->name() < b->name(); });
  return ins;
}

uint64_t structuralKey(const Node& n) {
  uint64_t h = std::hash<std::string>{}(n.op());
  for (const auto& [name, attr] : n.attrs()) h = h * 31 + std::hash<std::string>{}(name) * 7 + attributeHash(attr);
  for (const Value* in : canonicalInputs(n)) h = h * 1000003 + std::hash<const void*>{}(in);
  return h;
}

bool sameComputation(const Node& a, const Node& b) {
  if (a.op() != b.op() || canonicalInputs(a) != canonicalInputs(b) || a.attrs() != b.attrs()) return false;
  if (a.numOutputs() != b.numOutputs()) return false;
  for (size_t i = 0; i < a.numOutputs(); ++i)
    if (a.output(i)->type() != b.output(i)->type()) return false;
  return true;
}

class CsePass : public Pass {
 public:
  std::string name() const override { return "cse"; }
  std::string summary() const override { return "merge identical nodes and identical small initializers"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"merged-nodes", "nodes replaced by an identical earlier node"},
            {"merged-initializers", "initializers replaced by an identical earlier one"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    mergeInitializers(graph, ctx);
    std::unordered_multimap<uint64_t, Node*> seen;
    for (Node* n : graph.topoOrder()) {
      if (!isPure(*n)) continue;
      uint64_t key = structuralKey(*n);
      Node* twin = nullptr;
      for (auto [it, end] = seen.equal_range(key); it != end && !twin; ++it)
        if (sameComputation(*it->second, *n)) twin = it->second;
      if (!twin) {
        seen.emplace(key, n);
        continue;
      }
      if (!canMerge(*n) || !ctx.tryRewrite()) continue;
      for (size_t i = 0; i < n->numOutputs(); ++i) graph.replaceAllUsesWith(n->output(i), twin->output(i));
      graph.removeNode(n);
      ctx.count("merged-nodes");
    }
  }

 private:
  // A duplicate that is itself a graph output keeps its node, so output names stay.
  static bool canMerge(const Node& n) {
    for (Value* out : n.outputs())
      if (out->isGraphOutput()) return false;
    return true;
  }

  static void mergeInitializers(Graph& graph, PassContext& ctx) {
    std::unordered_multimap<uint64_t, Value*> seen;
    for (Value* v : graph.initializers()) {
      const Tensor& t = *v->initializer();
      if (t.numElements() > kMaxMergedInitializer || v->isGraphOutput()) continue;
      uint64_t key = t.hash();
      Value* twin = nullptr;
      for (auto [it, end] = seen.equal_range(key); it != end && !twin; ++it)
        if (it->second->initializer()->identical(t)) twin = it->second;
      if (!twin) {
        seen.emplace(key, v);
        continue;
      }
      if (!ctx.tryRewrite()) continue;
      graph.replaceAllUsesWith(v, twin);
      graph.removeValue(v);
      ctx.count("merged-initializers");
    }
  }
};

}  // namespace

std::unique_ptr<Pass> createCsePass() { return std::make_unique<CsePass>(); }

}  // namespace tessera
