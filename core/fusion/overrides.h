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
};

// What became of one override after a compile.
struct OverrideStatus {
  Override override;
  std::string status;  // "applied", "refused" or "stale"
  std::string rule;    // refused: the legality rule; applied force-fuse: the profitability rule it broke, if any
  std::string detail;  // one sentence
  int64_t duplicatedNodes = 0;  // applied force-fuse: nodes whose work now repeats
  int64_t extraFlops = 0;       //   and the floating-point operations that costs
};

// Throws Error "FILE: …" naming the byte position of a syntax error or the entry and field at fault.
std::vector<Override> parseOverrides(std::string_view json, const std::string& fileName = "<overrides>");
std::vector<Override> loadOverrides(const std::string& path);
// The one JSON form of an override, {"kind": ..., and the fields of its kind}: the overrides file, the session
// file's "overrides" and compile --json's "overrides" (which adds the status) all write it.
nlohmann::json overrideToJson(const Override& o);
nlohmann::json overrideListToJson(const std::vector<Override>& overrides);  // [overrideToJson, ...]
// The JSON text of a list of overrides (what parseOverrides reads back).
std::string overridesToJson(const std::vector<Override>& overrides);

}  // namespace tessera
