#pragma once
// The messages of a distributed tune (distributed.h), as JSON text: a share of variants (rank 0 to a rank) and
// its timings (back). Nothing here knows MPI.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/schedule/trace.h"
#include "runtime/execute/measure.h"

namespace tessera::tune::distributed {

// One variant of a share: its place in rank 0's batch, its kernel and the trace that schedules it.
struct ShareItem {
  size_t variant = 0, kernel = 0;
  kernel::Trace trace;
};

nlohmann::json shareToJson(const std::vector<ShareItem>& items, const execute::MeasureOptions& o);
// The variants rebuilt on `model` (lowered again, the trace replayed) and the options; throws Error naming the
// variant whose trace does not replay.
std::vector<execute::KernelVariant> shareFromJson(const nlohmann::json& j, const execute::CompiledModel& model,
                                                  std::vector<size_t>& batchIndex, execute::MeasureOptions& o);

// What a rank measured (or why it could not: `error`).
struct ShareResult {
  std::string error;
  std::vector<size_t> batchIndex;                 // per timing: its place in rank 0's batch
  std::vector<execute::VariantTiming> timings;
  std::vector<execute::Expected> expected;        // per model kernel
};

nlohmann::json resultToJson(const ShareResult& r);
ShareResult resultFromJson(const nlohmann::json& j);

}  // namespace tessera::tune::distributed
