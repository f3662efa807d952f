#pragma once
// Internal: register buffers as one thread holds them (see thread_registers.cpp).
#include <optional>
#include <string>

#include "kernel/kernel_ir.h"

namespace tessera::codegen::detail {

// The kernel with the thread-indexed dimensions of its register buffers dropped; nullopt when none has any.
std::optional<kernel::Kernel> perThreadRegisters(const kernel::Kernel& k);
// The per-lane counter (0 or 1) of an mma lane loop: the index its register dimension is left with.
std::string mmaLaneIndex(const std::string& loopVar);

}  // namespace tessera::codegen::detail
