#pragma once
// The parts of a session file that panels own (docs/sessions.md): a panel registers a part under a field name
// with a function that saves it to JSON and one that restores it. Fields "schedule_traces", "tuning" and
// "last_run" are the core session's own fields; any other name is kept under "view". A field read from a file
// that no panel claims is kept verbatim and written back, so saving never loses what another build stored.
#include <QObject>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace tessera::ui {

class SessionParts : public QObject {
  Q_OBJECT
 public:
  using Save = std::function<nlohmann::json()>;
  using Restore = std::function<void(const nlohmann::json&)>;

  explicit SessionParts(QObject* parent = nullptr) : QObject(parent) {}

  // A later registration under the same field replaces the earlier one.
  void add(const std::string& field, Save save, Restore restore) { parts_[field] = {std::move(save), std::move(restore)}; }
  // The field's JSON: the owner's save(), else what the last opened file held, else null.
  nlohmann::json save(const std::string& field) const {
    if (auto p = parts_.find(field); p != parts_.end() && p->second.save) return p->second.save();
    auto k = kept_.find(field);
    return k == kept_.end() ? nlohmann::json() : k->second;
  }
  // Hands a field from an opened file to its owner (kept verbatim as well).
  void restore(const std::string& field, const nlohmann::json& value) {
    kept_[field] = value;
    if (auto p = parts_.find(field); p != parts_.end() && p->second.restore) p->second.restore(value);
  }
  // Every field with an owner or a kept value.
  std::vector<std::string> fields() const {
    std::vector<std::string> out;
    for (const auto& [name, part] : parts_) out.push_back(name);
    for (const auto& [name, value] : kept_)
      if (!parts_.count(name)) out.push_back(name);
    return out;
  }
  // Forgets kept values (a newly opened model starts clean).
  void clearKept() { kept_.clear(); }
  // A panel calls this when its part changed, so the window autosaves it.
  void touch() { emit changed(); }

 signals:
  void changed();

 private:
  struct Part {
    Save save;
    Restore restore;
  };
  std::map<std::string, Part> parts_;
  std::map<std::string, nlohmann::json> kept_;
};

}  // namespace tessera::ui
