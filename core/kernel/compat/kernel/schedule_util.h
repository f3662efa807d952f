#pragma once
// Moved to kernel/schedule/schedule_util.h. This forwarder lets templates/template_conv.cpp and template_gemm.cpp, which
// are being edited on main, keep including "kernel/schedule_util.h" unchanged (only tessera_kernel sees this folder);
// delete compat/ once they include the new path.
#include "kernel/schedule/schedule_util.h"
