// Session files: load (with the model's hash check) and save (atomic), and the bridge to compile options.
#include "session/session.h"

#include <cstdio>
#include <filesystem>

#include "frontend/model_io.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "io/atomic_file.h"
#include "ir/fnv.h"

namespace tessera {
namespace {

constexpr int64_t kMaxSessionBytes = int64_t(1) << 30;  // embedded models are text; 1 GiB is plenty
constexpr int64_t kMaxModelBytes = int64_t(16) << 30;

// Compare the model file with the saved hash; differences become warnings, not errors.
void checkModel(Session& s) {
  if (s.model.path.empty()) return;
  if (!std::filesystem::exists(s.model.path)) {
    s.modelMissing = true;
    s.warnings.push_back("model '" + s.model.path + "' is missing" +
                         (s.model.embeddedTsr ? "; using the copy embedded in the session" : ""));
    return;
  }
  if (s.model.hash.empty()) return;
  std::string now = hashModelFile(s.model.path);
  if (now == s.model.hash) return;
  s.modelChanged = true;
  s.warnings.push_back("model '" + s.model.path + "' changed since the session was saved (hash was " +
                       s.model.hash + ", now " + now + ")");
}

}  // namespace

std::string hashModelFile(const std::string& path) {
  std::string bytes = readWholeFile(path, kMaxModelBytes);
  return "fnv1a64:" + fnv1a64Hex(bytes);  // fast, and enough to notice an edited file
}

Session sessionForModel(const std::string& modelPath, bool embed) {
  Session s;
  s.model.path = std::filesystem::absolute(modelPath).lexically_normal().string();
  s.model.hash = hashModelFile(s.model.path);
  if (embed) s.model.embeddedTsr = printTsr(loadModel(s.model.path));
  return s;
}

SessionPipeline pipelineOf(const CompileOptions& o) { return SessionPipeline{o.pipeline, o.disabled, o.stopAfter, o.fuel}; }

void setCompileOptions(Session& s, const CompileOptions& o) {
  s.pipeline = pipelineOf(o);
  s.overrides = o.overrides;
}

CompileOptions compileOptionsOf(const SessionBranch& b) {
  CompileOptions o;
  o.pipeline = b.pipeline.name;
  o.disabled = b.pipeline.disabled;
  o.stopAfter = b.pipeline.stopAfter;
  o.fuel = b.pipeline.fuel;
  o.overrides = b.overrides;
  return o;
}

CompileOptions compileOptionsOf(const Session& s) { return compileOptionsOf(activeBranch(s)); }

Graph loadSessionModel(const Session& s) {
  if (!s.model.path.empty() && std::filesystem::exists(s.model.path)) return loadModel(s.model.path);
  if (s.model.embeddedTsr) return parseTsr(*s.model.embeddedTsr, s.model.path.empty() ? "<embedded>" : s.model.path);
  fail("model '" + s.model.path + "' is missing and the session has no embedded copy");
}

Session loadSession(const std::string& path) {
  std::string text = readWholeFile(path, kMaxSessionBytes);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte: where the text stops being JSON; at the end for a truncated file.
    fail(path + ": not valid JSON at byte " + std::to_string(e.byte) + " of " + std::to_string(text.size()) +
         " (truncated or corrupt file)");
  } catch (const nlohmann::json::exception& e) {  // a number out of range (1e999): the message named no file
    fail(path + ": not valid JSON: " + e.what());
  }
  Session s = sessionFromJson(std::move(j), path);
  checkModel(s);
  return s;
}

void saveSession(const Session& s, const std::string& path) {
  writeFileAtomically(path, sessionToJson(s).dump(2) + "\n");
}

}  // namespace tessera
