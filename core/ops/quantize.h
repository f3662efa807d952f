#pragma once
// What QuantizeLinear's kernels share with its reference semantics (quantize.cpp).
#include <optional>
#include <utility>

#include "ir/dtype.h"

namespace tessera::ops {

// The range an integer type QuantizeLinear quantizes to saturates at, as doubles; nullopt for the float8 and
// float4 types (and any type QuantizeLinear does not make).
std::optional<std::pair<double, double>> quantizedIntegerRange(DType t);

}  // namespace tessera::ops
