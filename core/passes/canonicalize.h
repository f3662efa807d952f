#pragma once
// canonicalize: local algebraic simplifications (x*1, x+0, Transpose∘Transpose, Reshape∘Reshape, Identity,
// inference Dropout, Flatten/Squeeze/Unsqueeze → Reshape).
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createCanonicalizePass();

}  // namespace tessera
