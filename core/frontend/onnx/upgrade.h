#pragma once
// Internal to the ONNX frontend: rewrites older operator forms into the latest ONNX form, the one the op
// registry implements. Operands that older opsets passed as attributes become small i64 (or typed scalar)
// initializers; obsolete attributes are dropped.
#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace tessera::onnxio {

// Upgrades one node whose inputs are wired. `input0` is the inferred type of input 0 when known (the
// importer's second pass), else null. Returns true when the upgrade needs that type to finish (Clip and Pad
// bounds take the input's dtype; Softmax before opset 13 needs the rank).
bool upgradeNode(Graph& graph, Node* node, int64_t opset, const TensorType* input0);

// Softmax, LogSoftmax and Hardmax before opset 13 flatten their input to 2-D at `axis` (default 1). When the
// input's rank makes that differ from normalizing over the last axis, returns the axis in [0, rank] at which
// to flatten; the importer then emits Flatten → op(axis=-1) → Reshape(Shape(x)).
bool isCoercingSoftmax(const std::string& op, int64_t opset);
std::optional<int64_t> coercedSoftmaxAxis(const std::string& nodeId, const std::string& op, const Attributes& attrs,
                                          const TensorType& input0);

}  // namespace tessera::onnxio
