#pragma once
// cse: merges nodes with the same op, attributes and inputs, and small initializers with equal contents.
#include <memory>

#include "passes/pass_manager.h"

namespace tessera {

std::unique_ptr<Pass> createCsePass();

}  // namespace tessera
