#include "kernel/host.h"

#include <unistd.h>

namespace tessera::kernel {

int64_t hostVectorBytes() {
#if defined(__x86_64__) || defined(__i386__)
  static const int64_t bytes = __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx2") ? 32 : 16;
  return bytes;
#else
  return 16;
#endif
}

int64_t hostL2Bytes() {
  static const int64_t bytes = [] {
#ifdef _SC_LEVEL2_CACHE_SIZE
    const long told = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (told >= (64 << 10) && told <= (int64_t(64) << 20)) return int64_t(told);
#endif
    return int64_t(256) << 10;
  }();
  return bytes;
}

}  // namespace tessera::kernel
