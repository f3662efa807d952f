#pragma once
// Internal to the decompose pass: an Einsum of one or two operands as ReduceSum, Transpose, Reshape and one
// MatMul, so that it runs as generated kernels instead of on the host.
#include "ir/graph.h"

namespace tessera {

// The decomposition's result, or null (the Einsum stays whole) for three or more operands, a label repeated
// within one term (a diagonal) or a label whose extents differ between the operands (an ellipsis broadcast).
Value* einsumAsMatMul(Graph& graph, const Node& einsum);

}  // namespace tessera
