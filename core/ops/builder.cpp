#include "ops/builder.h"

#include "ops/verify.h"

namespace tessera {

GraphBuilder::GraphBuilder(std::string name) : graph_(std::move(name)) {}

Value* GraphBuilder::input(const std::string& name, TensorType type) { return graph_.addInput(name, std::move(type)); }

Value* GraphBuilder::constant(const std::string& name, Tensor data) {
  return graph_.addInitializer(graph_.uniqueValueName(name), std::move(data));
}

Value* GraphBuilder::ints(const std::string& name, std::vector<int64_t> values) {
  Shape shape{int64_t(values.size())};
  return constant(name, Tensor::fromInts(DType::I64, shape, values));
}

Value* GraphBuilder::op(const std::string& op, const std::vector<Value*>& inputs, Attributes attrs,
                        const std::string& id) {
  return opN(op, inputs, 1, std::move(attrs), id).front();
}

std::vector<Value*> GraphBuilder::opN(const std::string& op, const std::vector<Value*>& inputs, size_t numOutputs,
                                      Attributes attrs, const std::string& id) {
  std::string nodeId = graph_.uniqueNodeId(id.empty() ? op : id);
  std::vector<std::string> names;
  for (size_t i = 0; i < numOutputs; ++i) names.push_back(numOutputs == 1 ? nodeId : nodeId + "_" + std::to_string(i));
  Node* n = graph_.addNode(op, inputs, names, std::move(attrs), nodeId);
  std::vector<TensorType> types = inferNode(*n, constants_);
  for (size_t i = 0; i < numOutputs; ++i) n->output(i)->setType(types[i]);
  propagateConstants(*n, constants_);
  return n->outputs();
}

void GraphBuilder::output(Value* v) { graph_.addOutput(v); }

Graph GraphBuilder::finish() {
  verifyOrThrow(graph_);
  return std::move(graph_);
}

}  // namespace tessera
