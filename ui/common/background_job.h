#pragma once
// The one way the window runs long work. start() hands the work a cancellation token and a progress reporter,
// runs it on a thread pool and delivers its outcome (a value, or an error as a value) on the owner's thread.
// The newest request wins: a new start() or cancel() fires the running job's token, so the core stops it at its
// next boundary (a pass, a node, a kernel, a repetition), and drops whatever it would still deliver. The owner
// never sees a result, an error or a progress report of a job that is not the latest.
#include <QCoreApplication>
#include <QMetaObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "ir/cancel.h"

namespace tessera::ui {

// What the work sees: its token, a progress reporter, and a way to hand a partial result (a snapshot) to the
// owner's thread; both are safe to call from the worker and deliver nothing once the job is not the latest.
struct JobContext {
  CancelToken cancel;
  std::function<void(const QString& what, int done, int total)> progress;
  std::function<void(std::function<void()> onOwnerThread)> post;
  void report(const QString& what, int done, int total) const {
    if (progress) progress(what, done, total);
  }
};

// A finished job: its value, or the error it threw (one line).
template <class Result>
struct JobOutcome {
  std::optional<Result> value;
  QString error;
  bool ok() const { return value.has_value(); }
};

template <class Result>
class BackgroundJob {
 public:
  using Work = std::function<Result(const JobContext&)>;
  using Done = std::function<void(JobOutcome<Result>)>;
  using Progress = std::function<void(const QString& what, int done, int total)>;

  // `owner` receives the outcome and progress on its thread; `pool` null: the global pool.
  explicit BackgroundJob(QObject* owner, QThreadPool* pool = nullptr) : owner_(owner), pool_(pool) {
    Q_ASSERT(owner && QCoreApplication::instance() && owner->thread() == QCoreApplication::instance()->thread());
  }
  ~BackgroundJob() { cancel(); }
  BackgroundJob(const BackgroundJob&) = delete;
  BackgroundJob& operator=(const BackgroundJob&) = delete;

  // Cancels the running job (if any) and starts `work`. `done` and `progress` run on the owner's thread, only
  // while this job is the latest; a cancelled job delivers nothing.
  void start(Work work, Done done, Progress progress = {}) {
    cancel();
    const quint64 id = ++state_->latest;
    CancelSource source;
    current_ = source;
    running_ = true;
    auto state = state_;
    QPointer<QObject> owner(owner_);
    // Posted to the application object, not to the owner: the owner may be destroyed on its thread between a
    // check here on the worker and the post (a window closed while its kernels compiled crashed in postEvent),
    // so it is checked only where it lives. Owners live on the application's (GUI) thread.
    auto deliver = [state, id, owner](std::function<void()> f) {
      if (state->latest != id) return;
      QMetaObject::invokeMethod(QCoreApplication::instance(), [state, id, owner, f = std::move(f)] {
        if (owner && state->latest == id) f();
      }, Qt::QueuedConnection);
    };
    JobContext context{source.token(),
                       [deliver, progress](const QString& what, int done, int total) {
                         if (progress) deliver([progress, what, done, total] { progress(what, done, total); });
                       },
                       deliver};
    auto task = [this, state, id, context, work = std::move(work), done = std::move(done), deliver] {
      if (state->latest != id) return;  // superseded before it started
      JobOutcome<Result> outcome;
      try {
        outcome.value.emplace(work(context));
      } catch (const Cancelled&) {
        return;
      } catch (const std::exception& e) {
        outcome.error = QString::fromStdString(e.what());
      }
      if (context.cancel.cancelled()) return;
      deliver([this, done, outcome = std::move(outcome)]() mutable {
        running_ = false;
        done(std::move(outcome));
      });
    };
    (pool_ ? pool_ : QThreadPool::globalInstance())->start(std::move(task));
  }

  // Stops the running job: its token fires and nothing of it is delivered.
  void cancel() {
    ++state_->latest;
    if (current_) current_->cancel();
    current_.reset();
    running_ = false;
  }
  bool running() const { return running_; }
  quint64 latest() const { return state_->latest; }

 private:
  struct State {
    std::atomic<quint64> latest{0};
  };
  QObject* owner_;
  QThreadPool* pool_;
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::optional<CancelSource> current_;
  bool running_ = false;
};

}  // namespace tessera::ui
