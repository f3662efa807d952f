#pragma once
// Internal to the decompose pass: an ONNX RotaryEmbedding node (opset 23) as Gather, Slice, Mul, Sub, Add,
// Concat and Reshape, which run as generated kernels (before: a host group).
#include "ir/graph.h"

namespace tessera {

// The rotated X: each head's pairs (j, j + half), or interleaved (2j, 2j + 1), of its first rotary_embedding_dim
// features turned by the cached cos and sin of the token's position (position_ids into the caches, or the
// caches per token), the other features passed through.
Value* rotaryAsPrimitives(Graph& graph, const Node& rotary);

}  // namespace tessera
