#pragma once
// Runs a kernel serially on the CPU in double precision: bound and parallel loops run as serial loops, async
// copies as plain copies. It is the meaning of the IR in executable form: tests compare it with the reference
// interpreter before and after schedules, and a code generator can use it as its oracle. Slow; for small
// tensors. Loads and stores out of bounds throw Error naming the kernel and buffer.
#include <vector>

#include "ir/tensor.h"
#include "kernel/kernel_ir.h"

namespace tessera::kernel {

// `inputs` in the order of the kernel's input buffers; returns one tensor per output buffer, in order.
std::vector<Tensor> interpretKernel(const Kernel& k, const std::vector<const Tensor*>& inputs);

}  // namespace tessera::kernel
