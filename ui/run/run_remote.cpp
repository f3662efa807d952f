// RunController's remote workers (run_controller.h: addRemote, reconnect): asked in the background through the
// core's connector (runtime/execute/remote.h), so an unreachable host never freezes the window.
#include "runtime/execute/remote.h"
#include "ui/run/run_controller.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

// What the worker at `address` runs, or why it cannot be used.
BackendInfo probeRemote(const QString& address) {
  BackendInfo b;
  b.name = "remote:" + address;
  b.remote = address;
  b.device = address;
  try {
    const execute::WorkerInfo w = execute::remoteConnector()->describe(address.toStdString());
    b.kind = w.kind;
    b.device = QObject::tr("%1 on %2: %3")
                   .arg(w.kind == execute::BackendKind::Cuda ? "cuda" : "cpu", address, QString::fromStdString(w.device));
    b.latencyMs = w.latencyMs;
    b.unavailable = QString::fromStdString(w.cannotRun);
  } catch (const std::exception& e) {
    b.unavailable = QString::fromStdString(e.what());
  }
  return b;
}

}  // namespace

void RunController::addRemote(const QString& address) {
  const QString a = address.trimmed();
  try {
    execute::remoteAddress(("remote:" + a).toStdString());
  } catch (const std::exception& e) {
    emit message(QString::fromStdString(e.what()));
    return;
  }
  emit message(tr("connecting to the worker at %1…").arg(a));
  remoteJob_.start([a](const JobContext&) { return probeRemote(a); },
                   [this](JobOutcome<BackendInfo> o) {
                     if (!o.ok()) emit message(o.error);
                     else acceptRemote(*o.value);
                   });
}

void RunController::reconnect() {
  if (!backend().remote.isEmpty()) addRemote(backend().remote);
}

// Lists (or updates) the worker; chooses it when it can run, and tells the driver again when it was chosen.
void RunController::acceptRemote(const BackendInfo& b) {
  backends();
  size_t at = backends_.size();
  for (size_t i = 0; i < backends_.size(); ++i)
    if (backends_[i].name == b.name) at = i;
  if (at == backends_.size()) backends_.push_back(b);
  else backends_[at] = b;
  emit backendsChanged();
  if (!b.unavailable.isEmpty()) {
    emit message(tr("%1: %2").arg(b.name, b.unavailable));
    if (at == chosen_) emit backendChanged(b);
    return;
  }
  emit message(tr("%1: connected, %2 ms").arg(b.device).arg(b.latencyMs, 0, 'f', 1));
  if (at != chosen_) return setBackend(b.name);
  if (auto d = session_->driver()) d->setBackend(b.kind, {}, b.remote.toStdString());
  emit backendChanged(b);
}

}  // namespace tessera::ui
