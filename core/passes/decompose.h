#pragma once
// decompose: rewrites composite ops (Softmax, LogSoftmax, LayerNormalization, Gelu, inference
// BatchNormalization, HardSigmoid, HardSwish) into primitive ops; new node ids extend the original id (sm.max).
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createDecomposePass();

}  // namespace tessera
