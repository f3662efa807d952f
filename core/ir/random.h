#pragma once
// Deterministic pseudo-random tensors (SplitMix64), identical on every platform: random test inputs,
// and the random(seed=…) initializers of hand-written .tsr samples.
#include <cstdint>

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace tessera {

// Floats uniform in [lo, hi); integers uniform in [lo, hi) after truncation; bools 0/1.
Tensor randomUniform(const TensorType& type, uint64_t seed, double lo, double hi);

// Deterministic random inputs for every graph input (floats uniform in [-1, 1), ints in [0, 4), bools): what a
// run feeds when it is given no inputs, and what data-dependent shapes are specialized on (ops/specialize.h).
// A sequence or optional input gets an empty one: its type does not say what shapes its elements would have.
std::vector<Tensor> randomInputs(const Graph& graph, uint64_t seed);
Tensor randomTensor(const TensorType& type, uint64_t seed);

}  // namespace tessera
