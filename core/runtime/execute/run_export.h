#pragma once
// A run's results in other tools' formats, from the report's JSON form (RunReport::toJson, also what a session
// stores as its last run): the per-kernel table as CSV, and the run as a Chrome trace (chrome://tracing,
// Perfetto) with one complete ("X") event per kernel in execution order.
#include <nlohmann/json.hpp>
#include <string>

namespace tessera::execute {

// One header line, then one row per kernel: group, status, verified, ms, GB/s, GFLOP/s, max_rel_err, nodes.
// Throws Error when `report` has no "kernels" array.
std::string kernelTableCsv(const nlohmann::json& report);
// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}: kernels back to back from ts 0, ts and dur
// in microseconds, args with group, nodes, GB/s, GFLOP/s, status. Kernels that did not run are left out (and
// counted in otherData.not_run). Throws Error when `report` has no "kernels" array.
nlohmann::json chromeTrace(const nlohmann::json& report);

}  // namespace tessera::execute
