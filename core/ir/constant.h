#pragma once
// Data of a value known without running anything. The passes fold with it, fusion and the lowering read axes and
// shapes from it; one definition keeps them agreeing on what counts as a constant.
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace tessera {

// An initializer, or the tensor `value` of a Constant node without inputs; null otherwise.
const Tensor* constantValue(const Value* v);
// constantValue's data as integers; nullopt when the value is not a constant.
std::optional<std::vector<int64_t>> constantInts(const Value* v);

}  // namespace tessera
