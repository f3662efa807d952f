// The JSON form of a session, its field checks and the schema migrations.
#include <functional>
#include <map>

#include "ir/error.h"
#include "session/session.h"

namespace tessera {
namespace {

using nlohmann::json;

// Upgrades, each from schema N to N+1. Schema 0 is the unversioned draft of the format: "model" was a plain path
// string and the pipeline options sat at the top level.
void upgradeFrom0(json& j) {
  if (j.contains("model") && j["model"].is_string()) j["model"] = json{{"path", j["model"]}};
  json pipeline = json::object();
  for (const char* key : {"pipeline", "disabled", "stop_after", "fuel"}) {
    if (!j.contains(key)) continue;
    pipeline[key == std::string("pipeline") ? "name" : key] = j[key];
    j.erase(key);
  }
  j["pipeline"] = pipeline;
}

// Schema 2 added branches: a version-1 file's options, overrides and results become the one branch "main".
void upgradeFrom1(json& j) {
  json main{{"name", "main"}};
  for (const char* key : {"pipeline", "overrides", "schedule_traces", "tuning", "last_run"}) {
    if (!j.contains(key)) continue;
    main[key] = j[key];
    j.erase(key);
  }
  j["branches"] = json::array({main});
  j["branch"] = "main";
}

const std::map<int, std::function<void(json&)>>& upgrades() {
  static const std::map<int, std::function<void(json&)>> table{{0, upgradeFrom0}, {1, upgradeFrom1}};
  return table;
}

[[noreturn]] void badField(const std::string& file, const std::string& field, const std::string& what) {
  fail(file + ": field '" + field + "': " + what);
}

const json& field(const json& object, const char* key, const std::string& path, const std::string& file) {
  auto it = object.find(key);
  if (it == object.end()) badField(file, path + key, "missing");
  return *it;
}

std::string stringField(const json& object, const char* key, const std::string& path, const std::string& file,
                        bool required = false) {
  if (!object.contains(key)) {
    if (required) badField(file, path + key, "missing");
    return {};
  }
  const json& v = object.at(key);
  if (!v.is_string()) badField(file, path + key, std::string("expected a string, found ") + v.type_name());
  return v.get<std::string>();
}

const json& objectField(const json& object, const char* key, const std::string& file) {
  static const json empty = json::object();
  if (!object.contains(key)) return empty;
  const json& v = object.at(key);
  if (!v.is_object()) badField(file, key, std::string("expected an object, found ") + v.type_name());
  return v;
}

int schemaVersionOf(const json& j, const std::string& file) {
  if (!j.contains("schema_version")) return 0;
  const json& v = j.at("schema_version");
  if (!v.is_number_integer()) badField(file, "schema_version", std::string("expected an integer, found ") + v.type_name());
  int64_t n = v.get<int64_t>();
  if (n > kSessionSchemaVersion)
    fail(file + ": written by a newer Tessera (schema " + std::to_string(n) + ", this build reads up to " +
         std::to_string(kSessionSchemaVersion) + ")");
  if (n < 0) badField(file, "schema_version", "negative (" + std::to_string(n) + ")");
  return int(n);
}

void migrate(json& j, const std::string& file) {
  for (int v = schemaVersionOf(j, file); v < kSessionSchemaVersion; ++v) {
    auto it = upgrades().find(v);
    if (it == upgrades().end()) fail(file + ": no upgrade from session schema " + std::to_string(v));
    it->second(j);
  }
  j["schema_version"] = kSessionSchemaVersion;
}

SessionModel modelFromJson(const json& j, const std::string& file) {
  const json& m = field(j, "model", "", file);
  if (!m.is_object()) badField(file, "model", std::string("expected an object, found ") + m.type_name());
  SessionModel model;
  model.path = stringField(m, "path", "model.", file);
  model.hash = stringField(m, "hash", "model.", file);
  if (m.contains("embedded_tsr")) model.embeddedTsr = stringField(m, "embedded_tsr", "model.", file);
  if (model.path.empty() && !model.embeddedTsr) badField(file, "model", "needs a 'path' or an 'embedded_tsr'");
  return model;
}

SessionPipeline pipelineFromJson(const json& j, const std::string& file) {
  const json& p = objectField(j, "pipeline", file);
  SessionPipeline pipeline;
  if (p.contains("name")) pipeline.name = stringField(p, "name", "pipeline.", file);
  pipeline.stopAfter = stringField(p, "stop_after", "pipeline.", file);
  if (p.contains("disabled")) {
    const json& d = p.at("disabled");
    if (!d.is_array()) badField(file, "pipeline.disabled", std::string("expected an array, found ") + d.type_name());
    for (size_t i = 0; i < d.size(); ++i) {
      if (!d[i].is_string()) badField(file, "pipeline.disabled[" + std::to_string(i) + "]", "expected a string");
      pipeline.disabled.insert(d[i].get<std::string>());
    }
  }
  if (p.contains("fuel") && !p.at("fuel").is_null()) {
    const json& f = p.at("fuel");
    if (!f.is_number_integer() || f.get<int64_t>() < 0)
      badField(file, "pipeline.fuel", "expected a non-negative integer or null");
    pipeline.fuel = f.get<int64_t>();
  }
  return pipeline;
}

std::vector<Override> sessionOverrides(const json& j, const std::string& file) {
  if (!j.contains("overrides")) return {};
  const json& o = j.at("overrides");
  if (!o.is_array()) badField(file, "overrides", std::string("expected an array, found ") + o.type_name());
  // The same form as an overrides file, read by the same code (its messages name the entry).
  return tessera::overridesFromJson(o, file);
}

json branchToJson(const SessionBranch& b) {
  json pipeline{{"name", b.pipeline.name},
                {"disabled", b.pipeline.disabled},
                {"stop_after", b.pipeline.stopAfter},
                {"fuel", b.pipeline.fuel ? json(*b.pipeline.fuel) : json(nullptr)}};
  return json{{"name", b.name},
              {"pipeline", pipeline},
              {"overrides", overrideListToJson(b.overrides)},
              {"schedule_traces", b.scheduleTraces},
              {"tuning", b.tuning},
              {"last_run", b.lastRun}};
}

SessionBranch branchFromJson(const json& j, const std::string& where, const std::string& file) {
  if (!j.is_object()) badField(file, where, std::string("expected an object, found ") + j.type_name());
  SessionBranch b;
  b.name = stringField(j, "name", where + ".", file, true);
  if (b.name.empty()) badField(file, where + ".name", "empty");
  try {
    b.pipeline = pipelineFromJson(j, file);
    b.overrides = sessionOverrides(j, file);
    b.scheduleTraces = objectField(j, "schedule_traces", file);
    b.tuning = objectField(j, "tuning", file);
    b.lastRun = objectField(j, "last_run", file);
  } catch (const Error& e) {
    fail(std::string(e.what()) + " (in branch '" + b.name + "')");
  }
  return b;
}

void branchesFromJson(const json& j, Session& s, const std::string& file) {
  const json& list = field(j, "branches", "", file);
  if (!list.is_array() || list.empty()) badField(file, "branches", "expected a non-empty array");
  std::vector<SessionBranch> branches;
  for (size_t i = 0; i < list.size(); ++i)
    branches.push_back(branchFromJson(list[i], "branches[" + std::to_string(i) + "]", file));
  const std::string active = stringField(j, "branch", "", file, true);
  try {
    setBranches(s, std::move(branches), active);
  } catch (const Error& e) {
    fail(file + ": " + e.what());
  }
}

}  // namespace

json sessionToJson(const Session& s) {
  json model{{"path", s.model.path}, {"hash", s.model.hash}};
  if (s.model.embeddedTsr) model["embedded_tsr"] = *s.model.embeddedTsr;
  json branches = json::array();
  for (const SessionBranch& b : allBranches(s)) branches.push_back(branchToJson(b));
  return json{{"format", "tessera-session"},
              {"schema_version", kSessionSchemaVersion},
              {"model", model},
              {"branch", s.branch},
              {"branches", branches},
              {"view", s.view}};
}

Session sessionFromJson(json j, const std::string& file) {
  if (!j.is_object()) fail(file + ": not a Tessera session (expected a JSON object, found " + j.type_name() + ")");
  std::string format = stringField(j, "format", "", file, true);
  if (format != "tessera-session")
    badField(file, "format", "expected \"tessera-session\", found \"" + format + "\"");
  migrate(j, file);
  Session s;
  s.model = modelFromJson(j, file);
  branchesFromJson(j, s, file);
  s.view = objectField(j, "view", file);
  return s;
}

}  // namespace tessera
