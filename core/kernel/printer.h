#pragma once
// Text form of the kernel IR (the "kernel" level of the explorer). Stable across runs: everything printed
// comes from the kernel itself, in order, and numbers print in their shortest exact form.
#include <string>

#include "kernel/kernel_ir.h"

namespace tessera::kernel {

std::string printExpr(const Expr& e);
std::string printStmt(const Stmt& s, int indent = 0);
std::string printKernel(const Kernel& k);

}  // namespace tessera::kernel
