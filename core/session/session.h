#pragma once
// A Tessera session (.tessera): everything needed to reopen a piece of work — the model (by path and content
// hash, or embedded as .tsr text), the pipeline options, the overrides, and the window's own state (schedule
// traces, tuning and run results, view state), which the core keeps verbatim as opaque JSON. A session holds
// one or more named branches: variants of the model's compile, each with its own options, overrides and results.
// The file format is documented in docs/sessions.md.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fusion/compile.h"
#include "fusion/overrides.h"
#include "ir/graph.h"

namespace tessera {

inline constexpr int kSessionSchemaVersion = 2;  // the newest schema this build reads and the one it writes

struct SessionModel {
  std::string path;                         // absolute when saved by the CLI; may be empty when embedded only
  std::string hash;                         // "fnv1a64:<16 hex digits>" of the file's bytes; empty: unknown
  std::optional<std::string> embeddedTsr;   // the model as .tsr text, when asked or when the file is gone
};

struct SessionPipeline {
  std::string name = "default";   // a pipeline name or a comma list of passes
  std::set<std::string> disabled;
  std::string stopAfter;
  std::optional<int64_t> fuel;
};

// Everything that differs between branches: the compile's options and the window's results for it.
struct BranchState {
  SessionPipeline pipeline;
  std::vector<Override> overrides;
  nlohmann::json scheduleTraces = nlohmann::json::object();  // group key → schedule trace
  nlohmann::json tuning = nlohmann::json::object();          // tuning results, verbatim
  nlohmann::json lastRun = nlohmann::json::object();         // last run results, verbatim
};

// One variant of the model's compile ("what if this pass were off, this edge not fused"). Version-1 files
// become one branch named "main".
struct SessionBranch : BranchState {
  std::string name = "main";
};

// The shown branch's state is the session's own (so a reader of a one-branch session needs no branch at all).
struct Session : BranchState {
  SessionModel model;
  std::string branch = "main";  // the shown branch's name
  // The other branches in the order shown; the active one stands at `activeIndex` of that order.
  std::vector<SessionBranch> otherBranches;
  size_t activeIndex = 0;
  nlohmann::json view = nlohmann::json::object();            // window state: step, level, selection, layout
  // Filled by loadSession, never saved: e.g. "model 'x.tsr' changed since the session was saved (hash …)".
  std::vector<std::string> warnings;
  bool modelChanged = false;  // the model file's hash differs from the saved one
  bool modelMissing = false;  // the model file is gone (the embedded copy, if any, stands in)
};

// FNV-1a 64 over a file's bytes, as "fnv1a64:<hex>". Throws Error naming the path when it cannot be read.
std::string hashModelFile(const std::string& path);

// A session for a model file: its absolute path and hash; with `embed`, also its .tsr text.
Session sessionForModel(const std::string& modelPath, bool embed = false);
// Copy the compile options in / out (the overrides included; `cancelled` and fusion options are left as is).
void setCompileOptions(Session& session, const CompileOptions& options);
CompileOptions compileOptionsOf(const Session& session);
// The same for one branch.
CompileOptions compileOptionsOf(const SessionBranch& branch);
SessionPipeline pipelineOf(const CompileOptions& options);
// The model: the file when present, else the embedded text. Throws Error when neither is available.
Graph loadSessionModel(const Session& session);

// --- Branches.
SessionBranch activeBranch(const Session& session);
void setActiveBranch(Session& session, SessionBranch branch);  // replaces the active branch's fields and name
// Every branch in the order shown, the active one included.
std::vector<SessionBranch> allBranches(const Session& session);
std::vector<std::string> branchNames(const Session& session);
// Sets every branch (names unique and non-empty, else Error) with `active` (a name among them) the active one.
void setBranches(Session& session, std::vector<SessionBranch> branches, const std::string& active);
// Makes `name` the active branch; throws Error naming the branch and listing those there are.
void switchBranch(Session& session, const std::string& name);

// "FILE.tessera#BRANCH" (the CLI's way to name one branch): the file and the branch ("" when none is named).
// A '#' counts only after a name ending in .tessera, so other paths keep theirs.
struct SessionRef {
  std::string path, branch;
};
SessionRef parseSessionRef(const std::string& ref);
bool isSessionPath(const std::string& path);  // ends in .tessera (any case), a #branch allowed after it
// loadSession, with the named branch (if any) made active.
Session loadSessionRef(const std::string& ref);

// Throws Error "FILE: …" naming the field or byte position at fault, or the newer schema.
Session loadSession(const std::string& path);
// Writes atomically (temporary file in the same folder, fsync, rename). When the model file is gone and the
// session has no embedded copy, nothing can be added: the session is saved as it is.
void saveSession(const Session& session, const std::string& path);

// The JSON form (exposed for tests and for the autosave). `fileName` names the source in errors.
nlohmann::json sessionToJson(const Session& session);
Session sessionFromJson(nlohmann::json j, const std::string& fileName);

// --- Autosave and crash recovery. `key` is the saved session's path, or the model's path before a first save.
// The autosave lives in $XDG_CACHE_HOME/tessera/autosave/ (else ~/.cache/tessera/autosave/).
std::string autosavePath(const std::string& key);
void writeAutosave(const Session& session, const std::string& key);
// The autosave's path when it exists and is newer than the file at `key` (or that file is gone).
std::optional<std::string> findRecoverableAutosave(const std::string& key);
void discardAutosave(const std::string& key);

}  // namespace tessera
