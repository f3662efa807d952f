#include "ops/specialize.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ops/eval_graph.h"
#include "ops/infer.h"
#include "ops/registry.h"
#include "ops/stats.h"

namespace tessera {

namespace {

std::string nodeText(const Node& n) { return "node '" + n.id() + "' (" + n.op() + ")"; }

// What specializing may cost: it runs while a model opens, so a small hostile file must not make it take
// gigabytes or minutes (the graph's inputs may declare any size, and nodes may make large values from small ones).
constexpr int64_t kMaxSampleBytes = int64_t(1) << 30;  // inputs and every value kept
constexpr int64_t kMaxSampleFlops = int64_t(1) << 34;  // summed over the nodes run (ssdlite320: ~1.5e9)

// Values of the graph computed on the sample inputs, each node evaluated once however many nodes need it.
class SampleValues {
 public:
  // Asks `sampleInputs` for the inputs only once their declared sizes are within the budget.
  SampleValues(const Graph& g, const std::function<std::vector<Tensor>()>& sampleInputs) {
    for (const Value* in : g.inputs()) spend(in->type().bytes(), 0, "sample input '" + in->name() + "'");
    std::vector<Tensor> inputs = sampleInputs();
    if (inputs.size() != g.inputs().size())
      fail("specializing data-dependent shapes needs " + std::to_string(g.inputs().size()) + " sample inputs, got " +
           std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].type() != g.inputs()[i]->type())
        fail("sample input '" + g.inputs()[i]->name() + "' is " + inputs[i].type().toString() + " but the model declares " +
             g.inputs()[i]->type().toString());
      known_[g.inputs()[i]] = inputs[i];
    }
  }

  // The value of `v`, evaluating the nodes it depends on that were not evaluated yet (their types are inferred:
  // they come before the node being specialized in topological order).
  const Tensor& of(const Value* v) {
    if (const Tensor* t = v->initializer()) return *t;
    if (auto it = known_.find(v); it != known_.end()) return it->second;
    std::vector<const Node*> needed;
    collect(v->producer(), needed);
    for (const Node* n : needed) {
      if (!evalCostBounded(*n))  // a Loop's trip count is the file's to choose: never run at compile time
        fail(nodeText(*n) + " would have to run at compile time to find the shape of '" + v->name() +
             "', and its cost is not bounded by its operands");
      int64_t bytes = 0;
      for (const Value* out : n->outputs()) bytes += out->type().bytes();
      spend(bytes, nodeFlops(*n), nodeText(*n));
      std::vector<const Tensor*> ins;
      for (const Value* in : n->inputs()) ins.push_back(in ? &of(in) : nullptr);
      std::vector<Tensor> outs = evalNode(*n, ins);
      for (size_t i = 0; i < n->numOutputs(); ++i) known_[n->output(i)] = std::move(outs[i]);
    }
    auto it = known_.find(v);
    if (it == known_.end()) fail("value '" + v->name() + "' has no value on the sample inputs");
    return it->second;
  }

 private:
  // The producers `n` needs that are not evaluated yet, `n` last, in an order where each follows its inputs'.
  void collect(const Node* n, std::vector<const Node*>& order) {
    if (!n) return;
    std::vector<std::pair<const Node*, size_t>> stack{{n, 0}};  // iterative: graphs are deep
    std::unordered_set<const Node*>& seen = visited_;
    if (!seen.insert(n).second) return;  // evaluated already
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->numInputs()) {
        const Value* in = node->input(next++);
        if (!in || in->initializer() || known_.count(in)) continue;
        const Node* p = in->producer();
        if (p && seen.insert(p).second) stack.push_back({p, 0});
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }

  void spend(int64_t bytes, int64_t flops, const std::string& what) {
    bytes_ += bytes;
    flops_ += flops;
    if (bytes_ > kMaxSampleBytes || flops_ > kMaxSampleFlops)
      fail("specializing a data-dependent shape would run " + what + " past " + std::to_string(kMaxSampleBytes >> 20) +
           " MiB of values or " + std::to_string(kMaxSampleFlops) + " FLOPs at compile time");
  }

  std::unordered_map<const Value*, Tensor> known_;
  std::unordered_set<const Node*> visited_;
  int64_t bytes_ = 0, flops_ = 0;
};

