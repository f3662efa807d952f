#pragma once
// The one door from views to the core. Long work runs on a worker thread; the result comes back through a
// queued signal as one object. A newer request supersedes an older one (its result is dropped).
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "ir/graph.h"

namespace tessera::ui {

// What a finished load hands to the views.
struct LoadedModel {
  QString path;
  std::shared_ptr<const Graph> graph;  // null when loading failed
  QString error;                       // one line naming the file and the problem
};

class SessionController : public QObject {
  Q_OBJECT
 public:
  explicit SessionController(QObject* parent = nullptr);
  ~SessionController() override;

  // Starts loading on a worker thread; modelLoaded() follows.
  void openModel(const QString& path);
  std::shared_ptr<const Graph> graph() const { return graph_; }
  QString modelPath() const { return path_; }

 signals:
  void busyChanged(bool busy, const QString& what);
  void modelLoaded(const tessera::ui::LoadedModel& result);

 private:
  void acceptLoad(quint64 job, const LoadedModel& result);

  std::shared_ptr<const Graph> graph_;
  QString path_;
  std::atomic<quint64> latestJob_{0};
};

}  // namespace tessera::ui

Q_DECLARE_METATYPE(tessera::ui::LoadedModel)
