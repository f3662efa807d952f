#include "runtime/reference/interpreter.h"

#include <set>

#include "ir/error.h"
#include "ir/random.h"
#include "ops/registry.h"

namespace tessera {

namespace {

// One node's reference semantics on its inputs (null for an omitted optional input); checks the outputs'
// count and types against the graph's.
std::vector<Tensor> evalNode(const Node& node, const std::vector<const Tensor*>& ins) {
  const OpSchema& schema = OpRegistry::instance().get(node);
  if (!schema.eval) fail("node '" + node.id() + "' (" + node.op() + "): op has no reference semantics");
  std::vector<TensorType> types;
  for (Value* out : node.outputs()) types.push_back(out->type());
  std::vector<Tensor> outs = schema.eval(node, ins, types);
  if (outs.size() < node.numOutputs())
    fail("node '" + node.id() + "' (" + node.op() + "): produced " + std::to_string(outs.size()) + " outputs");
  for (size_t i = 0; i < node.numOutputs(); ++i)
    if (outs[i].type() != types[i])
      fail("node '" + node.id() + "' (" + node.op() + "): output " + std::to_string(i) + " is " +
           outs[i].type().toString() + " but " + types[i].toString() + " was inferred");
  return outs;
}

}  // namespace

ReferenceResult runReference(const Graph& graph, const std::vector<Tensor>& inputs, const ReferenceOptions& options) {
  if (inputs.size() != graph.inputs().size())
    fail("graph '" + graph.name() + "' has " + std::to_string(graph.inputs().size()) + " inputs but " +
         std::to_string(inputs.size()) + " were given");
  std::unordered_map<const Value*, Tensor> live;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* in = graph.inputs()[i];
    if (inputs[i].type() != in->type())
      fail("input '" + in->name() + "' must be " + in->type().toString() + " but " + inputs[i].type().toString() +
           " was given");
    live[in] = inputs[i];
  }
  for (Value* v : graph.initializers()) live[v] = *v->initializer();

  std::vector<Node*> order = graph.topoOrder();
  // Remaining uses per value, so intermediates are dropped after their last reader.
  std::unordered_map<const Value*, size_t> remaining;
  for (Node* n : order)
    for (Value* in : n->inputs())
      if (in) remaining[in]++;

  for (size_t k = 0; k < order.size(); ++k) {
    const Node& node = *order[k];
    options.cancel.check();
    if (options.progress) options.progress(node, k, order.size());
    std::vector<const Tensor*> ins;
    for (Value* in : node.inputs()) {
      if (!in) {
        ins.push_back(nullptr);
        continue;
      }
      auto it = live.find(in);
      if (it == live.end()) fail("node '" + node.id() + "': input '" + in->name() + "' has no value");
      ins.push_back(&it->second);
    }
    std::vector<Tensor> outs = evalNode(node, ins);
    for (size_t i = 0; i < node.numOutputs(); ++i) live[node.output(i)] = std::move(outs[i]);
    if (!options.keepAll)
      for (Value* in : node.inputs())
        if (in && --remaining[in] == 0 && !in->isGraphOutput()) live.erase(in);
  }

  ReferenceResult result;
  for (Value* o : graph.outputs()) result.outputs.push_back(live.at(o));
  if (options.keepAll)
    for (auto& [v, t] : live) result.values[v->name()] = t;
  return result;
}

std::unordered_map<std::string, Tensor> runReferenceNodes(const Graph& graph, const std::vector<std::string>& nodeIds,
                                                          const std::unordered_map<std::string, Tensor>& values) {
  std::set<std::string> wanted(nodeIds.begin(), nodeIds.end());
  std::unordered_map<std::string, Tensor> made;
  for (Node* n : graph.topoOrder()) {
    if (!wanted.erase(n->id())) continue;
    std::vector<const Tensor*> ins;
    for (Value* in : n->inputs()) {
      const Tensor* t = nullptr;
      if (in && made.count(in->name())) t = &made.at(in->name());
      else if (in && values.count(in->name())) t = &values.at(in->name());
      else if (in) t = in->initializer();
      if (in && !t) fail("node '" + n->id() + "': input '" + in->name() + "' has no value");
      ins.push_back(t);
    }
    std::vector<Tensor> outs = evalNode(*n, ins);
    for (size_t i = 0; i < n->numOutputs(); ++i)
      if (n->output(i)) made[n->output(i)->name()] = std::move(outs[i]);
  }
  if (!wanted.empty()) fail("no node '" + *wanted.begin() + "' in graph '" + graph.name() + "'");
  return made;
}

Tensor randomTensor(const TensorType& type, uint64_t seed) {
  if (isFloat(type.dtype)) return randomUniform(type, seed, -1.0, 1.0);
  return randomUniform(type, seed, 0.0, type.dtype == DType::Bool ? 1.0 : 4.0);
}

std::vector<Tensor> randomInputs(const Graph& graph, uint64_t seed) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    out.push_back(randomTensor(graph.inputs()[i]->type(), seed * 1000003 + i));
  return out;
}

}  // namespace tessera
