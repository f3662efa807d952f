#pragma once
// Internal to the control-flow ops (control_flow.cpp): a body graph specialized to the types (and, where
// known, the values) it is given, for inference and for running it. A body's inputs are its formal inputs
// followed by its captures (graph.h); the node holding it passes the captures as its last inputs.
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/registry.h"

namespace tessera::ops {

// The graph attribute `name` of `node`; throws naming the node when it is absent or not a graph.
const Graph& bodyAttr(const Node& node, const std::string& name);
// A body's own inputs, before its captures.
inline size_t bodyFormalInputs(const Graph& body) { return body.inputs().size() - body.numCaptures(); }

// A copy of `body` whose input i has type types[i] and, when data[i] is non-null, becomes an initializer
// holding it; then types are inferred through it. With `evaluate` (a run, every input bound), a node whose
// shapes follow from values too large to fold is specialized by evaluating the body up to it (ops/specialize.h).
// Errors read "node 'id' (Op): NAME: message".
Graph specializeBody(const Node& node, const std::string& name, const Graph& body,
                     const std::vector<TensorType>& types, const std::vector<const Tensor*>& data,
                     bool evaluate = false);

// The body's output types for the node's inference: formal inputs typed `formal`, captures typed and, where
// constant, bound from the node's last inputs. Returns nullopt when the body's shapes depend on values known
// only when it runs (a Slice at the iteration number) and `allowDeclared`: the caller then takes the types the
// model declares for the body's outputs (declaredOutputTypes).
std::optional<std::vector<TensorType>> inferBodyOutputs(const InferContext& ctx, const std::string& name,
                                                        const std::vector<TensorType>& formal);
std::vector<TensorType> declaredOutputTypes(const Graph& body);

// Runs one body many times (Loop and Scan iterations; If once). Specializes it once to the formal inputs' types
// when its shapes follow from types alone, else once per run to the run's values.
class BodyRunner {
 public:
  // `inputs`: the node's inputs; its last body.numCaptures() are the captures.
  BodyRunner(const Node& node, std::string name, const std::vector<const Tensor*>& inputs);
  std::vector<Tensor> run(const std::vector<Tensor>& formal);
  const Graph& body() const { return body_; }

 private:
  std::vector<Tensor> evalBody(const Graph& g, const std::vector<Tensor>& inputs) const;

  const Node& node_;
  std::string name_;
  const Graph& body_;
  std::vector<const Tensor*> captures_;
  std::optional<Graph> typed_;    // specialized to the formal types of the first run
  std::vector<TensorType> typedFor_;
  bool perRun_ = false;  // the body's shapes need the values: specialize every run
};

// The iterations' pieces stacked along `axis` of `type` (last piece first when `reverse`); throws naming the
// node when the count or a piece's type differs from the static type.
Tensor stackSlices(const Node& node, const std::vector<Tensor>& pieces, const TensorType& type, int64_t axis,
                   bool reverse);
// Element `index` of `x` along `axis` (the axis removed).
Tensor sliceAt(const Tensor& x, int64_t axis, int64_t index);

}  // namespace tessera::ops
