#include "tune/cache.h"

#include <filesystem>

#include "ir/error.h"
#include "ir/fnv.h"
#include "io/atomic_file.h"

namespace tessera::tune {

namespace fs = std::filesystem;

namespace {
constexpr int64_t kMaxEntryBytes = 16 << 20;
constexpr int kVersion = 1;
}  // namespace

std::string CacheKey::hash() const {
  return fnv1a64Hex(signature + '\n' + templateName + '\n' + device + '\n' + toolkit);
}

nlohmann::json CacheEntry::toJson() const {
  return {{"format", "tessera-tuning"}, {"version", kVersion},
          {"signature", key.signature},  {"template", key.templateName},
          {"device", key.device},        {"toolkit", key.toolkit},
          {"params", params},            {"trace", trace.toJson()},
          {"best_ms", bestMs},           {"predicted_ms", predictedMs},
          {"model_pick_ms", modelPickMs}, {"candidates", candidates},
          {"candidates_measured", measured}, {"verified_against", verifiedAgainst}};
}

CacheEntry CacheEntry::fromJson(const nlohmann::json& j, const std::string& origin) {
  if (!j.is_object()) fail(origin + ": not a JSON object");
  if (j.value("format", "") != "tessera-tuning") fail(origin + ": field 'format' is not \"tessera-tuning\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion)
    fail(origin + ": field 'version' is not " + std::to_string(kVersion));
  CacheEntry e;
  try {
    e.key = {j.at("signature").get<std::string>(), j.at("template").get<std::string>(),
             j.at("device").get<std::string>(), j.at("toolkit").get<std::string>()};
    e.params = j.at("params").get<kernel::TemplateParams>();
    e.bestMs = j.at("best_ms").get<double>();
    e.predictedMs = j.at("predicted_ms").get<double>();
    e.modelPickMs = j.at("model_pick_ms").get<double>();
    e.candidates = j.at("candidates").get<int>();
    e.measured = j.at("candidates_measured").get<int>();
    e.verifiedAgainst = j.value("verified_against", "reference");  // entries before it: always the reference
  } catch (const nlohmann::json::exception& ex) {
    fail(origin + ": " + ex.what());
  }
  if (!j.contains("trace")) fail(origin + ": field 'trace' is missing");
  e.trace = kernel::Trace::fromJson(j["trace"]);
  return e;
}

TuningCache::TuningCache(std::string dir) : dir_(std::move(dir)) {}

std::string TuningCache::pathFor(const CacheKey& key) const {
  return (fs::path(dir_) / "tune" / (key.hash() + ".json")).string();
}

std::optional<CacheEntry> TuningCache::find(const CacheKey& key, std::string* warning) const {
  std::string path = pathFor(key);
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(readWholeFile(path, kMaxEntryBytes), nullptr, false);
    if (j.is_discarded()) fail(path + ": not valid JSON");
    CacheEntry e = CacheEntry::fromJson(j, path);
    if (e.key.signature != key.signature || e.key.templateName != key.templateName || e.key.device != key.device ||
        e.key.toolkit != key.toolkit)
      fail(path + ": holds another kernel, device or toolkit (hash collision)");
    return e;
  } catch (const std::exception& ex) {
    if (warning) *warning = std::string("tuning cache entry ignored, tuning again: ") + ex.what();
    return std::nullopt;
  }
}

void TuningCache::store(const CacheEntry& entry) const {
  std::string path = pathFor(entry.key);
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) fail(fs::path(path).parent_path().string() + ": cannot create: " + ec.message());
  writeFileAtomically(path, entry.toJson().dump(2) + "\n");
}

}  // namespace tessera::tune
