#pragma once
// layout-nhwc: makes data flow NHWC between convolutions and pools (each Conv/Pool is wrapped in Transposes
// that cancel between neighbours); see docs/passes.md.
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createLayoutNhwcPass();

}  // namespace tessera
