#include "io/cache_dir.h"

#include <cstdlib>
#include <filesystem>

namespace tessera {

namespace fs = std::filesystem;

std::string defaultCacheDir() {
  if (const char* d = std::getenv("TESSERA_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "tessera").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "tessera").string();
  return (fs::temp_directory_path() / "tessera-cache").string();
}

}  // namespace tessera
