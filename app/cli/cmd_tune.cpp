// tessera-cli tune: rank each kernel's schedules with the cost model, measure the best few on the backend, keep
// the fastest verified one and remember it in the tuning cache (docs/tuning.md). Progress goes to stderr.
#include <csignal>
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "frontend/model_io.h"
#include "driver/driver.h"
#include "ir/error.h"
#include "io/atomic_file.h"
#include "tune/distributed/distributed.h"
#include "tune/tuner.h"

namespace tessera::cli {
namespace {

struct TuneArgs {
  std::string model, backend = "cpu", saveSchedules, arch, cacheDir, tf32 = "off", memoryLimit;
  int topK = 8, reps = 5;
  double referenceLimit = tune::TuneOptions{}.referenceLimit;
  bool json = false, noCache = false, calibrateCpu = false, distributed = false;
};

// Ctrl+C cancels the tune: what was measured is reported (a lock-free atomic store is async-signal-safe).
const CancelSource interrupted;

void printText(const tune::TuneReport& r) {
  std::printf("tuned on %s (%s)\n", r.device.c_str(), r.backend.c_str());
  std::printf("  %-8s %-14s %5s %5s %-5s %10s %10s %10s %10s %-9s\n", "group", "template", "cands", "meas", "cache",
              "best_ms", "pred_ms", "pick_ms", "default_ms", "checked");
  for (const auto& k : r.kernels) {
    std::printf("  %-8s %-14s %5d %5d %-5s %10.4f %10.4f %10.4f %10.4f %-9s  %s\n", k.group.c_str(),
                k.templateName.c_str(), k.candidates, k.measured, k.cacheHit ? "hit" : "miss", k.bestMs, k.predictedMs,
                k.modelPickMs, k.defaultMs, k.verifiedAgainst.empty() ? "-" : k.verifiedAgainst.c_str(), tune::tuneStatusName(k.status).c_str());
    if (!k.message.empty()) std::printf("    (%s)\n", k.message.c_str());
  }
  std::printf("cache: %s\n", r.cacheDir.c_str());
}

int calibrate(const TuneArgs& a) {
  tune::Target t = tune::describeTarget(execute::BackendKind::Cpu, {a.arch, a.cacheDir, true, true, ""});
  std::printf("%s\n", t.costDevice.toJson().dump(2).c_str());
  return 0;
}

// Ranks other than 0 of a distributed tune measure what rank 0 sends them and print nothing on stdout.
int serveRank(const tune::distributed::Session& s, driver::Driver& d, execute::BackendKind backend) {
  tune::distributed::serveRank(s, d.defaultKernels(), backend, [](int rank, size_t done, size_t total) {
    std::fprintf(stderr, "tune: rank %d measured %zu/%zu candidates\n", rank, done, total);
  });
  return 0;
}

// Rank 0 of a distributed tune: the tune, its measurements spread over the ranks.
tune::TuneReport tuneDistributed(const tune::distributed::Session& s, driver::Driver& d, tune::TuneOptions o) {
  std::fprintf(stderr, "tune: %d ranks%s\n", s.size(), s.gpuNote().empty() ? "" : ("; " + s.gpuNote()).c_str());
  o.measure = tune::distributed::coordinator(
      s, [](int rank, size_t done, size_t total) { std::fprintf(stderr, "tune: rank %d measured %zu/%zu candidates\n", rank, done, total); },
      [](const std::string& note) { std::fprintf(stderr, "tune: %s\n", note.c_str()); });
  struct Stop {  // the other ranks wait for rank 0's word, whatever happens here
    const tune::distributed::Session& s;
    ~Stop() { tune::distributed::stopWorkers(s); }
  } stop{s};
  return d.tune(o);
}

int runTune(const TuneArgs& a) {
  if (a.calibrateCpu && a.model.empty()) return calibrate(a);
  if (a.model.empty()) fail("tune: a MODEL is needed (or --calibrate-cpu alone)");
  // MPI first: each rank picks its GPU before anything touches CUDA.
  std::unique_ptr<tune::distributed::Session> session;
  if (a.distributed) session = std::make_unique<tune::distributed::Session>();
  if (a.calibrateCpu) tune::describeTarget(execute::BackendKind::Cpu, {a.arch, a.cacheDir, true, true, ""});
  driver::DriverOptions options;
  const BackendChoice backend = chooseBackend(a.backend);
  options.backend = backend.kind;
  options.remote = backend.remote;
  options.arch = a.arch;
  options.cacheDir = a.cacheDir;
  options.tf32 = kernel::Tf32Policy::parse(a.tf32);
  driver::Driver d(std::make_shared<const Graph>(loadModel(a.model)), options);
  if (session && session->rank() != 0) return serveRank(*session, d, options.backend);
  if (!a.memoryLimit.empty()) execute::checkTuneHostMemory(d.kernels()->model, options.backend, memoryLimitOption(a.memoryLimit));
  tune::TuneOptions o;
  o.topK = a.topK;
  o.reps = a.reps;
  o.arch = a.arch;
  o.cacheDir = a.cacheDir;
  o.useCache = !a.noCache;
  o.referenceLimit = a.referenceLimit;
  o.cancel = interrupted.token();
  o.progress = [](const tune::Progress& p) {
    if (p.phase == tune::TunePhase::Rank) std::fprintf(stderr, "tune: ranking kernel %zu/%zu (%s)\n", p.done + 1, p.total, p.group.c_str());
    if (p.phase == tune::TunePhase::Measure) std::fprintf(stderr, "tune: measured %zu/%zu candidates\n", p.done, p.total);
  };
  auto previous = std::signal(SIGINT, [](int) { interrupted.cancel(); });
  tune::TuneReport r = session ? tuneDistributed(*session, d, o) : d.tune(o);
  std::signal(SIGINT, previous);
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (a.json) std::printf("%s\n", r.toJson().dump(2).c_str());
  else printText(r);
  if (!a.saveSchedules.empty()) writeFileAtomically(a.saveSchedules, r.schedules().save());
  return r.cancelled ? 1 : 0;
}

}  // namespace

void addTuneCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("tune", "Tune each kernel's schedule: cost model to rank, measurement to decide, a cache to remember");
  auto a = std::make_shared<TuneArgs>();
  cmd->add_option("MODEL", a->model, "Model file (.onnx or .tsr)");
  cmd->add_option("--backend", a->backend, "cpu (generated C++), cuda (generated CUDA), or remote:HOST:PORT (a worker's)")
      ->check(backendValidator({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--top-k", a->topK, "Candidates measured per kernel, best predicted first (plus the default)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--reps", a->reps, "Timed repetitions per candidate (median)")->check(CLI::Range(1, 10000))->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the result as JSON: {\"kernels\": [{group, candidates, candidates_measured, cache, best_ms, predicted_ms, model_pick_ms, verified_against, ...}]}");
  cmd->add_option("--reference-limit", a->referenceLimit,
                  "Check candidates against the reference interpreter for kernels up to this many FLOPs (plus elements "
                  "produced), above it against the default schedule's outputs; -1: always the reference")
      ->capture_default_str();
  cmd->add_option("--save-schedules", a->saveSchedules, "Write the tuned schedules (for run/compile --schedules)");
  cmd->add_option("--arch", a->arch, "CUDA architecture (sm_XX); default: the device's, or sm_90");
  addTf32Option(cmd, a->tf32);
  addThreadsOption(cmd);
  addMemoryLimitOption(cmd, a->memoryLimit);
  cmd->add_option("--cache-dir", a->cacheDir, "Tuning cache folder (default $TESSERA_CACHE_DIR, $XDG_CACHE_HOME/tessera or ~/.cache/tessera)");
  cmd->add_flag("--no-cache", a->noCache, "Tune again even when the cache has an entry (the result replaces it)");
  cmd->add_flag("--distributed", a->distributed,
                "Under mpirun: spread the candidates of all kernels over the ranks (one GPU each), rank 0 reports and "
                "fills the cache");
  cmd->add_flag("--calibrate-cpu", a->calibrateCpu, "Measure the host's bandwidth and FLOP rate for the cost model and cache them");
  cmd->callback([a, &exitCode] { exitCode = runTune(*a); });
}

}  // namespace tessera::cli
