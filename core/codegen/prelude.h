#pragma once
// Internal: the fixed text each generated translation unit starts with (helpers named tsr_*).
#include <string>

namespace tessera::codegen::detail {

std::string cudaPrelude(bool halfTypes);
std::string cppPrelude();

}  // namespace tessera::codegen::detail
