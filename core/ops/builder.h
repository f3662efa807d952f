#pragma once
// A small C++ builder for graphs, used by tests and samples: each op call adds a node and infers its type.
//
//   GraphBuilder b("mlp");
//   Value* x = b.input("x", {DType::F32, {8, 64}});
//   Value* w = b.constant("w", Tensor(DType::F32, {64, 32}));
//   Value* y = b.op("Relu", {b.op("MatMul", {x, w})});
//   b.output(y);
//   Graph g = b.finish();
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/infer.h"

namespace tessera {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "main");
  Value* input(const std::string& name, TensorType type);
  Value* constant(const std::string& name, Tensor data);
  Value* ints(const std::string& name, std::vector<int64_t> values);  // a 1-D i64 initializer
  // Adds a node with one output and returns it.
  Value* op(const std::string& op, const std::vector<Value*>& inputs, Attributes attrs = {},
            const std::string& id = "");
  // Adds a node with `numOutputs` outputs.
  std::vector<Value*> opN(const std::string& op, const std::vector<Value*>& inputs, size_t numOutputs,
                          Attributes attrs = {}, const std::string& id = "");
  void output(Value* v);
  Graph& graph() { return graph_; }
  Graph finish();  // verifies and hands over the graph

 private:
  Graph graph_;
  ConstantTable constants_;
};

}  // namespace tessera
