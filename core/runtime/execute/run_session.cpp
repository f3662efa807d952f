#include "runtime/execute/run_session.h"

#include "runtime/execute/backend.h"

namespace tessera::execute {

RunSession::RunSession() = default;
RunSession::~RunSession() = default;

std::unique_ptr<RunSession::Kept> RunSession::take(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slots_.find(key);
  if (it == slots_.end()) return nullptr;
  std::unique_ptr<Kept> kept = std::move(it->second);
  slots_.erase(it);
  return kept;
}

void RunSession::put(const std::string& key, std::unique_ptr<Kept> kept) {
  std::unique_ptr<Kept> replaced;  // destroyed outside the lock (a worker's end waits for the process)
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Kept>& slot = slots_[key];
  replaced = std::move(slot);
  slot = std::move(kept);
}

void RunSession::clear() {
  std::map<std::string, std::unique_ptr<Kept>> dropped;
  std::lock_guard<std::mutex> lock(mutex_);
  dropped.swap(slots_);
}

}  // namespace tessera::execute
