#pragma once
// fold-batchnorm: folds an inference BatchNormalization into the constant weights and bias of the Conv, Gemm
// or MatMul before it.
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createFoldBatchNormPass();

}  // namespace tessera
