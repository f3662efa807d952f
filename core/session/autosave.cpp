// Autosave and crash recovery: one autosave per session (or unsaved model) in the user's cache folder.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "ir/error.h"
#include "ir/fnv.h"
#include "session/session.h"

namespace tessera {
namespace fs = std::filesystem;
namespace {

fs::path autosaveFolder() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return fs::path(xdg) / "tessera" / "autosave";
  const char* home = std::getenv("HOME");
  if (!home || !*home) fail("cannot find the cache folder: neither XDG_CACHE_HOME nor HOME is set");
  return fs::path(home) / ".cache" / "tessera" / "autosave";
}

// The key's absolute path, hashed, keeps autosaves of same-named files in different folders apart.
std::string keyHash(const std::string& key) {
  return fnv1a64Hex(fs::absolute(key).lexically_normal().string());
}

}  // namespace

std::string autosavePath(const std::string& key) {
  std::string stem = fs::path(key).stem().string();
  if (stem.empty()) stem = "untitled";
  return (autosaveFolder() / (stem + "-" + keyHash(key) + ".tessera")).string();
}

void writeAutosave(const Session& session, const std::string& key) {
  std::string path = autosavePath(key);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) fail(fs::path(path).parent_path().string() + ": cannot create: " + ec.message());
  saveSession(session, path);
}

std::optional<std::string> findRecoverableAutosave(const std::string& key) {
  std::string path = autosavePath(key);
  std::error_code ec;
  auto autosaved = fs::last_write_time(path, ec);
  if (ec) return std::nullopt;
  auto saved = fs::last_write_time(key, ec);
  if (ec || autosaved > saved) return path;  // the saved file is gone, or older than the autosave
  return std::nullopt;
}

void discardAutosave(const std::string& key) {
  std::error_code ec;
  fs::remove(autosavePath(key), ec);
}

}  // namespace tessera
