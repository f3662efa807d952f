#pragma once
// decompose: rewrites composite ops (Softmax, LogSoftmax, LayerNormalization, Gelu, inference
// BatchNormalization, HardSigmoid, HardSwish, Einsum of one or two operands) into primitive ops, and a conv whose
// stride equals its window into a matmul of patches; new node ids extend the original id (sm.max).
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createDecomposePass();

}  // namespace tessera
