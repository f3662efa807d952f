#include "runtime/cache/module_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "io/atomic_file.h"
#include "io/cache_dir.h"
#include "ir/fnv.h"

namespace tessera::modcache {

namespace fs = std::filesystem;

namespace {

constexpr const char* kMagic = "tessera-module 1";
constexpr int64_t kMaxHeaderBytes = 4096;

std::string hex(uint64_t v) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(v));
  return out;
}

// Each field with its length, so ("ab", "c") and ("a", "bc") differ.
void addField(Fnv1a& h, const std::string& field) {
  h.addU64(field.size());
  h.add(field.data(), field.size());
}

// A header line for people reading the folder; never trusted (the digests are).
std::string oneLine(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s.substr(0, 300);
}

struct Header {
  std::string magic, key, check, imageHash;
  int64_t imageBytes = -1;
};

// The lines before the blank line, by name; unknown lines are skipped.
Header parseHeader(const std::string& text) {
  std::istringstream in(text);
  Header h;
  std::getline(in, h.magic);
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string name;
    f >> name;
    if (name == "key") f >> h.key;
    else if (name == "check") f >> h.check;
    else if (name == "image") f >> h.imageBytes >> h.imageHash;
  }
  return h;
}

// Why `entry` must not be loaded for `key` ("" when it may); `image` is its image.
std::string damage(const std::string& entry, const ModuleKey& key, std::string& image) {
  size_t end = entry.find("\n\n");
  if (end == std::string::npos || end > size_t(kMaxHeaderBytes)) return "no header";
  Header h = parseHeader(entry.substr(0, end + 1));
  if (h.magic != kMagic) return "not a module cache entry of this version";
  if (h.imageBytes < 0 || h.imageHash.empty()) return "the header lacks the image's length and hash";
  if (h.key != key.hash() || h.check != key.check()) return "holds another module (hash collision)";
  image = entry.substr(end + 2);
  if (int64_t(image.size()) != h.imageBytes)
    return "image truncated or overlong (" + std::to_string(image.size()) + " of " + std::to_string(h.imageBytes) +
           " bytes)";
  if (fnv1a64Hex(image) != h.imageHash) return "image corrupt (its hash differs)";
  return "";
}

}  // namespace

std::string ModuleKey::hash() const {
  Fnv1a h;
  for (const std::string* f : {&kind, &source, &options, &target, &toolkit}) addField(h, *f);
  return hex(h.value);
}

std::string ModuleKey::check() const {
  Fnv1a h;
  h.add("check", 5);
  for (const std::string* f : {&toolkit, &target, &options, &source, &kind}) addField(h, *f);
  return hex(h.value);
}

ModuleCache::ModuleCache(std::string dir, int64_t maxImageBytes) : dir_(std::move(dir)), maxImageBytes_(maxImageBytes) {}

std::string ModuleCache::pathFor(const ModuleKey& key) const {
  return (fs::path(dir_) / (key.hash() + "." + key.kind)).string();
}

std::optional<std::string> ModuleCache::find(const ModuleKey& key, std::string* warning) const {
  if (!enabled()) return std::nullopt;
  std::string path = pathFor(key);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::string why, image;
  try {
    why = damage(readWholeFile(path, maxImageBytes_ + kMaxHeaderBytes), key, image);
  } catch (const std::exception& e) {  // unreadable, or over the size limit
    why = e.what();
  }
  if (why.empty()) {
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // recently used, for trim()
    return image;
  }
  if (warning) *warning = "module cache entry " + path + " ignored: " + why;
  return std::nullopt;
}

std::string ModuleCache::store(const ModuleKey& key, std::string_view image) const {
  if (!enabled()) return "";
  if (int64_t(image.size()) > maxImageBytes_)
    return "module not cached: " + std::to_string(image.size()) + " bytes, over the limit of " +
           std::to_string(maxImageBytes_);
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return "module not cached: " + dir_ + ": cannot create: " + ec.message();
  std::string entry = std::string(kMagic) + "\nkey " + key.hash() + "\ncheck " + key.check() + "\nimage " +
                      std::to_string(image.size()) + " " + fnv1a64Hex(image) + "\nabout " +
                      oneLine(key.kind + " | " + key.target + " | " + key.toolkit) + "\n\n";
  entry.append(image);
  try {
    writeFileAtomically(pathFor(key), entry);
  } catch (const std::exception& e) {
    return std::string("module not cached: ") + e.what();
  }
  return "";
}

size_t ModuleCache::trim(int64_t maxBytes) const {
  if (!enabled()) return 0;
  struct Entry {
    fs::file_time_type used;
    int64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e;
    Entry entry{it->last_write_time(e), int64_t(it->file_size(e)), it->path()};
    if (e || it->path().filename().string().find(".tmp-") != std::string::npos) continue;  // gone, or being written
    total += entry.bytes;
    entries.push_back(std::move(entry));
  }
  if (total <= maxBytes) return 0;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  size_t removed = 0;
  for (const Entry& e : entries) {
    if (total <= maxBytes / 4 * 3) break;
    std::error_code gone;
    if (fs::remove(e.path, gone)) ++removed;
    total -= e.bytes;
  }
  return removed;
}

ModuleCache defaultModuleCache() {
  if (const char* v = std::getenv("TESSERA_MODULE_CACHE"); v && (std::string(v) == "0" || std::string(v) == "off"))
    return ModuleCache();
  return ModuleCache((fs::path(defaultCacheDir()) / "modules").string());
}

}  // namespace tessera::modcache
