#pragma once
// What one driver keeps between its runs of a model (the window's Run pressed again, `run --repeat`): a kernel
// backend that can be kept (the cpu backend: its worker with the modules it loaded, and the shared region the
// arena lives in) and, at the start of that region, the model's constant values (initializers, what its constant
// kernels make, their packed copies: arena.h, ConstantZone). A repeat then starts no worker, loads no module
// again, and neither copies, packs nor zeroes the weights. A run takes its slot out for as long as it runs (a
// run at the same time makes its own backend) and puts it back when it ends; the constants count as kept only
// after a run in which no kernel failed or disagreed, and only those that run placed.
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace tessera {
class Graph;
struct ReferenceResult;  // runtime/reference/interpreter.h
}

namespace tessera::execute {

class RunSession {
 public:
  RunSession();
  ~RunSession();
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  struct Kept;  // what a slot holds (runtime/execute/backend.h)
  // The slot `key` (a backend and the model's run in it), taken out: null when none is kept.
  std::unique_ptr<Kept> take(const std::string& key);
  void put(const std::string& key, std::unique_ptr<Kept> kept);
  void clear();  // drops every backend kept (its worker ends, its region is freed) and the reference

  // The reference interpreter's result of `graph` on the inputs named `inputs` (a seed, or a hash of the given
  // inputs), kept by the last run that ran it: a repeat, a run with new schedules and the unfused baseline (the
  // same graph) check against it without running it again. Null when none matches or `inputs` is "".
  std::shared_ptr<const ReferenceResult> reference(const std::shared_ptr<const Graph>& graph, const std::string& inputs);
  // Keeps `result` in place of the last (held between runs: at most kMaxReferenceBytes of values, else none).
  void keepReference(const std::shared_ptr<const Graph>& graph, const std::string& inputs,
                     std::shared_ptr<const ReferenceResult> result);
  static constexpr size_t kMaxReferenceBytes = size_t(1) << 30;

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Kept>> slots_;
  std::shared_ptr<const ReferenceResult> reference_;
  std::shared_ptr<const Graph> referenceGraph_;
  std::string referenceInputs_;
};

}  // namespace tessera::execute
