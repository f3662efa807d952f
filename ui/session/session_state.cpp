#include "ui/session/session_state.h"

#include <QMainWindow>
#include <set>

#include "ir/enum_names.h"
#include "ir/fnv.h"
#include "passes/fingerprint.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

// The window's own view keys, never handed to parts.
const std::set<std::string> kViewKeys{"step", "selection", "layout", "compiled"};

// The selection kinds' names in the view's "selection", for writing and reading.
const EnumNames<Selection::Kind>& kindNames() {
  static const EnumNames<Selection::Kind> names = {
      {Selection::Node, "node"}, {Selection::Value, "value"}, {Selection::Group, "group"}, {Selection::None, "none"}};
  return names;
}

nlohmann::json selectionToJson(const Selection& s) {
  if (s.kind == Selection::None) return nullptr;
  return {{"kind", enumName(kindNames(), s.kind, "selection kind")}, {"id", s.id.toStdString()}, {"producer", s.producer.toStdString()},
          {"consumer", s.consumer.toStdString()}};
}

Selection selectionFromJson(const nlohmann::json& j) {
  Selection s;
  if (!j.is_object()) return s;
  const std::string kind = j.value("kind", "");
  for (const auto& [k, name] : kindNames())  // an unknown kind (a newer build's) selects nothing
    if (name == kind) s.kind = k;
  s.id = QString::fromStdString(j.value("id", ""));
  s.producer = QString::fromStdString(j.value("producer", ""));
  s.consumer = QString::fromStdString(j.value("consumer", ""));
  return s;
}

}  // namespace

nlohmann::json* branchPart(BranchState& branch, const std::string& field) {
  if (field == "schedule_traces") return &branch.scheduleTraces;
  if (field == "tuning") return &branch.tuning;
  if (field == "last_run") return &branch.lastRun;
  return nullptr;
}

nlohmann::json compileFingerprint(const CompileResult& compile) {
  Fnv1a h;
  if (compile.graph)
    for (const Node* n : compile.graph->topoOrder()) {
      h.add(n->id().data(), n->id().size());
      h.addU64(nodeFingerprint(*n));
    }
  nlohmann::json groups = nlohmann::json::array();
  if (compile.fusion)
    for (const FusedGroup& g : compile.fusion->groups) {
      std::string members = g.id + ":";
      for (const GroupNode& n : g.nodes) members += " " + n.id;
      groups.push_back(members);
    }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.value));
  return {{"graph", hex}, {"groups", groups}};
}

void storeSessionState(const SessionController& c, const QMainWindow& window, Session& s) {
  CompileOptions options = c.pipelineOptions();
  options.overrides = c.overrides();
  setCompileOptions(s, options);
  s.view = nlohmann::json::object();
  const SessionParts& parts = *c.sessionParts();
  for (const std::string& field : parts.fields()) {
    nlohmann::json value = parts.save(field);
    if (nlohmann::json* own = branchPart(s, field)) *own = value.is_null() ? nlohmann::json::object() : value;
    else s.view[field] = value;
  }
  setBranches(s, c.branches(), c.currentBranch().toStdString());  // the current one as just stored, and the others
  s.view["step"] = c.currentStep();
  s.view["selection"] = selectionToJson(c.selection());
  s.view["layout"] = window.saveState().toBase64().toStdString();
  if (c.compile()) s.view["compiled"] = compileFingerprint(*c.compile());
}

std::vector<std::string> restoreSessionState(SessionController& c, QMainWindow& window, const Session& s) {
  std::vector<std::string> notes;
  const nlohmann::json& view = s.view;
  if (c.compile() && view.contains("compiled") && view["compiled"] != compileFingerprint(*c.compile()))
    notes.push_back("the compile differs from the one saved in the session (the model or the compiler changed); "
                    "showing the new one");
  if (view.contains("step") && view["step"].is_number_integer()) {
    const int step = view["step"].get<int>();
    if (step >= 0 && step < c.stepCount()) c.setCurrentStep(step);
    else notes.push_back("saved step " + std::to_string(step) + " no longer exists; showing the last step");
  }
  if (view.contains("selection")) c.select(selectionFromJson(view["selection"]));
  if (view.contains("layout") && view["layout"].is_string())
    window.restoreState(QByteArray::fromBase64(QByteArray::fromStdString(view["layout"].get<std::string>())));
  c.restoreBranches(allBranches(s), s.branch);
  SessionParts& parts = *c.sessionParts();
  for (const char* field : kBranchParts) parts.restore(field, *branchPart(s, field));
  for (const auto& [key, value] : view.items())
    if (!kViewKeys.count(key)) parts.restore(key, value);
  return notes;
}

}  // namespace tessera::ui
