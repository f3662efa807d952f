#pragma once
// A softmax over the last axis as a graph writes it: the Softmax op, or the decompose pass's expansion of it,
// ReduceMax → Sub → Exp → ReduceSum → Div (keepdims, the last axis). Fusion finds attention by it and the
// kernel lowering lowers that group by it, so both read the same shape.
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

}  // namespace tessera::ops
