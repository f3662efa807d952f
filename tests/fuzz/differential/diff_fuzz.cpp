// diff_fuzz: differential fuzzing of the compiler. Random valid graphs (graph_gen.h), compiled with random
// fusion overrides and template parameters, run on a backend and checked against the reference interpreter
// (evaluate.h). A failing case is minimized (minimize.h) and written to --out as a .tsr reproducer; copy it
// to tests/fuzz/differential/regressions/ with the fix, and `diff_fuzz --replay DIR` checks it from then on.
//   diff_fuzz --seconds 60 --seed 1 --backend cpu --out DIR
//   diff_fuzz --replay tests/fuzz/differential/regressions --backend cpu
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "evaluate.h"
#include "frontend/text/tsr.h"
#include "graph_gen.h"
#include "io/atomic_file.h"
#include "ir/error.h"
#include "minimize.h"
#include "runtime/cuda/cuda_driver.h"

namespace fs = std::filesystem;
using namespace tessera;
using namespace tessera::fuzz;

namespace {

struct Args {
  double seconds = 30, caseTimeout = 120;
  uint64_t seed = 1;
  int maxCases = 0, minimizeEvaluations = 80;
  std::string backend = "cpu", out = "diff_fuzz_out", replay;
};

// Asked in a child: the CUDA driver must not be initialized before the fork of the cases that use it.
bool gpuPresent() {
  pid_t pid = fork();
  if (pid == 0) _exit(cuda::cudaAvailability().available ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

FuzzCase drawCase(uint64_t seed) {
  FuzzCase c;
  Graph g = generateGraph(seed);
  std::mt19937_64 rng(seed * 7919 + 1);
  c.overrides = drawOverrides(g, rng);
  c.tsr = printTsr(g);
  c.inputSeed = seed;
  c.drawParams = true;
  c.paramSeed = seed;
  return c;
}

// Minimizes a failing case (its drawn parameters made explicit) and writes the reproducer; returns its path.
std::string reproduce(FuzzCase c, const Verdict& v, const Args& a, uint64_t seed) {
  execute::BackendKind backend = execute::parseBackend(a.backend);
  c.params = v.params;
  c.drawParams = false;
  auto sameFailure = [&](const FuzzCase& k) { return evaluateIsolated(k, backend, a.caseTimeout).outcome == v.outcome; };
  MinimizeResult m = minimizeCase(c, sameFailure, a.minimizeEvaluations);
  Verdict last = evaluateIsolated(m.smallest, backend, a.caseTimeout);
  std::string path = (fs::path(a.out) / (outcomeName(v.outcome) + "-" + std::to_string(seed) + ".tsr")).string();
  writeFileAtomically(path, reproducerText(m.smallest, last.outcome == v.outcome ? last : v, a.backend));
  std::printf("  minimized in %d evaluations (%d steps kept): %s\n", m.evaluations, m.kept, path.c_str());
  return path;
}

int fuzzRun(const Args& a) {
  execute::BackendKind backend = execute::parseBackend(a.backend);
  std::map<Outcome, int> counts;
  int cases = 0, kernels = 0, fused = 0, refusedParams = 0, failures = 0;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  for (uint64_t seed = a.seed; elapsed() < a.seconds && (a.maxCases == 0 || cases < a.maxCases); ++seed, ++cases) {
    FuzzCase c = drawCase(seed);
    Verdict v = evaluateIsolated(c, backend, a.caseTimeout);
    ++counts[v.outcome];
    kernels += v.kernels, fused += v.fusedKernels, refusedParams += v.refusedParams;
    if (!isFailure(v.outcome)) continue;
    ++failures;
    std::printf("seed %llu: %s: %s\n", (unsigned long long)seed, outcomeName(v.outcome).c_str(), v.detail.c_str());
    std::fflush(stdout);
    reproduce(c, v, a, seed);
  }
  std::printf("diff_fuzz: %d graphs compared on %s in %.0f s (seeds %llu..%llu): ", cases, a.backend.c_str(), elapsed(),
              (unsigned long long)a.seed, (unsigned long long)(a.seed + uint64_t(cases)) - 1);
  for (const auto& [o, n] : counts) std::printf("%s %d, ", outcomeName(o).c_str(), n);
  std::printf("%d kernels (%d fused), %d parameter draws refused by their template\n", kernels, fused, refusedParams);
  return failures ? 1 : 0;
}

// Every reproducer in the folder must now pass.
int replay(const Args& a) {
  execute::BackendKind backend = execute::parseBackend(a.backend);
  int total = 0, failing = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(a.replay))
    if (e.path().extension() == ".tsr") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    ++total;
    Verdict v = evaluateIsolated(readReproducer(f.string()), backend, a.caseTimeout);
    bool ok = !isFailure(v.outcome) && v.outcome != Outcome::Invalid;
    failing += !ok;
    std::printf("%s %s: %s%s\n", ok ? "ok  " : "FAIL", f.filename().c_str(), outcomeName(v.outcome).c_str(),
                v.detail.empty() ? "" : (" (" + v.detail + ")").c_str());
  }
  std::printf("diff_fuzz: %d of %d reproducers in %s pass on %s\n", total - failing, total, a.replay.c_str(), a.backend.c_str());
  if (total == 0) std::printf("diff_fuzz: no .tsr reproducer in %s\n", a.replay.c_str());
  return failing || total == 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Differential fuzzing: random graphs on a backend against the reference interpreter");
  Args a;
  app.add_option("--seconds", a.seconds, "Stop drawing new graphs after this long")->capture_default_str();
  app.add_option("--seed", a.seed, "The first graph's seed (then seed+1, ...)")->capture_default_str();
  app.add_option("--backend", a.backend, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("--out", a.out, "Folder for minimized reproducers and the module cache")->capture_default_str();
  app.add_option("--max-cases", a.maxCases, "Stop after this many graphs (0: only --seconds)");
  app.add_option("--minimize-evaluations", a.minimizeEvaluations, "Budget of runs to minimize one failure")->capture_default_str();
  app.add_option("--case-timeout", a.caseTimeout, "Seconds before a case counts as hung")->capture_default_str();
  app.add_option("--replay", a.replay, "Run every .tsr reproducer in this folder instead of fuzzing");
  CLI11_PARSE(app, argc, argv);
  try {
    fs::create_directories(a.out);
    // Kernels compiled by the cases stay out of the user's cache and are shared by the minimizer's reruns.
    if (!std::getenv("TESSERA_CACHE_DIR")) setenv("TESSERA_CACHE_DIR", fs::absolute(fs::path(a.out) / "cache").c_str(), 1);
    if (a.backend == "cuda" && !gpuPresent()) {
      std::printf("diff_fuzz: skipped: --backend cuda and no GPU here\n");
      return 0;
    }
    return a.replay.empty() ? fuzzRun(a) : replay(a);
  } catch (const Error& e) {
    std::fprintf(stderr, "diff_fuzz: %s\n", e.what());
    return 2;
  }
}
