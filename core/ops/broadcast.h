#pragma once
// Numpy-style (multidirectional) broadcasting, shared by every op family.
#include <optional>
#include <vector>

#include "ir/shape.h"

namespace tessera {

// The broadcast of several shapes, or nullopt if they are incompatible.
std::optional<Shape> broadcastShapes(const std::vector<Shape>& shapes);

// For each flat index of `out`, the flat index into an input of shape `in` broadcast to `out`.
// Precomputed once; cheap enough for the reference interpreter.
std::vector<int64_t> broadcastIndexMap(const Shape& in, const Shape& out);

// Normalizes an axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

}  // namespace tessera
