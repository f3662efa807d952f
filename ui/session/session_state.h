#pragma once
// The window's state in a session file and back (docs/sessions.md, "The window's fields"): the pipeline
// options and overrides, the panels' parts (last run, tuning, schedule traces, anything under "view"), the step,
// the selection, the dock layout, and a fingerprint of the compile that was shown.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "session/session.h"

class QMainWindow;

namespace tessera::ui {

class SessionController;

// Fills `session`'s options, overrides, results and view from the window (its model reference is left as is).
void storeSessionState(const SessionController& controller, const QMainWindow& window, Session& session);
// After the session's model compiled: restores the step, selection, dock layout and parts. Returns notes for the
// log, e.g. that the compile differs from the one saved or that a saved step no longer exists.
std::vector<std::string> restoreSessionState(SessionController& controller, QMainWindow& window, const Session& session);
// The panels' parts that are the core session's own fields, kept per branch (BranchState); every other part
// lives under "view", which belongs to the window, not to a branch.
inline constexpr const char* kBranchParts[] = {"schedule_traces", "tuning", "last_run"};
// The branch's field for part `field`, or nullptr when `field` is not one of kBranchParts.
nlohmann::json* branchPart(BranchState& branch, const std::string& field);
inline const nlohmann::json* branchPart(const BranchState& branch, const std::string& field) {
  return branchPart(const_cast<BranchState&>(branch), field);
}

// Node ids, ops, attributes and types in order, and the groups with their nodes: equal for equal compiles.
nlohmann::json compileFingerprint(const CompileResult& compile);

}  // namespace tessera::ui
