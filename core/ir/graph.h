#pragma once
// Graph IR: a DAG of nodes (ops) connected by values (tensor edges) with static types.
// The graph owns its nodes and values; pointers stay valid until the object is removed.
// Node ids are stable (the model's node names, made unique) and are how overrides, steps and views refer
// to nodes. Value names are unique too.
// A subgraph (the body of If, Loop, Scan; held by a graph attribute) reads values of the graphs around it
// through captures: its last numCaptures() inputs stand for outer-scope values, which the node holding the
// subgraph passes as its own last inputs in the same order. So the outer graph's use lists, topological order
// and liveness see every value a body reads, and a body never points into another graph.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/attribute.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace tessera {

class Node;
class Graph;

// One use of a value: input slot `index` of `node`.
struct Use {
  Node* node;
  int index;
  friend bool operator==(const Use&, const Use&) = default;
};

class Value {
 public:
  const std::string& name() const { return name_; }
  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  void setType(TensorType t) { type_ = std::move(t); }
  // The node computing this value; null for graph inputs and initializers.
  Node* producer() const { return producer_; }
  int producerIndex() const { return producerIndex_; }
  const std::vector<Use>& uses() const { return uses_; }
  // Data of an initializer (a constant weight); null otherwise.
  const Tensor* initializer() const { return initializer_ ? &*initializer_ : nullptr; }
  bool isGraphInput() const { return isInput_; }
  bool isGraphOutput() const { return outputCount_ > 0; }

 private:
  friend class Graph;
  std::string name_;
  TensorType type_;
  Node* producer_ = nullptr;
  int producerIndex_ = -1;
  std::vector<Use> uses_;
  std::optional<Tensor> initializer_;
  bool isInput_ = false;
  int outputCount_ = 0;
  size_t slot_ = 0;  // its place in Graph::values_
};

class Node {
 public:
  const std::string& id() const { return id_; }
  const std::string& op() const { return op_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  size_t numInputs() const { return inputs_.size(); }
  size_t numOutputs() const { return outputs_.size(); }
  // Input i, or null when absent (an omitted optional input, or i past the end).
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

  const Attributes& attrs() const { return attrs_; }
  Attributes& attrs() { return attrs_; }
  const Attribute* attr(const std::string& name) const;
  bool hasAttr(const std::string& name) const { return attr(name) != nullptr; }
  int64_t attrInt(const std::string& name, int64_t fallback) const;
  double attrFloat(const std::string& name, double fallback) const;
  std::string attrString(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> attrInts(const std::string& name, std::vector<int64_t> fallback = {}) const;
  std::vector<double> attrFloats(const std::string& name, std::vector<double> fallback = {}) const;

 private:
  friend class Graph;
  std::string id_;
  std::string op_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  Attributes attrs_;
  size_t slot_ = 0;  // its place in Graph::nodes_
};

class Graph {
 public:
  explicit Graph(std::string name = "main");
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  ~Graph();

  // Deep copy (tensor bytes are shared, see Tensor). Node ids and value names are kept.
  Graph clone() const;

  const std::string& name() const { return name_; }
  void setName(std::string name) { name_ = std::move(name); }

  // --- building ---
  Value* addInput(const std::string& name, TensorType type);
  // An input standing for an outer-scope value (see above); captures come after every ordinary input.
  Value* addCapture(const std::string& name, TensorType type);
  size_t numCaptures() const { return numCaptures_; }
  // Turns graph input `v` into an initializer holding `data` (how a body is specialized to known values).
  void bindInput(Value* v, Tensor data);
  Value* addInitializer(const std::string& name, Tensor data);
  // Adds a node whose outputs get the given names (made unique) and a placeholder type; type inference
  // (ops/infer.h) or setType fills the types. A null input is an omitted optional input.
  Node* addNode(const std::string& op, const std::vector<Value*>& inputs, const std::vector<std::string>& outputNames,
                Attributes attrs = {}, const std::string& idHint = "");
  void addOutput(Value* v);
  void setOutputs(const std::vector<Value*>& outputs);

  // --- editing ---
  void setNodeInput(Node* n, size_t index, Value* v);
  // Redirects every use of `from` (and graph-output slots) to `to`.
  void replaceAllUsesWith(Value* from, Value* to);
  // Removes a node whose outputs have no uses and are not graph outputs.
  void removeNode(Node* n);
  // Removes an initializer or graph input with no uses that is not a graph output.
  void removeValue(Value* v);
  void setInitializer(Value* v, Tensor data);
  void renameNode(Node* n, const std::string& id);
  // Gives a value another name (throws if taken); passes use it to keep a replaced value's name.
  void renameValue(Value* v, const std::string& name);

  // --- queries ---
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  std::vector<Value*> initializers() const;  // in insertion order
  std::vector<Node*> nodes() const;           // in insertion order
  std::vector<Value*> values() const;
  size_t numNodes() const { return nodes_.size() - deadNodes_; }
  Node* findNode(const std::string& id) const;
  Value* findValue(const std::string& name) const;
  // Nodes ordered so that producers come before consumers (stable: ties keep insertion order).
  // Throws Error naming a node on a cycle.
  std::vector<Node*> topoOrder() const;
  // Fresh names: the hint itself if free, else hint_1, hint_2, ...
  std::string uniqueNodeId(const std::string& hint) const;
  std::string uniqueValueName(const std::string& hint) const;

 private:
  Value* newValue(const std::string& name);
  void dropUse(Value* v, Node* n, int index);
  // Removal empties a node's or value's slot (found through its slot_, not by a scan: a pass removing thousands
  // of nodes of a 50,000-node graph scanned the list for each) and compacts the lists, keeping their order,
  // once half their slots are empty. Readers skip the empty slots.
  void compact();
  std::vector<Node*> liveNodes() const;

  std::string name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  size_t deadNodes_ = 0, deadValues_ = 0;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  size_t numCaptures_ = 0;
  std::unordered_map<std::string, Node*> nodeById_;
  std::unordered_map<std::string, Value*> valueByName_;
};

}  // namespace tessera
