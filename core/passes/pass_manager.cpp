#include "passes/pass_manager.h"

#include <chrono>

#include "ir/error.h"
#include "ops/verify.h"

namespace tessera {

bool Fuel::consume() {
  if (remaining_) {
    if (*remaining_ <= 0) return false;
    --*remaining_;
  }
  ++used_;
  return true;
}

PassContext::PassContext(const std::string& passName, const std::vector<PassStatistic>& declared, Fuel& fuel,
                         CancelToken cancel)
    : passName_(passName), fuel_(fuel), cancel_(std::move(cancel)) {
  for (const PassStatistic& s : declared) stats_.emplace_back(s.name, 0);
}

void PassContext::count(const std::string& statistic, int64_t n) {
  for (auto& [name, value] : stats_)
    if (name == statistic) {
      value += n;
      return;
    }
  fail("pass '" + passName_ + "': statistic '" + statistic + "' is not declared");
}

int64_t PassContext::statistic(const std::string& name) const {
  for (const auto& [n, value] : stats_)
    if (n == name) return value;
  return 0;
}

PassManager::PassManager(PipelineOptions options) : options_(std::move(options)) {}

void PassManager::addPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }

void PassManager::addInstrumentation(std::shared_ptr<Instrumentation> instrumentation) {
  if (instrumentation) instrumentations_.push_back(std::move(instrumentation));
}

void PassManager::checkOptions() const {
  auto inPipeline = [&](const std::string& name) {
    for (const auto& p : passes_)
      if (p->name() == name) return true;
    return false;
  };
  // A misspelt name must not silently leave the pipeline as it was.
  for (const std::string& name : options_.disabled)
    if (!inPipeline(name)) fail("cannot disable pass '" + name + "': it is not in the pipeline");
  if (!options_.stopAfter.empty()) {
    if (!inPipeline(options_.stopAfter))
      fail("cannot stop after pass '" + options_.stopAfter + "': it is not in the pipeline");
    if (options_.disabled.count(options_.stopAfter))
      fail("cannot stop after pass '" + options_.stopAfter + "': it is disabled");
  }
}

void PassManager::runOne(Pass& pass, Graph& graph, size_t index, Fuel& fuel) {
  for (auto& i : instrumentations_) i->beforePass(pass, graph);
  PassContext context(pass.name(), pass.statistics(), fuel, options_.cancel);
  auto start = std::chrono::steady_clock::now();
  double passMs = -1;  // the pass alone, without verification
  auto info = [&] {
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start;
    return PassRunInfo{index, context.statistics(), passMs >= 0 ? passMs : ms.count()};
  };
  std::string failure;
  int64_t fuelBefore = fuel.used();
  try {
    pass.run(graph, context);
    passMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    options_.cancel.check();  // on a large graph, verifying and recording a step take as long as a pass
    // A pass rewrites only after tryRewrite (the fuel rule), so one that spent no fuel left the graph as it
    // was (an analysis: fusion, plan-memory; infer-shapes, whose types the verification would infer again):
    // verifying it again took a third of a 50,000-node compile.
    if (options_.verifyEach && fuel.used() > fuelBefore) {
      std::vector<std::string> problems = verifyGraph(graph);
      if (!problems.empty()) failure = "the graph no longer verifies: " + problems.front();
    }
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {  // Error, and anything a bug in a pass throws (out_of_range, bad_alloc)
    failure = e.what();
  }
  if (!failure.empty()) {
    PassRunInfo done = info();
    for (auto& i : instrumentations_) i->afterFailure(pass, graph, done, failure);
    fail("pass '" + pass.name() + "' failed: " + failure);
  }
  options_.cancel.check();
  PassRunInfo done = info();
  for (auto& i : instrumentations_) i->afterPass(pass, graph, done);
}

size_t PassManager::run(Graph& graph) {
  checkOptions();
  Fuel fuel(options_.fuel);
  size_t ran = 0;
  for (auto& pass : passes_) {
    if (options_.disabled.count(pass->name())) continue;
    options_.cancel.check();
    runOne(*pass, graph, ran++, fuel);
    rewrites_ = fuel.used();
    if (pass->name() == options_.stopAfter) break;
  }
  rewrites_ = fuel.used();
  return ran;
}

}  // namespace tessera
