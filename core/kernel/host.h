#pragma once
// The machine Tessera itself runs on, as the CPU templates need it: the width of its vector registers. The
// cpu backend compiles generated C++ for this host (-march=native), so the templates size register tiles for it.
#include <cstdint>

namespace tessera::kernel {

// 64 with AVX-512F, 32 with AVX2, else 16 (SSE, NEON).
int64_t hostVectorBytes();

}  // namespace tessera::kernel
