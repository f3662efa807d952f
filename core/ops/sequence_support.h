#pragma once
// Internal to the container ops (sequence.cpp, sequence_map.cpp, optional.cpp): their shared checks and pieces.
#include "ir/tensor.h"
#include "ops/registry.h"

namespace tessera::ops {

// Input i's type; throws naming the node unless it is a sequence (not an optional one).
const TensorType& requireSequence(const InferContext& ctx, size_t i);
// Elements [start, start + length) of `x` along `axis`, the axis kept.
Tensor sliceAlong(const Tensor& x, int64_t axis, int64_t start, int64_t length);

void registerSequenceMapOp(OpRegistry& r);  // sequence_map.cpp
void registerOptionalOps(OpRegistry& r);    // optional.cpp

}  // namespace tessera::ops
