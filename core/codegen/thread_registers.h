#pragma once
// Internal: register buffers as one thread holds them (see thread_registers.cpp).
#include <optional>

#include "kernel/kernel_ir.h"

namespace tessera::codegen::detail {

// The kernel with the thread-indexed dimensions of its register buffers dropped; nullopt when none has any.
std::optional<kernel::Kernel> perThreadRegisters(const kernel::Kernel& k);

}  // namespace tessera::codegen::detail
