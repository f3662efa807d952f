#include "ir/host_memory.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
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
// Mapped one huge page longer than asked, then trimmed to start on a huge page and end at the last page the data
// needs: the kernel backs an aligned 2 MiB range with a huge page only when the whole range lies in the mapping,
// so the data's whole 2 MiB ranges get huge pages and its tail small ones (a 3 MiB tensor is 3 MiB resident, not
// 4). In this VM a ResNet-50 at batch 16 on the reference interpreter spent a third of its time in 4 KiB page
// faults.
std::shared_ptr<std::byte> mappedBytes(size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t used = (bytes + page - 1) / page * page, length = used + kHugePage;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t from = reinterpret_cast<uintptr_t>(base);
  const uintptr_t at = (from + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
  if (at > from) munmap(base, at - from);
  if (from + length > at + used) munmap(reinterpret_cast<void*>(at + used), from + length - (at + used));
  auto* data = reinterpret_cast<std::byte*>(at);
  madvise(data, used, MADV_HUGEPAGE);  // advice: ignored where transparent huge pages are off
  std::shared_ptr<void> owner(data, [used](void* p) { munmap(p, used); });
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
