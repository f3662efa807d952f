#include "tune/tuner.h"

#include <algorithm>
#include <optional>

#include "ir/enum_names.h"
#include "ir/error.h"
#include "runtime/execute/measure.h"
#include "tune/cache.h"
#include "tune/candidates.h"

namespace tessera::tune {
namespace {

using execute::CompiledModel;

struct Job {
  size_t kernel;                  // index into the model
  kernel::Kernel lowered;
  CacheKey key;
  std::vector<Candidate> chosen;  // measured, rank order (the default appended when not among them)
  size_t firstVariant = 0;        // its variants' position in the batch
};

void report(const TuneOptions& o, TunePhase phase, const std::string& group, size_t done, size_t total) {
  if (o.progress) o.progress({phase, group, done, total});
}

// The saved trace replays on the lowered kernel (it may be stale after a template changed).
bool replays(const kernel::Kernel& lowered, const kernel::Trace& trace) {
  kernel::Kernel k = lowered.clone();
  try {
    kernel::replay(k, trace);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Looks the kernel up in the cache; fills `kt` on a hit.
bool fromCache(const TuningCache& cache, const Job& job, KernelTuning& kt, std::vector<std::string>& warnings) {
  std::string warning;
  std::optional<CacheEntry> e = cache.find(job.key, &warning);
  if (!warning.empty()) warnings.push_back("kernel " + kt.group + ": " + warning);
  if (!e) return false;
  if (!replays(job.lowered, e->trace)) {
    warnings.push_back("kernel " + kt.group + ": cached schedule no longer replays, tuning again");
    return false;
  }
  kt.cacheHit = true;
  kt.status = TuneStatus::Cached;
  kt.candidates = e->candidates;
  kt.bestMs = e->bestMs;
  kt.predictedMs = e->predictedMs;
  kt.modelPickMs = e->modelPickMs;
  kt.verifiedAgainst = e->verifiedAgainst;
  kt.params = e->params;
  kt.trace = e->trace;
  return true;
}

// The top k by predicted time, and the default when it is not among them.
std::vector<Candidate> choose(const CandidateSet& set, int topK) {
  std::vector<Candidate> out(set.ranked.begin(), set.ranked.begin() + std::min<size_t>(set.ranked.size(), size_t(std::max(1, topK))));
  bool hasDefault = std::any_of(out.begin(), out.end(), [](const Candidate& c) { return c.isDefault; });
  if (!hasDefault)
    for (const Candidate& c : set.ranked)
      if (c.isDefault) out.push_back(c);
  return out;
}

// Makes candidate `c` of the job the kept one.
void keep(const Job& job, size_t c, double ms, KernelTuning& kt) {
  const Candidate& pick = job.chosen[c];
  kt.status = TuneStatus::Tuned;
  kt.params = pick.params;
  kt.bestMs = ms;
  kt.predictedMs = pick.estimate.ms;
  kt.trace = {};
  scheduleWith(job.lowered, pick.params, &kt.trace);
}

// Picks the fastest verified candidate of a job from the batch's timings into `kt`; its index in job.chosen, or
// -1 when none ran and verified.
int pickFastest(const Job& job, const execute::MeasureReport& mr, KernelTuning& kt, std::vector<std::string>& warnings) {
  const std::vector<execute::VariantTiming>& timings = mr.timings;
  execute::Expected against = mr.expected.empty() ? execute::Expected::Nothing : mr.expected[job.kernel];
  kt.verifiedAgainst = against == execute::Expected::Model ? "default" : execute::expectedName(against);
  int best = -1;
  for (size_t c = 0; c < job.chosen.size(); ++c) {
    const execute::VariantTiming& t = timings[job.firstVariant + c];
    kt.measurements.push_back({job.chosen[c].params, job.chosen[c].estimate.ms, t.ms, t.status, t.pruned});
    if (t.status != execute::KernelStatus::Cancelled && t.status != execute::KernelStatus::NotRun) ++kt.measured;
    if (c == 0 && t.verified) kt.modelPickMs = t.ms;
    if (job.chosen[c].isDefault && t.verified) kt.defaultMs = t.ms;
    if (!t.verified) {
      if (!t.message.empty()) warnings.push_back("kernel " + kt.group + " candidate " + std::to_string(c) + ": " + execute::kernelStatusName(t.status) + ": " + t.message);
      continue;
    }
    if (best < 0 || t.ms < timings[job.firstVariant + size_t(best)].ms) best = int(c);
  }
  if (best < 0) {
    kt.status = TuneStatus::Untuned;
    kt.message = "no candidate ran and verified";
    return -1;
  }
  keep(job, size_t(best), timings[job.firstVariant + size_t(best)].ms, kt);
  return best;
}

// Stores the kept candidate in the cache, unless the tune was cancelled part-way (not worth remembering).
void store(const Job& job, const TuningCache& cache, const KernelTuning& kt, std::vector<std::string>& warnings) {
  if (kt.status != TuneStatus::Tuned || kt.measured < int(job.chosen.size())) return;
  CacheEntry e{job.key, kt.params, kt.trace, kt.bestMs, kt.predictedMs, kt.modelPickMs, kt.candidates, kt.measured,
               kt.verifiedAgainst};
  try {
    cache.store(e);
  } catch (const std::exception& ex) {
    warnings.push_back(std::string("tuning cache: ") + ex.what());
  }
}

// The model with every kernel at its template default: what candidates are compared with above the reference
// limit (a session's model may carry replayed schedules).
CompiledModel withDefaultSchedules(const CompiledModel& m) {
  bool replayed = std::any_of(m.kernels.begin(), m.kernels.end(), [](const auto& k) { return k.replayed; });
  if (!replayed) return m;
  std::vector<kernel::KernelSpec> specs;
  for (const auto& k : m.kernels) specs.push_back(k.spec);
  return execute::compileKernels(m.graph, specs);
}

// A kernel's job: its lowering and the cache key it is remembered under on `target`.
Job jobFor(const CompiledModel& m, size_t i, const Target& target) {
  Job job{i, kernel::lowerToLoops(*m.graph, m.kernels[i].spec), {}, {}, 0};
  job.key = {kernelSignature(job.lowered), kernel::templateName(job.lowered), target.device, target.toolkit};
  return job;
}

// Kernel i's entry in the report: from the cache when it holds one (and `useCache`), else its candidates ranked
// by the cost model, the chosen ones appended to `variants` and the job to `jobs` for measuring.
KernelTuning planKernel(const CompiledModel& m, size_t i, const Target& target, const TuneOptions& o,
                        const TuningCache& cache, std::vector<Job>& jobs, std::vector<execute::KernelVariant>& variants,
                        std::vector<kernel::Trace>& traces, std::vector<std::string>& warnings) {
  const execute::CompiledKernel& ck = m.kernels[i];
  KernelTuning kt;
  kt.group = ck.spec.id;
  kt.nodes = ck.spec.nodeIds;
  if (ck.onHost() || o.cancel.cancelled()) {  // a host group has no schedule to tune
    kt.status = TuneStatus::Skipped;
    kt.message = ck.onHost() ? ck.placement.describe() : "cancelled";
    return kt;
  }
  Job job = jobFor(m, i, target);
  kt.signature = job.key.signature;
  kt.templateName = job.key.templateName;
  report(o, TunePhase::Rank, kt.group, i, m.kernels.size());
  if (o.useCache && fromCache(cache, job, kt, warnings)) return kt;
  CandidateSet set = rankCandidates(job.lowered, target.costDevice, cost::kernelFlops(*m.graph, job.lowered),
                                    o.maxCombinations, o.cancel);
  kt.candidates = int(set.ranked.size());
  job.chosen = choose(set, o.topK);
  if (!job.chosen.empty()) kt.predictedMs = job.chosen.front().estimate.ms;
  job.firstVariant = variants.size();
  for (const Candidate& c : job.chosen) {
    traces.emplace_back();
    variants.push_back({i, scheduleWith(job.lowered, c.params, &traces.back())});
  }
  kt.status = TuneStatus::Untuned;
  jobs.push_back(std::move(job));
  return kt;
}

// A pick other than the template's default is timed once more beside the default, the two in one batch: a
// machine busy during the first batch (a build, a test suite) can make the default, or any candidate, look
// several times slower than it is, and a tune remembers its pick for every later run. The pick stays only when
// it is still the faster; otherwise the default is kept, at its new time, and the kernel's message says why.
template <typename Measure>
void confirmPicks(const std::vector<Job>& jobs, std::vector<int>& picks, const std::vector<execute::KernelVariant>& variants,
                  const std::vector<kernel::Trace>& traces, Measure measure, TuneReport& r) {
  std::vector<execute::KernelVariant> again;
  std::vector<kernel::Trace> againTraces;
  std::vector<std::pair<size_t, size_t>> pairs;  // (job, the default's index in its chosen)
  for (size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    auto d = std::find_if(job.chosen.begin(), job.chosen.end(), [](const Candidate& c) { return c.isDefault; });
    if (picks[j] < 0 || d == job.chosen.end() || size_t(d - job.chosen.begin()) == size_t(picks[j])) continue;
    if (r.kernels[job.kernel].defaultMs < 0) continue;  // the default did not verify: nothing to compare with
    size_t def = size_t(d - job.chosen.begin());
    for (size_t c : {size_t(picks[j]), def}) {
      again.push_back(variants[job.firstVariant + c]);
      againTraces.push_back(traces[job.firstVariant + c]);
    }
    pairs.push_back({j, def});
  }
  if (pairs.empty()) return;
  execute::MeasureReport mr = measure(again, againTraces);
  for (size_t i = 0; i < pairs.size(); ++i) {
    auto [j, def] = pairs[i];
    const execute::VariantTiming &pick = mr.timings[2 * i], &dflt = mr.timings[2 * i + 1];
    KernelTuning& kt = r.kernels[jobs[j].kernel];
    if (pick.verified && (!dflt.verified || pick.ms < dflt.ms)) continue;
    kt.message = "the fastest candidate (" + std::to_string(kt.bestMs) + " ms) measured again at " +
                 std::to_string(pick.ms) + " ms against the default's " + std::to_string(dflt.ms) + ": the default kept";
    keep(jobs[j], def, dflt.ms, kt);
    picks[j] = int(def);
  }
}

// Measures every job's variants in one batch, picks each job's fastest, confirms picks that are not the default
// and stores them.
void measureJobs(const CompiledModel& m, const std::vector<Job>& jobs,
                 const std::vector<execute::KernelVariant>& variants, const std::vector<kernel::Trace>& traces,
                 execute::BackendKind backend, const TuneOptions& o, const TuningCache& cache, TuneReport& r) {
  execute::MeasureOptions mo;
  mo.reps = o.reps;
  mo.warmup = o.warmup;
  mo.arch = o.arch;
  mo.remote = o.remote;
  mo.cancel = o.cancel;
  mo.pruneFactor = o.pruneFactor;
  mo.referenceLimit = o.referenceLimit;
  mo.progress = [&](size_t done, size_t total) { report(o, TunePhase::Measure, "", done, total); };
  auto measure = [&](const std::vector<execute::KernelVariant>& vs, const std::vector<kernel::Trace>& ts) {
    return o.measure ? o.measure(withDefaultSchedules(m), vs, ts, backend, mo)
                     : execute::measureVariants(withDefaultSchedules(m), vs, backend, mo);
  };
  execute::MeasureReport mr = measure(variants, traces);
  std::vector<int> picks;
  for (const Job& job : jobs) picks.push_back(pickFastest(job, mr, r.kernels[job.kernel], r.warnings));
  if (!o.cancel.cancelled()) confirmPicks(jobs, picks, variants, traces, measure, r);
  for (const Job& job : jobs) store(job, cache, r.kernels[job.kernel], r.warnings);
}

// Where nothing can run: the chosen candidates with their predictions only, nothing measured or cached.
void rankedOnly(const std::vector<Job>& jobs, const std::string& cannotRun, TuneReport& r) {
  r.warnings.push_back(cannotRun + ": ranked by the cost model only, nothing measured or cached");
  for (const Job& job : jobs) {
    KernelTuning& k = r.kernels[job.kernel];
    k.message = cannotRun;
    for (const Candidate& c : job.chosen) k.measurements.push_back({c.params, c.estimate.ms, -1, execute::KernelStatus::NotRun});
  }
}

}  // namespace

const std::string& Measurement::statusName() const {
  static const std::string prunedName = "pruned";
  return pruned ? prunedName : execute::kernelStatusName(status);
}

const std::string& tunePhaseName(TunePhase p) {
  static const EnumNames<TunePhase> names = {
      {TunePhase::Rank, "rank"}, {TunePhase::Measure, "measure"}, {TunePhase::Done, "done"}};
  return enumName(names, p, "tune phase");
}

const std::string& tuneStatusName(TuneStatus s) {
  static const EnumNames<TuneStatus> names = {
      {TuneStatus::Tuned, "tuned"}, {TuneStatus::Cached, "cached"}, {TuneStatus::Untuned, "untuned"}, {TuneStatus::Skipped, "skipped"}};
  return enumName(names, s, "tune status");
}

execute::ScheduleSet TuneReport::schedules() const {
  execute::ScheduleSet s;
  for (const auto& k : kernels)
    if (k.status == TuneStatus::Tuned || k.status == TuneStatus::Cached) s.traces[execute::ScheduleSet::keyOf(k.nodes)] = k.trace;
  return s;
}

nlohmann::json TuneReport::toJson() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : kernels) {
    nlohmann::json j = {{"group", k.group},
                        {"template", k.templateName},
                        {"candidates", k.candidates},
                        {"candidates_measured", k.measured},
                        {"cache", k.cacheHit ? "hit" : "miss"},
                        {"best_ms", k.bestMs},
                        {"predicted_ms", k.predictedMs},
                        {"model_pick_ms", k.modelPickMs},
                        {"default_ms", k.defaultMs},
                        {"status", tuneStatusName(k.status)},
                        {"verified_against", k.verifiedAgainst},
                        {"params", k.params}};
    if (!k.message.empty()) j["message"] = k.message;
    nlohmann::json ms = nlohmann::json::array();
    for (const Measurement& m : k.measurements)
      ms.push_back({{"params", m.params}, {"predicted_ms", m.predictedMs}, {"ms", m.ms}, {"status", m.statusName()}});
    j["measurements"] = ms;
    ks.push_back(j);
  }
  return {{"backend", backend}, {"device", device},     {"toolkit", toolkit},   {"cache_dir", cacheDir},
          {"kernels", ks},      {"warnings", warnings}, {"cancelled", cancelled}};
}

TuneReport tuneModel(const CompiledModel& m, execute::BackendKind backend, const TuneOptions& o) {
  TuneReport r;
  r.backend = backend == execute::BackendKind::Cuda ? "cuda" : "cpu";
  r.cacheDir = o.cacheDir.empty() ? defaultCacheDir() : o.cacheDir;
  Target target = describeTarget(backend, {o.arch, r.cacheDir, true, false, o.remote});
  r.device = target.device;
  r.toolkit = target.toolkit;
  r.costDevice = target.costDevice;
  TuningCache cache(r.cacheDir);
  std::vector<Job> jobs;
  std::vector<execute::KernelVariant> variants;
  std::vector<kernel::Trace> traces;  // one per variant
  // One entry per kernel, in model order (r.kernels[i] is kernel i).
  for (size_t i = 0; i < m.kernels.size(); ++i)
    r.kernels.push_back(planKernel(m, i, target, o, cache, jobs, variants, traces, r.warnings));
  if (!variants.empty() && target.cannotRun.empty()) measureJobs(m, jobs, variants, traces, backend, o, cache, r);
  else if (!variants.empty()) rankedOnly(jobs, target.cannotRun, r);
  r.cancelled = o.cancel.cancelled();
  report(o, TunePhase::Done, "", m.kernels.size(), m.kernels.size());
  return r;
}

execute::ScheduleSet cachedSchedules(const CompiledModel& m, const Target& target, const std::string& cacheDir,
                                     std::vector<std::string>* hits, std::vector<std::string>* warnings) {
  execute::ScheduleSet s;
  TuningCache cache(cacheDir.empty() ? defaultCacheDir() : cacheDir);
  std::vector<std::string> ignored;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const execute::CompiledKernel& ck = m.kernels[i];
    if (ck.onHost()) continue;
    Job job = jobFor(m, i, target);
    KernelTuning kt;
    kt.group = ck.spec.id;
    if (!fromCache(cache, job, kt, warnings ? *warnings : ignored)) continue;
    s.traces[execute::ScheduleSet::keyOf(ck.spec.nodeIds)] = kt.trace;
    if (hits) hits->push_back(ck.spec.id);
  }
  return s;
}

}  // namespace tessera::tune
