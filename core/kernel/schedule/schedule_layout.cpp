// The swizzle primitive: a shared buffer's storage layout, the one the tensor cores' descriptors read
// (kernel_ir.h, Buffer::swizzleBytes; docs/kernel-ir.md, Swizzled tiles).
#include "kernel/schedule/schedule_util.h"

namespace tessera::kernel::sched {

void swizzle(Kernel& k, const std::string& buffer, int64_t bytes) {
  detail::Checker c(k, "swizzle", buffer);
  Buffer* b = k.findBuffer(buffer);
  c.check(1, b != nullptr, "no buffer named '" + buffer + "'");
  c.check(2, b->scope == MemScope::Shared, "'" + buffer + "' is not in shared memory");
  c.check(3, bytes == 128, "the swizzle is 128 bytes (the tensor cores' widest), not " + std::to_string(bytes));
  c.check(4, b->swizzleBytes == 0, "'" + buffer + "' is already swizzled");
  c.check(5, b->cachePad == 0, "'" + buffer + "' is padded (cache_read pad): a swizzled tile spreads its rows over the banks itself");
  c.check(6, b->shape.size() >= 2, "'" + buffer + "' has fewer than 2 dimensions");
  int64_t rowBytes = b->shape.back() * int64_t(dtypeSize(b->dtype));
  c.check(7, rowBytes > 0 && rowBytes % bytes == 0,
          "a row of '" + buffer + "' is " + std::to_string(rowBytes) + " bytes, not a multiple of " + std::to_string(bytes));
  int64_t rows = numElements(b->shape) / b->shape.back();
  c.check(8, rows % 8 == 0, "'" + buffer + "' has " + std::to_string(rows) + " rows, not a multiple of 8");
  b->swizzleBytes = bytes;
}

}  // namespace tessera::kernel::sched
