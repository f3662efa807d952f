#include "runtime/execute/run_session.h"

#include "runtime/execute/backend.h"
#include "runtime/reference/interpreter.h"

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
  std::shared_ptr<const ReferenceResult> reference;
  std::lock_guard<std::mutex> lock(mutex_);
  dropped.swap(slots_);
  reference.swap(reference_);
  referenceGraph_ = nullptr;
}

std::shared_ptr<const ReferenceResult> RunSession::reference(const std::shared_ptr<const Graph>& graph,
                                                             const std::string& inputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool same = !inputs.empty() && reference_ && referenceGraph_ == graph && referenceInputs_ == inputs;
  return same ? reference_ : nullptr;
}

void RunSession::keepReference(const std::shared_ptr<const Graph>& graph, const std::string& inputs,
                               std::shared_ptr<const ReferenceResult> result) {
  size_t bytes = 0;
  for (const auto& [name, t] : result->values) bytes += t.byteSize();
  const bool keep = !inputs.empty() && bytes <= kMaxReferenceBytes;
  std::shared_ptr<const ReferenceResult> replaced;  // freed outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  replaced = std::move(reference_);
  reference_ = keep ? std::move(result) : nullptr;
  referenceGraph_ = keep ? graph : nullptr;
  referenceInputs_ = inputs;
}

}  // namespace tessera::execute
