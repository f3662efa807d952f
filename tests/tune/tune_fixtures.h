#pragma once
// Models for the tuner tests.
#include <memory>
#include <string>
#include <utility>

#include "kernel/kernel_fixtures.h"
#include "runtime/execute/compiled_model.h"
#include "tune/tuner.h"

namespace tessera::tune::fixtures {

// A one-kernel model (a rows x cols transpose) and tune options with top k = reps = `k` and cache `dir`.
inline std::pair<execute::CompiledModel, TuneOptions> transposeToTune(int64_t rows, int64_t cols, int k,
                                                                      const std::string& dir) {
  auto c = kernel::fixtures::transpose(rows, cols);
  auto graph = std::make_shared<const Graph>(std::move(c.graph));
  TuneOptions o;
  o.topK = k;
  o.reps = k;
  o.cacheDir = dir;
  return {execute::compileKernels(graph, {c.spec}), o};
}

}  // namespace tessera::tune::fixtures
