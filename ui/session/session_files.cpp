#include "ui/session/session_files.h"

#include <QFileInfo>
#include <QMainWindow>
#include <QMessageBox>
#include <QTimer>
#include <QUndoStack>

#include "frontend/text/tsr.h"
#include "ir/fnv.h"
#include "passes/fingerprint.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_state.h"

namespace tessera::ui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

SessionPrompts defaultPrompts(QWidget* parent) {
  SessionPrompts p;
  // Non-modal boxes: the window (and anything driving it) goes on while a question is open.
  p.offerRecovery = [parent](const QString& autosave, const QString& original, std::function<void(bool)> answer) {
    auto* box = new QMessageBox(QMessageBox::Question, QObject::tr("Recover unsaved work?"),
                                QObject::tr("%1 has unsaved changes from an earlier session, autosaved at %2.\n"
                                            "Restore them? (No keeps the file as saved and discards the autosave.)")
                                    .arg(original, QFileInfo(autosave).lastModified().toString("yyyy-MM-dd HH:mm")),
                                QMessageBox::Yes | QMessageBox::No, parent);
    box->setObjectName("recoveryBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    QObject::connect(box, &QMessageBox::finished, box, [answer](int r) { answer(r == QMessageBox::Yes); });
    box->open();
  };
  p.showError = [parent](const QString& title, const QString& message) {
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, parent);
    box->setObjectName("sessionErrorBox");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  };
  return p;
}

}  // namespace

SessionFiles::SessionFiles(SessionController* controller, QMainWindow* window)
    : QObject(window), controller_(controller), window_(window), prompts_(defaultPrompts(window)),
      autosaveTimer_(new QTimer(this)), changeTimer_(new QTimer(this)) {
  connect(controller_, &SessionController::modelLoaded, this, &SessionFiles::onModelLoaded);
  // Overrides change through the undo stack: its clean state is "saved".
  connect(controller_->undoStack(), &QUndoStack::indexChanged, this, &SessionFiles::markDirty);
  connect(controller_->sessionParts(), &SessionParts::changed, this, [this] {
    extraDirty_ = true;
    markDirty();
  });
  // Where the user looks is saved too, but is not worth an immediate write.
  connect(controller_, &SessionController::stepChanged, this, [this] { autosavePending_ = true; });
  connect(controller_, &SessionController::selectionChanged, this, [this] { autosavePending_ = true; });
  changeTimer_->setSingleShot(true);
  changeTimer_->setInterval(2000);
  connect(changeTimer_, &QTimer::timeout, this, &SessionFiles::autosaveNow);
  connect(autosaveTimer_, &QTimer::timeout, this, &SessionFiles::autosaveNow);
  setAutosaveInterval(60000);
}

void SessionFiles::setAutosaveInterval(int ms) {
  autosaveTimer_->setInterval(ms);
  changeTimer_->setInterval(std::min(ms, 2000));
  autosaveTimer_->start();
}

bool SessionFiles::dirty() const { return extraDirty_ || !controller_->undoStack()->isClean(); }

void SessionFiles::open(const QString& pathOrRef) {
  // FILE.tessera#BRANCH opens the session on that branch.
  const SessionRef ref = parseSessionRef(pathOrRef.toStdString());
  const QString path = qs(ref.path);
  const bool isSession = isSessionPath(ref.path);
  auto openAsSaved = [this, path, isSession, branch = ref.branch] {
    isSession ? openSessionFile(path, path, false, branch) : openModelFile(path);
  };
  std::optional<std::string> autosave;
  try {
    if (prompts_.offerRecovery && QFileInfo::exists(path)) autosave = findRecoverableAutosave(path.toStdString());
  } catch (const std::exception& e) {
    emit message(tr("autosave: %1").arg(e.what()));
  }
  openAsSaved();  // at once: an unanswered question never holds up the file
  if (!autosave) return;
  const QString autosaved = qs(*autosave);
  prompts_.offerRecovery(autosaved, path, [this, path, isSession, autosaved](bool restore) {
    if (restore) openSessionFile(autosaved, isSession ? path : QString(), true);
    else discardAutosave(path.toStdString());
  });
}

