#pragma once
// What a run of a compiled model reports: per kernel its status, times and errors against the reference, and
// for the run its totals and messages; the same as JSON (toJson / fromJson, the CLI's --json and the window's
// saved runs). The status names are the JSON's strings, one list in run_report.cpp.
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/codegen.h"
#include "ir/tensor.h"

namespace tessera::execute {

// How a kernel (or a measured variant, measure.h) came out.
enum class KernelStatus {
  Ok,           // ran and matched what it was checked against
  Mismatch,     // ran; an output differs beyond the tolerance (the message names it)
  Unchecked,    // ran; not checked (RunOptions::verify off)
  NotCompiled,  // could not be lowered, generated or compiled (the message says why)
  NotRun,       // compiled and not (yet) run: cuda without a GPU, or the state before running
  Failed,       // the launch or an index check failed (the message says why)
  Cancelled,    // a measurement stopped by its cancel token before it ran (measure.h only)
};
const std::string& kernelStatusName(KernelStatus s);  // "ok", "mismatch", "unchecked", "not compiled", ...
KernelStatus parseKernelStatus(const std::string& name);  // throws Error naming the unknown status

struct KernelReport {
  std::string group, entry;
  std::vector<std::string> nodes;
  double ms = -1;      // median; -1 when it did not run
  double predictedMs = -1;  // the cost model's estimate; -1 when not predicted
  double gbps = 0;     // (bytes of inputs + outputs) / time
  double gflops = 0;   // nodeFlops summed over the group / time
  bool verified = false;
  double maxRelErr = 0;
  double maxAbsErr = 0;  // against the reference (relative errors blow up where a relu leaves 0)
  std::string precision;  // codegen's GeneratedKernel::precision: "tf32", or "" (its dtypes' own); sets the tolerance
  bool cached = false;    // its module came from the module cache (no compiler ran)
  // Every input is a constant (arena.h, constantKernels): computed once at load; its time is in onceMs,
  // not in the total.
  bool once = false;
  double compileMs = 0;   // the compiler's time for it (0 when cached or not generated)
  KernelStatus status = KernelStatus::NotRun;  // never Cancelled (a cancelled run throws)
  std::string message; // why, when not ok
  // A host group (placement.h): "control-flow: node 'if' (If) is control flow: ..." (the rule, then the
  // reason); its time is the reference interpreter's on the host, copies of its inputs and outputs included.
  // "" for a generated kernel.
  std::string host;
  bool onHost() const { return !host.empty(); }
};

struct RunReport {
  std::string backend, device;
  bool ran = false;              // kernels ran (false: cuda without a GPU, or nothing compiled)
  std::string cannotRun;         // why not, in a few words
  std::vector<KernelReport> kernels;
  double totalMs = 0;            // sum of the kernels' medians, but those of constants (once)
  double onceMs = 0;             // sum of the medians of the kernels of constants (computed once at load)
  double buildMs = 0;            // wall time of generating, compiling (or loading from the cache) and loading
  double keptBytes = 0;          // constants found in place from the driver's last run (run_session.h): not copied
  double baselineTotalMs = -1;   // the unfused baseline's sum; -1 when not run
  // The whole run timed as one, after each kernel ran on its own (executor.h): every kernel but the constants'
  // back to back, each launched from the host (wholeMs), and as one CUDA graph (graphMs, cuda); -1 when not
  // timed, and wholeNote says why.
  double wholeMs = -1, graphMs = -1;
  std::string wholeNote;
  bool outputsVerified = false;  // every graph output matched the reference
  std::vector<std::string> messages;  // errors and notes, one line each
  // Why the run stopped before its last kernel: a host group the reference cannot run (an op unknown to
  // Tessera), named; "" when every kernel had its turn. The kernels after it are "not run".
  std::string stopped;
  // Where the kernels ran: the remote worker's HOST:PORT (RunOptions::remote), "" for this machine.
  std::string worker;
  // Not in the JSON:
  std::vector<Tensor> outputs;   // in graph output order, when ran
  std::unordered_map<std::string, Tensor> values;  // by value name (RunOptions::keepValues): inputs, initializers, kernel outputs
  std::vector<codegen::GeneratedKernel> generated;  // per kernel (empty source when it could not be generated)

  nlohmann::json toJson() const;
  // Every field toJson writes; a missing field keeps its default, a field of the wrong type (or an unknown
  // status) throws Error naming it ("run report: kernels[2].ms: ...").
  static RunReport fromJson(const nlohmann::json& j);
};

}  // namespace tessera::execute
