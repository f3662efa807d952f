#include "fusion/overrides.h"

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/json_fields.h"
#include "ir/enum_names.h"
#include "ir/error.h"

namespace tessera {
namespace {

using nlohmann::json;

constexpr int64_t kMaxOverrideFileBytes = 16 << 20;

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

const EnumNames<OverrideState>& stateNames() {
  static const EnumNames<OverrideState> names = {{OverrideState::Applied, "applied"},
                                                 {OverrideState::Refused, "refused"},
                                                 {OverrideState::Stale, "stale"},
                                                 {OverrideState::Pending, "pending"}};
  return names;
}

}  // namespace

const std::string& overrideStateName(OverrideState s) { return enumName(stateNames(), s, "override status"); }

OverrideState parseOverrideState(const std::string& name) { return enumNamed(stateNames(), name, "override status"); }

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
  } catch (const json::exception& e) {  // a number out of range (8e888888): found by fuzz_overrides
    fail(fileName + ": invalid JSON: " + e.what());
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
  return parseOverrides(readWholeFile(path, kMaxOverrideFileBytes), path);
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
  const std::string at = where + ".";
  std::string state = overrideStateName(st.status);
  readJsonField(j, "status", at, state);
  try {
    st.status = parseOverrideState(state);
  } catch (const Error& e) {
    fail(at + "status: " + e.what());
  }
  readJsonField(j, "rule", at, st.rule);
  readJsonField(j, "detail", at, st.detail);
  if (auto it = j.find("recompute"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) fail(at + "recompute: expected an object, got " + it->type_name());
    readJsonField(*it, "nodes", at + "recompute.", st.duplicatedNodes);
    readJsonField(*it, "flops", at + "recompute.", st.extraFlops);
  }
  return st;
}

}  // namespace tessera
