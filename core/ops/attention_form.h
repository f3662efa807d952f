#pragma once
// The parts of attention as graphs write them. Fusion finds attention by these and the kernel lowering lowers that
// group by them, so both read the same shapes:
// - a softmax over the last axis: the Softmax op, or the decompose pass's expansion of it,
//   ReduceMax → Sub → Exp → ReduceSum → Div (keepdims, the last axis);
// - kᵀ: a Transpose that swaps the last two axes and keeps the others.
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace tessera::ops {

struct SoftmaxForm {
  std::vector<const Node*> nodes;  // in topological order
  const Value* input = nullptr;    // the scores x
  const Value* output = nullptr;   // softmax(x)
};

// The softmax whose last node is `last` (the Softmax, or the expansion's Div), over x's last axis; its inner
// values read only inside it. Null for anything else.
std::optional<SoftmaxForm> lastAxisSoftmax(const Node& last);

// A Transpose giving kᵀ from k's rows: its output's second-to-last axis is its input's last (the head), so kᵀ's
// column j is a row of the input, whatever the perm does with the other axes (k.transpose(-2, -1) alone, or
// merged with the heads' transpose(1, 2) into one perm [0, 2, 3, 1]). Rank 2 or more.
bool transposesKeyRows(const Node& transpose);

// The limits of the attention kernel's tensor-core form, which fusion's estimate (AttentionMatch::tensorCores)
// and the template (kernel/attention_nest.h) both ask: q, k and v of one 16-bit type, each head 16 to 128
// features in steps of 16 (the mma's depth).
inline bool tensorCoreAttentionType(DType t) { return t == DType::BF16 || t == DType::F16; }
inline bool tensorCoreAttentionHead(int64_t features) { return features >= 16 && features <= 128 && features % 16 == 0; }

}  // namespace tessera::ops
