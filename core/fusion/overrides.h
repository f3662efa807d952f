#pragma once
// User overrides of compile decisions, loaded from JSON and keyed by stable node ids:
//   {"overrides": [{"kind": "force-fuse" | "forbid-fuse", "producer": ID, "consumer": ID},
//                  {"kind": "split", "group": ID}, {"kind": "disable-pass", "pass": NAME}]}
// A `split` names a group by a node id in it (stable across compiles) or by its group id "kN" (only stable while
// the model and the other overrides stay the same); a node id wins when both spellings match.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

enum class OverrideKind { ForceFuse, ForbidFuse, Split, DisablePass };
std::string_view overrideKindName(OverrideKind kind);  // "force-fuse", ...

struct Override {
  OverrideKind kind = OverrideKind::ForceFuse;
  std::string producer, consumer;  // force-fuse, forbid-fuse: node ids
  std::string group;               // split: a node id or a group id
  std::string pass;                // disable-pass

  // Every field: an override holds only its kind's fields (parsing and the window set no others), so this is
  // the same as comparing the JSON forms.
  bool operator==(const Override&) const = default;
};

// What a compile made of an override.
enum class OverrideState {
  Applied,  // in effect
  Refused,  // illegal: `rule` names the legality rule it breaks
  Stale,    // no longer matches the model (or fusion did not run): `detail` says what is missing
  Pending,  // not compiled yet (the window's state while its compile runs)
};
const std::string& overrideStateName(OverrideState s);      // "applied", "refused", "stale", "pending"
OverrideState parseOverrideState(const std::string& name);  // throws Error naming the unknown state

// What became of one override after a compile.
struct OverrideStatus {
  Override override;
  OverrideState status = OverrideState::Pending;
  std::string rule;    // refused: the legality rule; applied force-fuse: the profitability rule it broke, if any
  std::string detail;  // one sentence
  int64_t duplicatedNodes = 0;  // applied force-fuse: nodes whose work now repeats
  int64_t extraFlops = 0;       //   and the floating-point operations that costs
};

// Throws Error "FILE: …" naming the byte position of a syntax error or the entry and field at fault.
std::vector<Override> parseOverrides(std::string_view json, const std::string& fileName = "<overrides>");
std::vector<Override> loadOverrides(const std::string& path);
// A list already read as JSON (an overrides file's or a session file's "overrides"), its entries named
// "FILE: overrides[i]" in errors; throws Error when an entry is wrong.
std::vector<Override> overridesFromJson(const nlohmann::json& list, const std::string& fileName);
// The one JSON form of an override, {"kind": ..., and the fields of its kind}: the overrides file, the session
// file's "overrides" and compile --json's "overrides" (which adds the status) all write it.
nlohmann::json overrideToJson(const Override& o);
nlohmann::json overrideListToJson(const std::vector<Override>& overrides);  // [overrideToJson, ...]
// The JSON text of a list of overrides (what parseOverrides reads back).
std::string overridesToJson(const std::vector<Override>& overrides);
// compile --json's form of a status: overrideToJson plus "status", "rule" (null when none), and "detail" and
// "recompute" {nodes, flops} when set; and back (a missing field keeps its default, a wrong one throws Error
// naming it).
nlohmann::json overrideStatusToJson(const OverrideStatus& st);
OverrideStatus overrideStatusFromJson(const nlohmann::json& j, const std::string& where = "override");

}  // namespace tessera
