#include "kernel/host.h"

namespace tessera::kernel {

int64_t hostVectorBytes() {
#if defined(__x86_64__) || defined(__i386__)
  static const int64_t bytes = __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx2") ? 32 : 16;
  return bytes;
#else
  return 16;
#endif
}

}  // namespace tessera::kernel
