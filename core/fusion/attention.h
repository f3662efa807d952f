#pragma once
// Internal to fusion: the attention pattern, [Transpose →] MatMul → pointwise… → Softmax → [Cast →] MatMul,
// which the partitioner fuses into one kernel (the scores never written: flash attention, docs/fusion.md) when
// none of its edges is forbidden. Every value inside the pattern is read once, by the next node of it.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessera::fusion_detail {

struct AttentionMatch {
  std::vector<const Node*> nodes;  // the pattern's nodes
  const Node* scores = nullptr;    // MatMul(q, kᵀ)
  const Node* softmax = nullptr;
  const Node* context = nullptr;   // MatMul(probabilities, v)
  // Why it fused, said on each of its edges: the scores' shape and the bytes no longer written.
  std::string reason() const;
  // Whether the GPU template can run it on the tensor cores (kernel/attention_nest.h says the same of the
  // lowered kernel): q, k and v of one 16-bit type, heads of 16 to 128 in steps of 16, kᵀ a Transpose of k
  // in the pattern (so k's rows are read along the head), two query rows or more.
  bool tensorCores() const;
};

// Head sizes (q's last axis and v's) above this stay unfused: a thread keeps a q row and an output row in
// registers in the kernel's CUDA-core form.
inline constexpr int64_t kAttentionMaxHead = 128;

// Every attention pattern of the graph, each Softmax at most once.
std::vector<AttentionMatch> findAttention(const Graph& g);

}  // namespace tessera::fusion_detail
