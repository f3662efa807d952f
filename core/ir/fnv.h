#pragma once
// FNV-1a 64: the one hash of the project (tensor contents, IR fingerprints, model content hashes, autosave
// names). Not cryptographic; it tells versions of the same thing apart.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tessera {

struct Fnv1a {
  uint64_t value = 14695981039346656037ull;  // the FNV-1a 64 offset basis
  void add(const void* data, size_t n) {
    auto* b = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) value = (value ^ b[i]) * 1099511628211ull;
  }
  void addU64(uint64_t v) { add(&v, sizeof v); }
};

// The hash of `bytes` as 16 hex digits.
inline std::string fnv1a64Hex(std::string_view bytes) {
  Fnv1a h;
  h.add(bytes.data(), bytes.size());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.value));
  return hex;
}

}  // namespace tessera
