#pragma once
// The tuning cache on disk: one JSON file per key in <dir>/tune/, written atomically (temporary file + rename,
// so concurrent writers leave one whole file), read defensively (a corrupt or foreign file is ignored with a
// warning and the kernel is tuned again).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/cache_dir.h"
#include "kernel/templates/templates.h"
#include "kernel/schedule/trace.h"

namespace tessera::tune {

struct CacheKey {
  std::string signature;     // kernelSignature(): the kernel before scheduling
  std::string templateName;
  std::string device;        // e.g. "NVIDIA H200 (sm_90)", "AMD EPYC 7B13, 2 threads"
  std::string toolkit;       // compiler identity or NVRTC and driver versions
  std::string hash() const;  // 16 hex digits over all four fields
};

struct CacheEntry {
  CacheKey key;
  kernel::TemplateParams params;
  kernel::Trace trace;       // replays on the lowered kernel
  double bestMs = -1, predictedMs = -1, modelPickMs = -1;
  int candidates = 0, measured = 0;
  std::string verifiedAgainst = "reference";  // see KernelTuning::verifiedAgainst
  nlohmann::json toJson() const;
  static CacheEntry fromJson(const nlohmann::json& j, const std::string& origin);  // throws Error naming a field
};

class TuningCache {
 public:
  explicit TuningCache(std::string dir = defaultCacheDir());
  const std::string& dir() const { return dir_; }
  std::string pathFor(const CacheKey& key) const;
  // nullopt when there is no entry; an unreadable, corrupt or foreign file also gives nullopt and sets `warning`.
  std::optional<CacheEntry> find(const CacheKey& key, std::string* warning) const;
  // Throws Error when the folder cannot be made or the file cannot be written.
  void store(const CacheEntry& entry) const;

 private:
  std::string dir_;
};

}  // namespace tessera::tune
