#pragma once
// dce: removes nodes whose outputs reach no graph output, then initializers nobody reads.
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createDcePass();

}  // namespace tessera
