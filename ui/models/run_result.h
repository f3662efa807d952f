#pragma once
// What a run job hands back to the GUI thread as one object: the executor's report, the backend and device it
// ran on, the peak rates its roofline shares are measured against, and the group kinds for labels.
#include <QString>
#include <map>
#include <string>

#include <memory>

#include "compare/tensor_values.h"
#include "runtime/execute/executor.h"

namespace tessera::ui {

// The device's ceilings for the roofline (from core/cost's device description when known).
struct DevicePeaks {
  QString name;        // "NVIDIA H200", "host CPU, 16 threads"
  double gbps = 0;     // DRAM copy bandwidth
  double gflops = 0;   // fp32 arithmetic (FMA counted as 2)
  QString source;      // where the figures come from, for tooltips
  // The last-level cache (GPU: L2), whose bandwidth is the roof of a kernel whose buffers fit in it; 0: unknown.
  double cacheGbps = 0;
  double cacheBytes = 0;
  bool known() const { return gbps > 0 && gflops > 0; }
};

// A run's tensor values, kept when asked (RunController::setKeepValues) within a memory budget: the run's own
// (graph inputs, initializers, each kernel's outputs), the reference interpreter's for the same names and
// inputs, and each node's worst relative error against it. Never saved in a session.
struct TensorValues {
  compare::Values run, reference;
  std::map<std::string, double> nodeErrors;
  std::vector<std::string> dropped;  // past the budget
  int64_t bytes = 0;
};

struct RunResult {
  QString backend;  // "reference", "cpu", "cuda"
  execute::RunReport report;
  DevicePeaks peaks;
  std::map<std::string, std::string> kinds;  // group id → kind ("gemm+epilogue")
  QString error;     // the job itself failed (no kernels, an exception): why
  double wallMs = 0; // the whole job: generate, build, run, verify, baseline (so far, while baselinePending)
  bool baselinePending = false;  // shown before the unfused baseline, which is still being built and timed
  bool predicted = false;  // the cost model filled KernelReport::predictedMs
  QString timing;  // how its kernels were timed (reps, warm-ups, a time budget): the run panel's summary tooltip
  std::shared_ptr<const TensorValues> values;  // null unless values were kept
};

// The fraction of the roofline a kernel reached: max(GFLOP/s ÷ peak, GB/s ÷ bandwidth), the larger of the two
// because the slower resource is the one the kernel must saturate. -1 when it did not run or peaks are unknown.
// The larger of GFLOP/s over the compute peak and GB/s over the bandwidth: the last-level cache's when the
// kernel's buffers fit in it (a small kernel run again and again reads them from there), else DRAM's. -1 when
// the kernel did not run or the peaks are unknown.
double rooflineShare(const execute::KernelReport& kernel, const DevicePeaks& peaks);
// The bandwidth that roofs `kernel`: the cache's or DRAM's (rooflineShare).
double bandwidthRoof(const execute::KernelReport& kernel, const DevicePeaks& peaks);
// FLOPs per byte moved (GFLOP/s ÷ GB/s); 0 when nothing moved.
double arithmeticIntensity(const execute::KernelReport& kernel);
// The key that matches a kernel across runs even when group ids shift: its node ids.
std::string kernelKey(const execute::KernelReport& kernel);
// The session form of a run (docs/sessions.md, field last_run): RunReport::toJson plus the peaks and the group
// kinds; and back (RunReport::fromJson, then those two): a missing field keeps its default, a wrong type
// throws Error naming the field.
nlohmann::json runToJson(const RunResult& run);
RunResult runFromJson(const nlohmann::json& j);
// Summary for the status bar and the panel: "cpu · 0.82 ms · unfused 1.9 ms (2.3× faster) · all verified", and
// for a run that stopped early where and why ("the run stopped before kernel k2: node 'frob' ...").
QString runSummary(const RunResult& run);

}  // namespace tessera::ui
