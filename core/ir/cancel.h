#pragma once
// The one cancellation token of the core. Whoever starts long work (the window, a CLI signal handler, the tuner)
// keeps a CancelSource and hands its token down; the pass manager, compile, the reference interpreter,
// measurement, the tuner, the CPU compiler process and runs ask it at their natural boundaries (before a pass, a
// node, a kernel, a repetition, while waiting for a child process) and stop by throwing Cancelled. A
// default-constructed token is never cancelled, so code that cannot be cancelled passes nothing.
#include <atomic>
#include <memory>
#include <string>

#include "ir/error.h"

namespace tessera {

// Thrown where cancelled work stops; derives from Error so a caller that only reports errors still reports it.
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled") {}
};

class CancelToken {
 public:
  CancelToken() = default;  // never cancelled
  bool cancelled() const { return flag_ && flag_->load(std::memory_order_relaxed); }
  // Throws Cancelled when cancelled; the one way cancelled work ends.
  void check() const {
    if (cancelled()) throw Cancelled();
  }
  // The flag itself, for code that polls an atomic (a child process waiting loop); null for a default token.
  const std::atomic<bool>* flag() const { return flag_.get(); }

 private:
  friend class CancelSource;
  explicit CancelToken(std::shared_ptr<std::atomic<bool>> flag) : flag_(std::move(flag)) {}
  std::shared_ptr<std::atomic<bool>> flag_;
};

// Owns a flag; its tokens see cancel() from any thread. Copies share the flag.
class CancelSource {
 public:
  CancelSource() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  CancelToken token() const { return CancelToken(flag_); }
  void cancel() const { flag_->store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace tessera
