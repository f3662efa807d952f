// SessionController's branches: the list, the undoable changes to it, and switching (recompile, then the
// branch's stored parts handed back to the panels that own them).
#include <algorithm>

#include "fusion/overrides.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_state.h"

namespace tessera::ui {
namespace {

// One undoable branch change: the whole list and the current branch before and after.
class BranchCommand : public QUndoCommand {
 public:
  struct State {
    std::vector<SessionBranch> branches;
    std::string current;
  };
  BranchCommand(SessionController* c, State before, State after, const QString& text)
      : QUndoCommand(text), c_(c), before_(std::move(before)), after_(std::move(after)) {}
  void redo() override { c_->applyBranches(after_.branches, after_.current); }
  void undo() override { c_->applyBranches(before_.branches, before_.current); }

 private:
  SessionController* c_;
  State before_, after_;
};

// Same compile and results: switching between the two would change nothing.
bool sameState(SessionBranch a, SessionBranch b) {
  a.name = b.name;
  return a.overrides == b.overrides && a.pipeline.name == b.pipeline.name &&
         a.pipeline.disabled == b.pipeline.disabled && a.pipeline.stopAfter == b.pipeline.stopAfter &&
         a.pipeline.fuel == b.pipeline.fuel && a.scheduleTraces == b.scheduleTraces && a.tuning == b.tuning &&
         a.lastRun == b.lastRun;
}

auto named(const std::string& name) {
  return [name](const SessionBranch& b) { return b.name == name; };
}

}  // namespace

SessionBranch SessionController::captureBranch() const {
  // Switched to and still compiling: the panels hold the previous branch's parts until the compile lands.
  if (pendingBranch_) {
    SessionBranch b = *pendingBranch_;
    b.name = branch_;
    b.pipeline = pipelineOf(pipeline_);
    b.overrides = overrides_;
    return b;
  }
  SessionBranch b;
  b.name = branch_;
  b.pipeline = pipelineOf(pipeline_);
  b.overrides = overrides_;
  for (const char* field : kBranchParts) {
    nlohmann::json v = parts_->save(field);
    *branchPart(b, field) = v.is_null() ? nlohmann::json::object() : v;
  }
  return b;
}

std::vector<SessionBranch> SessionController::branches() const {
  std::vector<SessionBranch> out = branches_;
  for (SessionBranch& b : out)
    if (b.name == branch_) b = captureBranch();
  return out;
}

QStringList SessionController::branchNames() const {
  QStringList names;
  for (const SessionBranch& b : branches_) names << QString::fromStdString(b.name);
  return names;
}

QString SessionController::pushBranches(std::vector<SessionBranch> next, const std::string& current, const QString& text) {
  if (!input_) return tr("open a model first");
  undo_->push(new BranchCommand(this, {branches(), branch_}, {std::move(next), current}, text));
  return {};
}

QString SessionController::createBranch(const QString& name) {
  const std::string n = name.trimmed().toStdString();
  if (n.empty()) return tr("a branch needs a name");
  if (std::any_of(branches_.begin(), branches_.end(), named(n))) return tr("there is a branch '%1' already").arg(name);
  std::vector<SessionBranch> next = branches();
  SessionBranch copy = captureBranch();
  copy.name = n;
  next.push_back(copy);
  return pushBranches(std::move(next), n, tr("New branch %1").arg(name));
}

QString SessionController::switchBranch(const QString& name) {
  const std::string n = name.toStdString();
  if (n == branch_) return {};
  if (std::none_of(branches_.begin(), branches_.end(), named(n))) return tr("no branch '%1'").arg(name);
  return pushBranches(branches(), n, tr("Switch to branch %1").arg(name));
}

QString SessionController::renameBranch(const QString& from, const QString& to) {
  const std::string f = from.toStdString(), t = to.trimmed().toStdString();
  if (t.empty()) return tr("a branch needs a name");
  std::vector<SessionBranch> next = branches();
  auto it = std::find_if(next.begin(), next.end(), named(f));
  if (it == next.end()) return tr("no branch '%1'").arg(from);
  if (f == t) return {};
  if (std::any_of(next.begin(), next.end(), named(t))) return tr("there is a branch '%1' already").arg(to);
  it->name = t;
  return pushBranches(std::move(next), f == branch_ ? t : branch_, tr("Rename branch %1 to %2").arg(from, to));
}

QString SessionController::deleteBranch(const QString& name) {
  const std::string n = name.toStdString();
  if (n == branch_) return tr("'%1' is the current branch: switch to another before deleting it").arg(name);
  std::vector<SessionBranch> next = branches();
  auto it = std::find_if(next.begin(), next.end(), named(n));
  if (it == next.end()) return tr("no branch '%1'").arg(name);
  next.erase(it);
  return pushBranches(std::move(next), branch_, tr("Delete branch %1").arg(name));
}

void SessionController::applyBranches(std::vector<SessionBranch> branches, const std::string& current) {
  const SessionBranch now = captureBranch();
  auto it = std::find_if(branches.begin(), branches.end(), named(current));
  if (it == branches.end()) return;  // an undo command holds only lists it made: cannot happen
  const SessionBranch next = *it;
  branches_ = std::move(branches);
  branch_ = current;
  if (!sameState(now, next) && input_) {
    pipeline_ = compileOptionsOf(next);
    pipeline_.overrides.clear();
    overrides_ = next.overrides;
    pendingBranch_ = next;
    emit overridesChanged();
    CompileOptions options = pipeline_;
    options.overrides = overrides_;
    startJob(tr("Compiling branch %1").arg(QString::fromStdString(current)), path_, input_, nullptr, options);
  }
  emit branchesChanged();
}

void SessionController::restoreBranches(std::vector<SessionBranch> branches, const std::string& current) {
  if (std::none_of(branches.begin(), branches.end(), named(current))) return;
  branches_ = std::move(branches);
  branch_ = current;
  emit branchesChanged();
}

void SessionController::restoreBranchParts() {
  SessionBranch b = std::move(*pendingBranch_);
  pendingBranch_.reset();
  for (const char* field : kBranchParts) parts_->restore(field, *branchPart(b, field));
}

}  // namespace tessera::ui
