#pragma once
// The pass manager: runs an ordered list of graph passes, calls instrumentation hooks around each one, and
// applies the pipeline options (stop after a pass, disabled passes, fuel). Passes know nothing about
// recording; the StepRecorder (step_recorder.h) is one instrumentation among others.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/cancel.h"
#include "ir/graph.h"

namespace tessera {

// A counter a pass bumps, declared up front so views can list it even when it stays zero.
struct PassStatistic {
  std::string name;         // "removed-nodes"
  std::string description;  // one line
};
using StatisticValues = std::vector<std::pair<std::string, int64_t>>;  // in declared order

// The rewrite budget shared by all passes of one run; a bad rewrite is found by bisecting on it.
class Fuel {
 public:
  explicit Fuel(std::optional<int64_t> units = std::nullopt) : remaining_(units) {}
  // True when one more rewrite may happen (and uses up one unit).
  bool consume();
  bool exhausted() const { return remaining_ && *remaining_ <= 0; }
  int64_t used() const { return used_; }

 private:
  std::optional<int64_t> remaining_;  // nullopt: unlimited
  int64_t used_ = 0;
};

// What one pass application sees besides the graph: its statistics and the shared fuel.
class PassContext {
 public:
  PassContext(const std::string& passName, const std::vector<PassStatistic>& declared, Fuel& fuel,
              CancelToken cancel = {});
  // Call before each rewrite; false means the fuel is out and the pass must leave the graph as it is. Throws
  // Cancelled when the compile was cancelled: a pass over a large graph stops at its next rewrite, not its end.
  bool tryRewrite() {
    cancel_.check();
    return fuel_.consume();
  }
  // Adds to a declared statistic; throws Error naming the pass for an undeclared one (a typo in a pass).
  void count(const std::string& statistic, int64_t n = 1);
  int64_t statistic(const std::string& name) const;
  const StatisticValues& statistics() const { return stats_; }

 private:
  std::string passName_;
  StatisticValues stats_;
  Fuel& fuel_;
  CancelToken cancel_;
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;     // "canonicalize": what pipelines and options refer to
  virtual std::string summary() const = 0;  // one line
  virtual std::vector<PassStatistic> statistics() const { return {}; }
  // Rewrites the graph in place; throws Error on failure.
  virtual void run(Graph& graph, PassContext& context) = 0;
};

// What a hook learns about a finished (or failed) pass application.
struct PassRunInfo {
  size_t index = 0;  // position in the pipeline, counting only passes that ran
  StatisticValues statistics;
  double wallMs = 0;
};

// Hooks around every pass; register several with PassManager::addInstrumentation.
class Instrumentation {
 public:
  virtual ~Instrumentation() = default;
  virtual void beforePass(const Pass&, const Graph&) {}
  virtual void afterPass(const Pass&, const Graph&, const PassRunInfo&) {}
  // After a pass threw; `graph` is whatever state the pass left (it may be half rewritten).
  virtual void afterFailure(const Pass&, const Graph&, const PassRunInfo&, const std::string& /*message*/) {}
};

struct PipelineOptions {
  std::string stopAfter;            // stop after the first application of this pass; empty: run all
  std::set<std::string> disabled;   // pass names to skip
  std::optional<int64_t> fuel;      // rewrites allowed in total; nullopt: unlimited
  bool verifyEach = true;           // verify the graph after each pass (ops/verify.h)
  // Asked before each pass, after it and after its verification; once cancelled, run() throws Cancelled (the
  // graph may hold the cancelled pass's rewrites, unverified and unrecorded).
  CancelToken cancel;
};

class PassManager {
 public:
  explicit PassManager(PipelineOptions options = {});
  void addPass(std::unique_ptr<Pass> pass);
  // Hooks run in registration order; the manager keeps them alive as long as it lives.
  void addInstrumentation(std::shared_ptr<Instrumentation> instrumentation);
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  const PipelineOptions& options() const { return options_; }

  // Runs the pipeline on `graph`. A failing pass (or a graph that no longer verifies after it) throws
  // Error "pass 'name' failed: …" after the afterFailure hooks ran. Throws as well, before running anything,
  // when an option names a pass that is not in the pipeline. Returns the number of passes that ran.
  size_t run(Graph& graph);
  // Rewrites consumed by the last run (the fuel used).
  int64_t rewrites() const { return rewrites_; }

 private:
  void checkOptions() const;
  void runOne(Pass& pass, Graph& graph, size_t index, Fuel& fuel);

  PipelineOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<std::shared_ptr<Instrumentation>> instrumentations_;
  int64_t rewrites_ = 0;
};

}  // namespace tessera
