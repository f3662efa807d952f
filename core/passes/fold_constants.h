#pragma once
// fold-constants: evaluates nodes whose inputs are all constants and replaces them with initializers, when the
// result is small (weights are not duplicated: a large result stays an op).
#include <cstdint>
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

inline constexpr int64_t kDefaultFoldLimit = int64_t(1) << 16;  // elements
std::unique_ptr<Pass> createFoldConstantsPass(int64_t maxElements = kDefaultFoldLimit);

}  // namespace tessera
