#pragma once
// The autotuner: for each kernel of a compiled model, rank its template's candidates with the cost model,
// measure the best `topK` (and the template's default, so tuning never loses to it) on the backend through
// execute::measureVariants, keep the fastest verified one, and remember it in the tuning cache keyed by kernel
// signature, template, device and toolkit. Results are schedule traces (an execute::ScheduleSet), which
// `run --schedules`, sessions and compileKernels replay like any saved schedule.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/templates/templates.h"
#include "runtime/execute/measure.h"
#include "runtime/execute/compiled_model.h"
#include "runtime/execute/executor.h"
#include "tune/target.h"

namespace tessera::tune {

// Where a tune is: ranking a kernel's candidates, measuring the batch, or done.
enum class TunePhase { Rank, Measure, Done };
const std::string& tunePhaseName(TunePhase p);  // "rank", "measure", "done"

struct Progress {
  TunePhase phase = TunePhase::Rank;  // Rank: once per kernel; Measure: once per candidate; Done: once
  std::string group;  // the kernel being ranked ("" while measuring a batch)
  size_t done = 0, total = 0;
};

struct TuneOptions {
  int topK = 8;
  int reps = 5, warmup = 1;
  std::string arch;
  std::string cacheDir;           // "" = defaultCacheDir()
  bool useCache = true;           // read entries (results are stored either way)
  size_t maxCombinations = 4096;  // larger parameter spaces are sampled
  double pruneFactor = 3;         // a candidate 3x slower than the best so far on its first run is not timed further
  // Candidates are checked against the reference interpreter (run on the kernel's nodes alone) up to this much
  // work (FLOPs + elements produced: 2e9 multiply-adds, a few seconds); above it against the template
  // default's outputs on the same backend (verified_against "default"). < 0: always the reference.
  double referenceLimit = 4e9;
  CancelToken cancel;  // between candidates and repetitions: the report is marked cancelled, what was measured kept
  std::function<void(const Progress&)> progress;
  std::string remote;  // "HOST:PORT": measured by the worker there (runtime/execute/remote.h); "": here
  // The measurement engine: execute::measureVariants when empty. A distributed tune (tune/distributed/) spreads
  // the variants over MPI ranks; `traces[i]` schedules variant i's kernel from its lowered form (what another
  // process replays).
  std::function<execute::MeasureReport(const execute::CompiledModel&, const std::vector<execute::KernelVariant>& variants,
                                       const std::vector<kernel::Trace>& traces, execute::BackendKind,
                                       const execute::MeasureOptions&)>
      measure;
};

// One measured candidate, for comparing the model with the device.
struct Measurement {
  kernel::TemplateParams params;
  double predictedMs = -1, ms = -1;
  execute::KernelStatus status = execute::KernelStatus::NotRun;  // the variant's (measure.h)
  bool pruned = false;  // one run, far slower than the best (its status is then not reported)
  const std::string& statusName() const;  // the status's name, or "pruned"
};

// What the tuner did with a kernel.
enum class TuneStatus {
  Tuned,    // measured, and the fastest verified candidate kept
  Cached,   // the tuning cache had its schedule
  Untuned,  // no candidate ran and verified, or nothing could be measured (why in `message`)
  Skipped,  // a host group (nothing to schedule), or the tune was cancelled before it
};
const std::string& tuneStatusName(TuneStatus s);  // "tuned", "cached", "untuned", "skipped"

struct KernelTuning {
  std::string group, templateName, signature;
  std::vector<std::string> nodes;
  bool cacheHit = false;
  int candidates = 0;              // distinct schedules that can launch
  int measured = 0;                // candidates timed on the backend (0 on a cache hit)
  double bestMs = -1;              // the kept candidate's measured time
  double predictedMs = -1;         // the cost model's estimate for it
  double modelPickMs = -1;         // measured time of the cost model's first choice
  double defaultMs = -1;           // measured time of the template's default
  kernel::TemplateParams params;   // of the kept candidate
  kernel::Trace trace;
  std::vector<Measurement> measurements;  // rank order (cache misses only)
  std::string verifiedAgainst;     // "reference", "default" (the default's own outputs: unchecked), "" = not measured
  TuneStatus status = TuneStatus::Untuned;
  std::string message;
};

struct TuneReport {
  std::string backend, device, toolkit, cacheDir;
  cost::Device costDevice;
  std::vector<KernelTuning> kernels;
  std::vector<std::string> warnings;  // ignored cache entries, failures; one line each
  bool cancelled = false;
  execute::ScheduleSet schedules() const;  // traces of every tuned or cached kernel
  nlohmann::json toJson() const;           // {"kernels": [{group, candidates, candidates_measured, cache, ...}]}
};

TuneReport tuneModel(const execute::CompiledModel& model, execute::BackendKind backend, const TuneOptions& options);

// The cached schedules of the model's kernels for this target (no tuning, no measurement); `hits` lists the
// groups found, `warnings` ignored entries.
execute::ScheduleSet cachedSchedules(const execute::CompiledModel& model, const Target& target, const std::string& cacheDir,
                                     std::vector<std::string>* hits, std::vector<std::string>* warnings);

}  // namespace tessera::tune
