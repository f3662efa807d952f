#pragma once
// The machine Tessera itself runs on, as the CPU templates need it: the width of its vector registers and the size
// of a core's L2 cache. The cpu backend compiles generated C++ for this host (-march=native), so the templates
// size register tiles and the blocks they copy for it.
#include <cstdint>

namespace tessera::kernel {

// 64 with AVX-512F, 32 with AVX2, else 16 (SSE, NEON).
int64_t hostVectorBytes();

// A core's L2 cache in bytes, as the C library reads it from the CPU (sysconf); 256 KiB where it says nothing
// (the smallest L2 of the x86 cores of the last decade). The build machine's: 1 MiB.
int64_t hostL2Bytes();

}  // namespace tessera::kernel
