#pragma once
// FNV-1a 64 as 16 hex digits: the model's content hash and the autosave file names.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tessera {

inline std::string fnv1a64Hex(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;  // the FNV-1a 64 offset basis
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

}  // namespace tessera
