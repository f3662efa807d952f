#pragma once
// Where a tensor's bytes come from. Large buffers are mapped straight from the system on 2 MiB boundaries and
// marked for transparent huge pages, so a fresh tensor is faulted in 2 MiB at a time rather than 4 KiB, comes
// zeroed for free and goes back to the system when its last owner lets go. Small ones come from the heap.
#include <cstddef>
#include <memory>

namespace tessera {

inline constexpr size_t kHugePageBytes = size_t(2) << 20;

// At least `bytes` bytes, all zero when `zeroed`; the pointer is the data, the shared owner frees it.
std::shared_ptr<std::byte> allocateHostBytes(size_t bytes, bool zeroed);
// Whether a buffer of `bytes` is mapped on a huge page boundary (Linux, `bytes` >= kHugePageBytes, not under
// AddressSanitizer, which guards heap blocks and not mappings).
bool mapsHostBytes(size_t bytes);

}  // namespace tessera