// The node's outputs with its inputs' values known, their types inferred from those values; `typesOnly` lets an
// If's outputs be the types' only source. Inference folds only small values, so a branch of an If whose shapes
// follow from large ones (a NonMaxSuppression over thousands of boxes) is run instead.
std::vector<Tensor> outputsOnValues(const Node& node, const ConstantTable& values, std::vector<TensorType>& types) {
  std::vector<const Tensor*> ins;
  for (const Value* in : node.inputs()) ins.push_back(in ? values.find(in) : nullptr);
  const OpSchema& schema = OpRegistry::instance().get(node);
  try {
    types = inferNode(node, values, true);
  } catch (const NeedsValuesError&) {
    if (node.op() != "If") throw;  // (a Loop's cost is unbounded; Scan's inference needs its types)
    std::vector<Tensor> outs = schema.eval(node, ins, {});
    types.clear();
    for (const Tensor& t : outs) types.push_back(t.type());
    return outs;
  }
  return {};
}

std::vector<TensorType> typesOnValues(const Node& node, const ConstantTable& values) {
  std::vector<TensorType> types;
  outputsOnValues(node, values, types);
  return types;
}

}  // namespace

std::vector<Tensor> evalOnValues(const Node& node, const std::vector<const Tensor*>& ins) {
  ConstantTable values;
  for (size_t i = 0; i < ins.size() && i < node.numInputs(); ++i)
    if (ins[i] && node.input(i)) values.set(node.input(i), *ins[i]);
  std::vector<TensorType> types;
  std::vector<Tensor> outs = outputsOnValues(node, values, types);
  return outs.empty() && !types.empty() ? OpRegistry::instance().get(node).eval(node, ins, types) : outs;
}

std::optional<std::vector<TensorType>> specializedTypes(const Node& node) {
  const Attribute* a = node.attr(kSpecializedTypesAttr);
  if (!a) return std::nullopt;
  if (a->kind() != AttrKind::Strings || a->strings().size() != node.numOutputs())
    fail(nodeText(node) + ": attribute '" + std::string(kSpecializedTypesAttr) + "' must hold one type per output (" +
         std::to_string(node.numOutputs()) + ")");
  std::vector<TensorType> types;
  for (const std::string& text : a->strings()) {
    std::optional<TensorType> t = TensorType::fromString(text);
    if (!t) fail(nodeText(node) + ": attribute '" + std::string(kSpecializedTypesAttr) + "' holds '" + text +
                 "', which is not a type such as i64[2,37]");
    numElements(t->shape);  // rejects an extent product past int64
    types.push_back(*t);
  }
  return types;
}

bool isSpecialized(const Node& node) { return node.hasAttr(kSpecializedTypesAttr); }

SpecializeResult inferSpecializing(Graph& graph, const std::function<std::vector<Tensor>()>& sampleInputs) {
  SpecializeResult result;
  std::optional<SampleValues> samples;
  for (;;) {
    try {
      inferTypes(graph);
      return result;
    } catch (const NeedsValuesError& e) {
      Node* node = graph.findNode(e.nodeId());
      if (!node || isSpecialized(*node)) throw;
      if (!samples) samples.emplace(graph, sampleInputs);
      ConstantTable values;
      for (const Value* in : node->inputs())
        if (in) values.set(in, samples->of(in));
      std::vector<TensorType> types;
      try {
        types = typesOnValues(*node, values);
      } catch (const Error& inner) {
        fail(std::string(e.what()) + "; with its inputs' values on the sample inputs: " + inner.what());
      }
      std::vector<std::string> texts;
      for (const TensorType& t : types) texts.push_back(t.toString());
      node->attrs()[kSpecializedTypesAttr] = Attribute(texts);
      result.nodes.push_back(node->id());
    }
  }
}

std::string specializedMismatch(const Node& node, size_t output, const TensorType& got) {
  std::optional<std::vector<TensorType>> kept = specializedTypes(node);
  std::string was = kept && output < kept->size() ? (*kept)[output].toString() : "?";
  return nodeText(node) + ": output " + std::to_string(output) + " is " + got.toString() +
         " on these values, but its shape depends on input values and the model was specialized to " + was +
         " on the reference's values for the inputs it was opened with: other inputs give other extents (open the"
         " model with these), and so can the same inputs where a value sits at a threshold (a score, an overlap)"
         " that a kernel or a pass rounds to the other side (the reference backend computes as the specialization"
         " did)";
}

}  // namespace tessera
