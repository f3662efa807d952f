#pragma once
// Internal to the decompose pass: an ONNX Attention node (opset 23) as the primitives PyTorch's exporter
// writes for scaled_dot_product_attention — MatMul(q, kᵀ), the scale, the mask, Softmax, MatMul(·, v) — which
// fusion's attention pattern then makes one kernel (on the tensor cores where the types allow).
#include "ir/graph.h"

namespace tessera {

// Whether the node uses only what the decomposition says: not a key/value cache (past_key, past_value) or any
// output but Y, softcap, nonpad_kv_seqlen, a mask shorter than the keys, or inputs of different or non-float
// types. Otherwise it stays whole (a host group).
bool attentionDecomposes(const Node& attention);

// The decomposition's result (null where attentionDecomposes is false).
Value* attentionAsPrimitives(Graph& graph, const Node& attention);

}  // namespace tessera
