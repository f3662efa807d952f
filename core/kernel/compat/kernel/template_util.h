#pragma once
// Moved to kernel/templates/template_util.h. This forwarder lets templates/template_conv.cpp and template_gemm.cpp, which
// are being edited on main, keep including "kernel/template_util.h" unchanged (only tessera_kernel sees this folder);
// delete compat/ once they include the new path.
#include "kernel/templates/template_util.h"
