#include "ui/session_controller.h"

#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include "frontend/model_io.h"
#include "ir/error.h"

namespace tessera::ui {

SessionController::SessionController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<LoadedModel>();
}

SessionController::~SessionController() = default;

void SessionController::openModel(const QString& path) {
  quint64 job = ++latestJob_;
  emit busyChanged(true, tr("Loading %1").arg(path));
  QPointer<SessionController> self(this);
  (void)QtConcurrent::run([self, job, path] {
    LoadedModel result{path, nullptr, {}};
    try {
      result.graph = std::make_shared<const Graph>(loadModel(path.toStdString()));
    } catch (const std::exception& e) {
      result.error = QString::fromStdString(e.what());
    }
    // Back to the GUI thread as one whole object; dropped if the controller is gone.
    if (self)
      QMetaObject::invokeMethod(
          self.data(), [self, job, result] { if (self) self->acceptLoad(job, result); }, Qt::QueuedConnection);
  });
}

void SessionController::acceptLoad(quint64 job, const LoadedModel& result) {
  if (job != latestJob_) return;  // superseded by a newer request
  if (result.graph) {
    graph_ = result.graph;
    path_ = result.path;
  }
  emit busyChanged(false, {});
  emit modelLoaded(result);
}

}  // namespace tessera::ui
