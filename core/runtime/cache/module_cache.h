#pragma once
// The on-disk cache of compiled modules, one mechanism for both backends: the cubin NVRTC made (cuda) or the
// shared object the C++ compiler made (cpu), keyed by everything that decides those bytes. One file per key in
// the cache folder, named by the key's hash: a short text header (the key's digest, the image's length and
// hash), then the image. A missing entry is a miss; a foreign, truncated or corrupt one is a miss with a warning
// (the caller compiles again and the new entry replaces it), never loaded. Writes are atomic (io/atomic_file.h),
// so builds of one key on several threads or processes at once leave one whole entry.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::modcache {

struct ModuleKey {
  std::string kind;     // what the image is: "cubin", "cpu-so"
  std::string source;   // the whole translation unit
  std::string options;  // the compile options, space-separated
  std::string target;   // "sm_90"; the host compiler's target and the host CPU (-march=native)
  std::string toolkit;  // "NVRTC 13.0"; the C++ compiler's path and version
  std::string hash() const;   // 16 hex digits over every field: the file's name
  std::string check() const;  // a second digest, kept in the file: another key with the same hash is a miss
};

class ModuleCache {
 public:
  static constexpr int64_t kMaxImageBytes = int64_t(64) << 20;
  static constexpr int64_t kMaxTotalBytes = int64_t(2) << 30;

  ModuleCache() = default;  // disabled: finds nothing, stores nothing
  explicit ModuleCache(std::string dir, int64_t maxImageBytes = kMaxImageBytes);

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  std::string pathFor(const ModuleKey& key) const;

  // The image stored under `key`, or nullopt. A damaged or foreign entry gives nullopt and sets *warning
  // ("module cache entry PATH ignored: image truncated (100 of 2000 bytes)").
  std::optional<std::string> find(const ModuleKey& key, std::string* warning = nullptr) const;
  // Stores `image` under `key`; returns "" or why not (a cache that cannot be written never stops a build).
  // Images over the size limit are not stored.
  std::string store(const ModuleKey& key, std::string_view image) const;
  // Keeps the folder's entries within `maxBytes` in all: the least recently used go first (a hit refreshes an
  // entry's time), down to three quarters of the limit. Returns how many were removed; errors are ignored (an
  // entry another process removed, or is writing, is skipped). The backends call it after storing.
  size_t trim(int64_t maxBytes = kMaxTotalBytes) const;

 private:
  std::string dir_;
  int64_t maxImageBytes_ = kMaxImageBytes;
};

// <defaultCacheDir()>/modules (io/cache_dir.h: $TESSERA_CACHE_DIR relocates it); disabled when
// $TESSERA_MODULE_CACHE is "0" or "off".
ModuleCache defaultModuleCache();

}  // namespace tessera::modcache
