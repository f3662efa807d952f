#pragma once
// One way for the exporters to write a file: QSaveFile (a temporary file renamed into place), so a failed export
// never leaves half a file where a good one was.
#include <QObject>
#include <QSaveFile>
#include <QString>
#include <functional>

namespace tessera::ui {

// Returns an empty string on success, else one line naming the file and the problem.
inline QString writeFileAtomically(const QString& path, const std::function<bool(QIODevice&)>& write) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) return QObject::tr("%1: cannot write: %2").arg(path, file.errorString());
  if (!write(file)) {
    file.cancelWriting();
    return QObject::tr("%1: writing failed").arg(path);
  }
  if (!file.commit()) return QObject::tr("%1: cannot write: %2").arg(path, file.errorString());
  return {};
}

}  // namespace tessera::ui
