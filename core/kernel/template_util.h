#pragma once
// Moved to kernel/templates/template_util.h; this forwarder is kept only for templates/template_conv.cpp and
// template_gemm.cpp, which are being edited on main meanwhile. Remove it once they include the new path.
#include "kernel/templates/template_util.h"
