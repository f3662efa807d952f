#pragma once
// Internal to the decompose pass: an ONNX Attention node (opset 23) as the primitives PyTorch's exporter
// writes for scaled_dot_product_attention — MatMul(q, kᵀ), the scale, the mask, Softmax, MatMul(·, v) — which
// fusion's attention pattern then makes one kernel (on the tensor cores where the types allow).
#include "ir/graph.h"

namespace tessera {

// Whether the node uses only what the decomposition says: inputs of one float type (a mask of it or bool).
// Otherwise it stays whole (a host group). A mask shorter than the keys hides the rest (a constant concatenated). A key/value cache (past_key, past_value: Concat
// before the new tokens, the causal frontier moved by the past's length), softcap (cap · tanh(s / cap)),
// nonpad_kv_seqlen (keys from each batch's length on hidden; without a past it moves the causal frontier too) and
// every output are decomposed.
bool attentionDecomposes(const Node& attention);

// The decomposition's outputs {Y, present_key, present_value, qk_matmul_output in its mode's form} (empty where
// attentionDecomposes is false).
std::vector<Value*> attentionAsPrimitives(Graph& graph, const Node& attention);

}  // namespace tessera
