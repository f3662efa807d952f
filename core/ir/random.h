#pragma once
// Deterministic pseudo-random tensors (SplitMix64), identical on every platform: random test inputs,
// and the random(seed=…) initializers of hand-written .tsr samples.
#include <cstdint>

#include "ir/tensor.h"

namespace tessera {

// Floats uniform in [lo, hi); integers uniform in [lo, hi) after truncation; bools 0/1.
Tensor randomUniform(const TensorType& type, uint64_t seed, double lo, double hi);

}  // namespace tessera
