#include "ops/eval_graph.h"

#include "ir/error.h"
#include "ops/registry.h"
#include "ops/specialize.h"

namespace tessera {

namespace {

// Whether the graph's types describe this evaluation: the node's outputs do not follow its data (it was not
// specialized) and its inputs have the types inference gave them (no node before it gave other extents).
bool graphTypesHold(const Node& node, const std::vector<const Tensor*>& ins) {
  if (isSpecialized(node)) return false;
  for (size_t i = 0; i < ins.size() && i < node.numInputs(); ++i)
    if (ins[i] && node.input(i) && node.input(i)->type().isTensor() && !ins[i]->holdsObjects() &&
        ins[i]->type() != node.input(i)->type())
      return false;
  return true;
}

}  // namespace

std::vector<Tensor> evalNode(const Node& node, const std::vector<const Tensor*>& ins) {
  const OpSchema* known = OpRegistry::instance().find(node.op());
  if (!known || !known->eval) fail(noSemanticsMessage(node));
  const OpSchema& schema = *known;
  const bool asInferred = graphTypesHold(node, ins);
  std::vector<TensorType> types;
  for (Value* out : node.outputs()) types.push_back(out->type());
  std::vector<Tensor> outs = asInferred ? schema.eval(node, ins, types) : evalOnValues(node, ins);
  if (outs.size() < node.numOutputs())
    fail("node '" + node.id() + "' (" + node.op() + "): produced " + std::to_string(outs.size()) + " outputs");
  for (size_t i = 0; i < node.numOutputs() && asInferred; ++i)
    if (outs[i].type() != types[i])
      fail("node '" + node.id() + "' (" + node.op() + "): output " + std::to_string(i) + " is " +
           outs[i].type().toString() + " but " + types[i].toString() + " was inferred");
  return outs;
}

namespace {

// The cancellation token of the run in progress on this thread: control-flow ops run their bodies through
// evalGraph without a token of their own, and a cancelled run then also stops inside a long loop.
thread_local CancelToken tRunCancel;

class RunCancelScope {
 public:
  explicit RunCancelScope(const CancelToken& token) : saved_(tRunCancel) {
    if (token.flag()) tRunCancel = token;
  }
  ~RunCancelScope() { tRunCancel = saved_; }
  RunCancelScope(const RunCancelScope&) = delete;
  RunCancelScope& operator=(const RunCancelScope&) = delete;

 private:
  CancelToken saved_;
};

using Live = std::unordered_map<const Value*, Tensor>;

Live bindInputs(const Graph& graph, const std::vector<Tensor>& inputs) {
  if (inputs.size() != graph.inputs().size())
    fail("graph '" + graph.name() + "' has " + std::to_string(graph.inputs().size()) + " inputs but " +
         std::to_string(inputs.size()) + " were given");
  Live live;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* in = graph.inputs()[i];
    if (inputs[i].type() != in->type())
      fail("input '" + in->name() + "' must be " + in->type().toString() + " but " + inputs[i].type().toString() +
           " was given");
    live[in] = inputs[i];
  }
  for (Value* v : graph.initializers()) live[v] = *v->initializer();
  return live;
}

std::vector<const Tensor*> nodeInputs(const Node& node, const Live& live) {
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
  return ins;
}

}  // namespace

std::vector<Tensor> evalNode(const Node& node, const std::vector<const Tensor*>& inputs, const CancelToken& cancel) {
  RunCancelScope scope(cancel);
  return evalNode(node, inputs);
}

GraphEvalResult evalGraph(const Graph& graph, const std::vector<Tensor>& inputs, const GraphEvalOptions& options) {
  RunCancelScope scope(options.cancel);
  const CancelToken cancel = tRunCancel;
  Live live = bindInputs(graph, inputs);
  std::vector<Node*> order = graph.topoOrder();
  // Remaining uses per value, so intermediates are dropped after their last reader.
  std::unordered_map<const Value*, size_t> remaining;
  for (Node* n : order)
    for (Value* in : n->inputs())
      if (in) remaining[in]++;

  GraphEvalResult result;
  for (size_t k = 0; k < order.size(); ++k) {
    const Node& node = *order[k];
    cancel.check();
    if (options.stopWithoutSemantics)
      if (const Node* missing = firstWithoutSemantics(node)) {
        result.stopped = noSemanticsMessage(*missing);
        result.stoppedAt = node.id();
        break;
      }
    if (options.progress) options.progress(node, k, order.size());
    std::vector<Tensor> outs = evalNode(node, nodeInputs(node, live));
    for (size_t i = 0; i < node.numOutputs(); ++i) live[node.output(i)] = std::move(outs[i]);
    if (!options.keepAll)
      for (Value* in : node.inputs())
        if (in && --remaining[in] == 0 && !in->isGraphOutput()) live.erase(in);
  }

  if (result.stopped.empty())
    for (Value* o : graph.outputs()) result.outputs.push_back(live.at(o));
  if (options.keepAll)
    for (auto& [v, t] : live) result.values[v->name()] = t;
  return result;
}

}  // namespace tessera
