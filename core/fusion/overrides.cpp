#include "fusion/overrides.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>
#include <utility>

#include "ir/error.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr size_t kMaxOverrideFileBytes = 16 << 20;

std::string field(const json& entry, const char* name, const std::string& where) {
  auto it = entry.find(name);
  if (it == entry.end()) fail(where + ": missing field \"" + name + "\"");
  if (!it->is_string()) fail(where + "." + name + ": expected a string, found " + it->dump());
  std::string s = it->get<std::string>();
  if (s.empty()) fail(where + "." + name + ": must not be empty");
  return s;
}

Override parseEntry(const json& entry, const std::string& where) {
  if (!entry.is_object()) fail(where + ": expected an object, found " + entry.dump());
  std::string kind = field(entry, "kind", where);
  Override o;
  if (kind == "force-fuse" || kind == "forbid-fuse") {
    o.kind = kind == "force-fuse" ? OverrideKind::ForceFuse : OverrideKind::ForbidFuse;
    o.producer = field(entry, "producer", where);
    o.consumer = field(entry, "consumer", where);
  } else if (kind == "split") {
    o.kind = OverrideKind::Split;
    o.group = field(entry, "group", where);
  } else if (kind == "disable-pass") {
    o.kind = OverrideKind::DisablePass;
    o.pass = field(entry, "pass", where);
  } else {
    fail(where + ".kind: unknown kind \"" + kind + "\" (force-fuse, forbid-fuse, split, disable-pass)");
  }
  return o;
}

const std::vector<std::pair<OverrideState, std::string>>& stateNames() {
  static const std::vector<std::pair<OverrideState, std::string>> names = {
      {OverrideState::Applied, "applied"}, {OverrideState::Refused, "refused"},
      {OverrideState::Stale, "stale"},     {OverrideState::Pending, "pending"}};
  return names;
}

// An optional field of a status: absent or null keeps `out`, a value of another type throws naming the field.
template <typename T>
void optionalField(const json& j, const char* name, const std::string& where, T& out) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return;
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    fail(where + "." + name + ": expected " + (std::is_same_v<T, std::string> ? "a string" : "an integer") +
         ", found " + it->dump());
  }
}

}  // namespace

const std::string& overrideStateName(OverrideState s) {
  for (const auto& [state, name] : stateNames())
    if (state == s) return name;
  fail("override state " + std::to_string(static_cast<int>(s)) + " has no name");
}

OverrideState parseOverrideState(const std::string& name) {
  for (const auto& [state, n] : stateNames())
    if (n == name) return state;
  fail("unknown override status '" + name + "' (applied, refused, stale, pending)");
}

std::string_view overrideKindName(OverrideKind kind) {
  switch (kind) {
    case OverrideKind::ForceFuse: return "force-fuse";
    case OverrideKind::ForbidFuse: return "forbid-fuse";
    case OverrideKind::Split: return "split";
    case OverrideKind::DisablePass: return "disable-pass";
  }
  return "?";
}

std::vector<Override> parseOverrides(std::string_view text, const std::string& fileName) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    fail(fileName + ": invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
  if (!doc.is_object() || !doc.contains("overrides"))
    fail(fileName + ": expected an object with an \"overrides\" list");
  const json& list = doc["overrides"];
  if (!list.is_array()) fail(fileName + ": overrides: expected a list, found " + list.dump());
  return overridesFromJson(list, fileName);
}

std::vector<Override> overridesFromJson(const json& list, const std::string& fileName) {
  std::vector<Override> out;
  for (size_t i = 0; i < list.size(); ++i)
    out.push_back(parseEntry(list[i], fileName + ": overrides[" + std::to_string(i) + "]"));
  return out;
}

std::vector<Override> loadOverrides(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path + ": cannot open the overrides file");
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  if (s.size() > kMaxOverrideFileBytes) fail(path + ": overrides file larger than 16 MiB");
  return parseOverrides(s, path);
}

json overrideToJson(const Override& o) {
  json e{{"kind", std::string(overrideKindName(o.kind))}};
  if (o.kind == OverrideKind::ForceFuse || o.kind == OverrideKind::ForbidFuse) {
    e["producer"] = o.producer;
    e["consumer"] = o.consumer;
  }
  if (o.kind == OverrideKind::Split) e["group"] = o.group;
  if (o.kind == OverrideKind::DisablePass) e["pass"] = o.pass;
  return e;
}

json overrideListToJson(const std::vector<Override>& overrides) {
  json list = json::array();
  for (const Override& o : overrides) list.push_back(overrideToJson(o));
  return list;
}

std::string overridesToJson(const std::vector<Override>& overrides) {
  return json{{"overrides", overrideListToJson(overrides)}}.dump(2);
}

json overrideStatusToJson(const OverrideStatus& st) {
  json j = overrideToJson(st.override);
  j["status"] = overrideStateName(st.status);
  j["rule"] = st.rule.empty() ? json() : json(st.rule);
  if (!st.detail.empty()) j["detail"] = st.detail;
  if (st.duplicatedNodes || st.extraFlops) j["recompute"] = {{"nodes", st.duplicatedNodes}, {"flops", st.extraFlops}};
  return j;
}

OverrideStatus overrideStatusFromJson(const json& j, const std::string& where) {
  OverrideStatus st;
  st.override = parseEntry(j, where);
  std::string state = overrideStateName(st.status);
  optionalField(j, "status", where, state);
  try {
    st.status = parseOverrideState(state);
  } catch (const Error& e) {
    fail(where + ".status: " + e.what());
  }
  optionalField(j, "rule", where, st.rule);
  optionalField(j, "detail", where, st.detail);
  if (auto it = j.find("recompute"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) fail(where + ".recompute: expected an object, found " + it->dump());
    optionalField(*it, "nodes", where + ".recompute", st.duplicatedNodes);
    optionalField(*it, "flops", where + ".recompute", st.extraFlops);
  }
  return st;
}

}  // namespace tessera