void SessionFiles::openModelFile(const QString& path) {
  Pending p;
  p.label = path;
  p.document = path;
  try {
    p.session = sessionForModel(path.toStdString());  // the hash of what is compiled now
  } catch (const std::exception&) {
    p.session.model.path = path.toStdString();  // unreadable: the controller reports it
  }
  pending_ = std::move(p);
  controller_->openModel(path);
}

void SessionFiles::openSessionFile(const QString& path, const QString& document, bool fromAutosave,
                                   const std::string& branch) {
  Session s;
  try {
    s = loadSession(path.toStdString());
    if (!branch.empty()) switchBranch(s, branch);
  } catch (const std::exception& e) {
    // Nothing has changed yet: the window keeps the model and state it had.
    return fail(tr("Could not open the session"), QString::fromUtf8(e.what()));
  }
  for (const std::string& w : s.warnings) emit message(tr("warning: %1").arg(qs(w)));
  Pending p;
  p.label = s.model.path.empty() ? path : qs(s.model.path);
  p.document = document;
  p.isSession = true;
  p.fromAutosave = fromAutosave;
  p.session = s;
  pending_ = std::move(p);
  controller_->openModel(pending_->label, [s] { return loadSessionModel(s); }, compileOptionsOf(s));
}

void SessionFiles::onModelLoaded(const LoadedModel& result) {
  if (!pending_ || result.path != pending_->label) return;  // a recompile, or an open superseded by another
  Pending p = std::move(*pending_);
  pending_.reset();
  if (!result.graph) return;  // the window reports the failed load; what was open stays open
  sessionPath_ = p.isSession ? p.document : QString();
  modelPath_ = p.isSession ? qs(p.session.model.path) : p.document;
  base_ = p.session;
  base_.warnings.clear();
  controller_->sessionParts()->clearKept();
  if (p.isSession) {
    const std::vector<std::string> notes = restoreSessionState(*controller_, *window_, p.session);
    for (const std::string& n : notes) emit message(qs(n));
  }
  extraDirty_ = p.fromAutosave;  // restored work is not saved anywhere yet
  autosavePending_ = false;
  emit dirtyChanged(dirty());
  emit opened(documentPath());
  if (p.fromAutosave) emit message(tr("Restored the autosave of %1").arg(documentPath()));
}

Session SessionFiles::currentSession() const {
  Session s = base_;
  if (embedModel_ && !s.model.embeddedTsr && controller_->input()) s.model.embeddedTsr = printTsr(*controller_->input());
  storeSessionState(*controller_, *window_, s);
  return s;
}

bool SessionFiles::save() { return !sessionPath_.isEmpty() && saveAs(sessionPath_); }

bool SessionFiles::saveAs(const QString& path) {
  if (!controller_->input()) {
    fail(tr("Nothing to save"), tr("Open a model before saving a session (%1).").arg(path));
    return false;
  }
  try {
    saveSession(currentSession(), path.toStdString());
  } catch (const std::exception& e) {
    fail(tr("Could not save the session"), QString::fromUtf8(e.what()));
    return false;
  }
  discardAutosave(autosaveKey().toStdString());  // the model's autosave, before a first save
  sessionPath_ = path;
  discardAutosave(path.toStdString());
  controller_->undoStack()->setClean();
  extraDirty_ = false;
  autosavePending_ = false;
  emit dirtyChanged(false);
  emit message(tr("Saved %1").arg(path));
  return true;
}

QString SessionFiles::autosaveNow() {
  if (!autosavePending_ || !dirty() || !controller_->input() || pending_) return {};
  const std::string key = autosaveKey().toStdString();
  try {
    writeAutosave(currentSession(), key);
  } catch (const std::exception& e) {
    emit message(tr("autosave failed: %1").arg(e.what()));
    return {};
  }
  autosavePending_ = false;
  return qs(autosavePath(key));
}

void SessionFiles::markDirty() {
  if (pending_) return;  // an open in flight resets the undo stack
  autosavePending_ = true;
  changeTimer_->start();
  emit dirtyChanged(dirty());
}

void SessionFiles::fail(const QString& title, const QString& text) {
  emit message(text);
  if (prompts_.showError) prompts_.showError(title, text);
}

}  // namespace tessera::ui
