#pragma once
// The window's session files (.tessera, docs/sessions.md): opening a model or a session, Save / Save As,
// autosave (on a timer and shortly after each change) and recovery of a newer autosave when a file is opened.
// The core reads and writes the file (core/session); this class turns the controller's state into a Session
// and back. A session reopens by recompiling its model with its options and overrides (deterministic, and
// checked against the fingerprint saved with it); stored results (last run, tuning, schedule traces) are
// handed to the panels that own them through SessionParts, never recomputed.
#include <QObject>
#include <QString>
#include <functional>
#include <optional>

#include "session/session.h"

class QMainWindow;
class QTimer;

namespace tessera::ui {

class SessionController;
struct LoadedModel;

// The questions the window asks. Every answer comes back through a callback, so the defaults can be
// non-modal message boxes and tests can answer at once (nothing ever blocks an offscreen run).
struct SessionPrompts {
  // An autosave newer than `original` exists; answer(true) restores it.
  std::function<void(const QString& autosave, const QString& original, std::function<void(bool)> answer)> offerRecovery;
  // A file could not be opened or saved; `message` names the file and the problem.
  std::function<void(const QString& title, const QString& message)> showError;
};

class SessionFiles : public QObject {
  Q_OBJECT
 public:
  SessionFiles(SessionController* controller, QMainWindow* window);

  void setPrompts(SessionPrompts prompts) { prompts_ = std::move(prompts); }
  const SessionPrompts& prompts() const { return prompts_; }

  // A .tessera file opens as a session (FILE.tessera#BRANCH: on that branch); anything else as a model. When a newer autosave of it exists, the
  // file opens as saved and the autosave is offered; accepting opens the autosave in its place.
  void open(const QString& path);
  // Writes the session to `path` (atomic); false after showing the error. Save() without a path uses the
  // current session file, and returns false when there is none (the window then asks for one).
  bool saveAs(const QString& path);
  bool save();
  // The session as it would be saved now.
  Session currentSession() const;

  QString sessionPath() const { return sessionPath_; }
  // The file the user opened last: the session, else the model.
  QString documentPath() const { return sessionPath_.isEmpty() ? modelPath_ : sessionPath_; }
  // Unsaved changes: an override since the last save, a panel's part, or a restored autosave.
  bool dirty() const;
  void setEmbedModel(bool embed) { embedModel_ = embed; }
  bool embedModel() const { return embedModel_; }

  // Autosave: the key is the session file, or the model before a first save.
  QString autosaveKey() const { return documentPath(); }
  // Writes the autosave now when something changed since the last save or autosave; returns its path.
  QString autosaveNow();
  void setAutosaveInterval(int ms);

 signals:
  // One line for the status bar and the log (warnings such as a changed model file included).
  void message(const QString& line);
  void dirtyChanged(bool dirty);
  // A session (or model) finished opening and its state is shown.
  void opened(const QString& path);

 private:
  // An open in flight: restored once its compile lands.
  struct Pending {
    Session session;   // as read (a plain model: its path and hash)
    QString label;     // the path the controller reports back
    QString document;  // the session file to save to next (empty: none yet)
    bool isSession = false, fromAutosave = false;
  };
  void openSessionFile(const QString& path, const QString& document, bool fromAutosave, const std::string& branch = {});
  void openModelFile(const QString& path);
  void onModelLoaded(const LoadedModel& result);
  void markDirty();
  void fail(const QString& title, const QString& message);

  SessionController* controller_;
  QMainWindow* window_;
  SessionPrompts prompts_;
  QTimer* autosaveTimer_;  // periodic
  QTimer* changeTimer_;    // shortly after a change
  QString sessionPath_, modelPath_;
  Session base_;  // the model reference and the fields no panel owns, as opened
  std::optional<Pending> pending_;
  bool extraDirty_ = false;       // a part changed, or an autosave was restored
  bool autosavePending_ = false;  // something changed since the last save or autosave
  bool embedModel_ = false;
};

}  // namespace tessera::ui
