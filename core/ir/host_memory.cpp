#include "ir/host_memory.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tessera {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMapLargeBuffers = false;  // AddressSanitizer guards heap blocks, not mappings
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMapLargeBuffers = false;
#else
constexpr bool kMapLargeBuffers = true;
#endif
#else
constexpr bool kMapLargeBuffers = true;
#endif

constexpr size_t kHugePage = kHugePageBytes;

std::shared_ptr<std::byte> heapBytes(size_t bytes, bool zeroed) {
  std::shared_ptr<std::byte[]> owner(zeroed ? new std::byte[bytes]() : new std::byte[bytes]);
  return std::shared_ptr<std::byte>(owner, owner.get());
}

#if defined(__linux__)
// The mapping is one huge page longer than asked so that the data can start on a huge page: the kernel backs an
// aligned 2 MiB range with one huge page only when the whole range lies in the mapping. In this VM a ResNet-50
// at batch 16 on the reference interpreter spent a third of its time in 4 KiB page faults.
std::shared_ptr<std::byte> mappedBytes(size_t bytes) {
  const size_t length = bytes + kHugePage;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t at = (reinterpret_cast<uintptr_t>(base) + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  auto* data = reinterpret_cast<std::byte*>(at);
  madvise(data, (bytes + kHugePage - 1) & ~(kHugePage - 1), MADV_HUGEPAGE);  // advice: ignored where THP is off
  std::shared_ptr<void> owner(base, [length](void* p) { munmap(p, length); });
  return std::shared_ptr<std::byte>(owner, data);
}
#endif

}  // namespace

bool mapsHostBytes(size_t bytes) {
#if defined(__linux__)
  return kMapLargeBuffers && bytes >= kHugePage;
#else
  (void)bytes;
  return false;
#endif
}

std::shared_ptr<std::byte> allocateHostBytes(size_t bytes, bool zeroed) {
#if defined(__linux__)
  if (mapsHostBytes(bytes)) return mappedBytes(bytes);  // anonymous pages are zero
#endif
  return heapBytes(bytes, zeroed);
}

}  // namespace tessera
