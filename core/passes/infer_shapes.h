#pragma once
// infer-shapes: re-runs type inference with constant propagation (ops/infer.h) over the whole graph.
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createInferShapesPass();

}  // namespace tessera
