// The tuning cache: round trip, corrupt and foreign files, concurrent writers in two processes; and the tuner
// re-tuning (with a warning) when its entry is corrupt.
#include <QtTest>

#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>

#include "runtime/cuda/cuda_driver.h"
#include "runtime/execute/compiled_model.h"
#include "tune/cache.h"
#include "tune/target.h"
#include "tune/candidates.h"
#include "tune/tuner.h"
#include "tune_fixtures.h"

using namespace tessera;
using namespace tessera::tune;
using tessera::tune::fixtures::transposeToTune;
namespace fs = std::filesystem;

namespace {

CacheEntry sampleEntry(double ms) {
  CacheEntry e;
  e.key = {"0123456789abcdef", "pointwise", "test device", "test toolkit"};
  e.params = {{"block_size", 128}};
  e.trace.instructions.push_back({"set_param", {"block_size"}, nlohmann::json::object(), {}, 128});
  e.bestMs = ms;
  e.predictedMs = 0.5;
  e.modelPickMs = 0.7;
  e.candidates = 12;
  e.measured = 3;
  e.verifiedAgainst = "default";
  return e;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

}  // namespace

class TestTuneCache : public QObject {
  Q_OBJECT
 private slots:
  void roundTrip();
  void corruptFileIsIgnoredWithWarning();
  void foreignKeyIsIgnored();
  void concurrentWritersLeaveAValidFile();
  void signatureIgnoresModelNames();
  void candidatesAreDistinctAndRanked();
  void candidatesKeepThePrecision();
  void tunerRetunesCorruptEntry();
  void cudaTuneMeasuresOnlyWithAGpu();
  void aLowCalibrationIsMeasuredAgain();
};

void TestTuneCache::roundTrip() {
  QTemporaryDir dir;
  TuningCache cache(dir.path().toStdString());
  CacheEntry e = sampleEntry(1.25);
  std::string warning;
  QVERIFY(!cache.find(e.key, &warning));
  QVERIFY(warning.empty());
  cache.store(e);
  QVERIFY(fs::exists(cache.pathFor(e.key)));
  QVERIFY(cache.pathFor(e.key).find("/tune/") != std::string::npos);
  auto got = cache.find(e.key, &warning);
  QVERIFY(got);
  QCOMPARE(got->bestMs, 1.25);
  QCOMPARE(got->params, e.params);
  QCOMPARE(got->trace, e.trace);
  QCOMPARE(got->measured, 3);
  QCOMPARE(got->verifiedAgainst, std::string("default"));
  CacheKey other = e.key;
  other.device = "another device";
  QVERIFY(cache.pathFor(other) != cache.pathFor(e.key));
  QVERIFY(!cache.find(other, &warning));
}

void TestTuneCache::corruptFileIsIgnoredWithWarning() {
  QTemporaryDir dir;
  TuningCache cache(dir.path().toStdString());
  CacheEntry e = sampleEntry(1);
  cache.store(e);
  for (const char* text : {"{ not json", "", "{\"format\": \"tessera-tuning\", \"version\": 1}", "[1, 2]"}) {
    writeText(cache.pathFor(e.key), text);
    std::string warning;
    QVERIFY(!cache.find(e.key, &warning));
    QVERIFY2(warning.find(cache.pathFor(e.key)) != std::string::npos, warning.c_str());
    QVERIFY2(warning.find("tuning again") != std::string::npos, warning.c_str());
  }
  cache.store(e);  // a good write replaces it
  std::string warning;
  QVERIFY(cache.find(e.key, &warning));
}

void TestTuneCache::foreignKeyIsIgnored() {
  QTemporaryDir dir;
  TuningCache cache(dir.path().toStdString());
  CacheEntry e = sampleEntry(1);
  CacheEntry foreign = e;
  foreign.key.toolkit = "other";
  nlohmann::json j = foreign.toJson();
  fs::create_directories(fs::path(cache.pathFor(e.key)).parent_path());
  writeText(cache.pathFor(e.key), j.dump());
  std::string warning;
  QVERIFY(!cache.find(e.key, &warning));
  QVERIFY(warning.find("another kernel") != std::string::npos);
}

// Two processes store the same key 200 times each: every read in between and the final file are whole entries
// and no temporary file is left behind.
void TestTuneCache::concurrentWritersLeaveAValidFile() {
  QTemporaryDir dir;
  std::string path = dir.path().toStdString();
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    QVERIFY(children[c] >= 0);
    if (children[c] == 0) {
      int bad = 0;
      try {
        TuningCache cache(path);
        for (int i = 0; i < 200; ++i) {
          cache.store(sampleEntry(c + 1));
          std::string warning;
          if (!cache.find(sampleEntry(0).key, &warning)) ++bad;
        }
      } catch (...) {
        ++bad;
      }
      _exit(bad == 0 ? 0 : 1);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    QCOMPARE(waitpid(child, &status, 0), child);
    QVERIFY(WIFEXITED(status));
    QCOMPARE(WEXITSTATUS(status), 0);
  }
  TuningCache cache(path);
  std::string warning;
  auto got = cache.find(sampleEntry(0).key, &warning);
  QVERIFY2(got, warning.c_str());
  QVERIFY(got->bestMs == 1 || got->bestMs == 2);
  int files = 0;
  for (const auto& f : fs::directory_iterator(fs::path(path) / "tune")) {
    ++files;
    QVERIFY2(f.path().extension() == ".json", f.path().c_str());
  }
  QCOMPARE(files, 1);
}

void TestTuneCache::signatureIgnoresModelNames() {
  auto a = kernel::fixtures::gemm(64, 64, 32);
  auto b = kernel::fixtures::gemm(64, 64, 32);
  b.spec.id = "g7";
  kernel::Kernel ka = kernel::fixtures::lower(a), kb = kernel::fixtures::lower(b);
  kb.nodeIds = {"other", "names"};
  QCOMPARE(kernelSignature(ka), kernelSignature(kb));
  QVERIFY(kernelSignature(ka) != kernelSignature(kernel::fixtures::lower(kernel::fixtures::gemm(64, 64, 64))));
}

void TestTuneCache::candidatesAreDistinctAndRanked() {
  auto c = kernel::fixtures::transpose(256, 256);
  CandidateSet set = rankCandidates(kernel::fixtures::lower(c), cost::loadDevice("h200"), -1);
  QCOMPARE(set.combinations, size_t(6));  // tile {8, 16, 32} x shared_tile {0, 1}
  QVERIFY(set.ranked.size() >= 2);
  QVERIFY(set.ranked.size() + set.duplicates + set.refused + set.infeasible == set.tried);
  for (size_t i = 1; i < set.ranked.size(); ++i) QVERIFY(set.ranked[i - 1].estimate.ms <= set.ranked[i].estimate.ms);
  QVERIFY(std::any_of(set.ranked.begin(), set.ranked.end(), [](const Candidate& x) { return x.isDefault; }));
}

// tf32 trades accuracy for time: the tuner's space of an f32 gemm keeps it at its default (0).
void TestTuneCache::candidatesKeepThePrecision() {
  kernel::Kernel k = kernel::fixtures::lower(kernel::fixtures::gemm(64, 64, 32));
  size_t full = 1, precise = 1;
  for (const auto& p : kernel::parameterSpace(k)) {
    full *= p.candidates.size();
    if (!p.changesPrecision) precise *= p.candidates.size();
  }
  QVERIFY(full > precise);
  CandidateSet set = rankCandidates(k, cost::loadDevice("h200"), -1, 64);
  QCOMPARE(set.combinations, precise);
  QVERIFY(!set.ranked.empty());
  for (const Candidate& c : set.ranked) QCOMPARE(c.params.at("tf32"), int64_t(0));
}

// A corrupt entry is reported and the kernel measured again; the next tune is a hit.
void TestTuneCache::tunerRetunesCorruptEntry() {
  QTemporaryDir dir;
  auto [m, o] = transposeToTune(64, 96, 2, dir.path().toStdString());
  std::shared_ptr<const Graph> graph = m.graph;
  const kernel::KernelSpec spec = m.kernels[0].spec;
  TuneReport first = tuneModel(m, execute::BackendKind::Cpu, o);
  QCOMPARE(first.kernels.size(), size_t(1));
  QCOMPARE(first.kernels[0].status, tune::TuneStatus::Tuned);
  QVERIFY(!first.kernels[0].cacheHit);
  QVERIFY(first.kernels[0].measured >= 2);
  QVERIFY(first.kernels[0].bestMs > 0);
  TuneReport second = tuneModel(m, execute::BackendKind::Cpu, o);
  QVERIFY(second.kernels[0].cacheHit);
  QCOMPARE(second.kernels[0].measured, 0);
  QCOMPARE(second.kernels[0].trace, first.kernels[0].trace);
  CacheKey key{first.kernels[0].signature, first.kernels[0].templateName, first.device, first.toolkit};
  writeText(TuningCache(o.cacheDir).pathFor(key), "{\"format\": \"tessera-tuning\", trunc");
  TuneReport third = tuneModel(m, execute::BackendKind::Cpu, o);
  QVERIFY(!third.kernels[0].cacheHit);
  QVERIFY(third.kernels[0].measured >= 2);
  QVERIFY(std::any_of(third.warnings.begin(), third.warnings.end(),
                      [](const std::string& w) { return w.find("tuning again") != std::string::npos; }));
  QVERIFY(tuneModel(m, execute::BackendKind::Cpu, o).kernels[0].cacheHit);
  // The tuned trace replays through the executor's saved schedules.
  execute::ScheduleSet s = third.schedules();
  execute::CompiledModel replayed = execute::compileKernels(graph, {spec}, &s);
  QVERIFY(replayed.kernels[0].replayed);
  QVERIFY(replayed.staleSchedules.empty());
}

// With a GPU the cuda backend measures like the cpu one; without one the tuner ranks by the model, lists its top
// candidates, measures and caches nothing, and says why.
void TestTuneCache::cudaTuneMeasuresOnlyWithAGpu() {
  QTemporaryDir dir;
  auto [m, o] = transposeToTune(256, 256, 3, dir.path().toStdString());
  TuneReport r = tuneModel(m, execute::BackendKind::Cuda, o);
  QCOMPARE(r.kernels.size(), size_t(1));
  const KernelTuning& k = r.kernels[0];
  QVERIFY(k.predictedMs > 0);
  QVERIFY(k.measurements.size() >= 3);
  if (cuda::cudaAvailability().available) {
    QCOMPARE(k.status, tune::TuneStatus::Tuned);
    QVERIFY(k.measured >= 3);
    QVERIFY(k.bestMs > 0);
    QVERIFY(tuneModel(m, execute::BackendKind::Cuda, o).kernels[0].cacheHit);
    return;
  }
  qInfo("no GPU (%s): checking the rank-only path", cuda::cudaAvailability().reason.c_str());
  QCOMPARE(k.status, tune::TuneStatus::Untuned);
  QCOMPARE(k.measured, 0);
  QVERIFY2(k.message.find("CUDA cannot run here") != std::string::npos, k.message.c_str());
  for (const Measurement& x : k.measurements) QCOMPARE(x.ms, -1.0);
  QVERIFY(!fs::exists(fs::path(o.cacheDir) / "tune"));
}

// The cpu's calibration is the best of three measurements a minute or more apart: one taken while the machine
// was busy (its figure here made 1 GFLOP/s, an hour old) is measured again by the next target that may
// calibrate, and the better figure stays; a fresh one is not measured again within the minute; three samples
// settle it. A target that may not calibrate reads the provisional figure as it is.
void TestTuneCache::aLowCalibrationIsMeasuredAgain() {
  if (QStandardPaths::findExecutable("c++").isEmpty() && QStandardPaths::findExecutable("g++").isEmpty())
    QSKIP("no C++ compiler on PATH: the calibration's loops cannot be built here");
  QTemporaryDir dir;
  TargetOptions calibrate{"", dir.path().toStdString(), true, false, ""};
  TargetOptions look = calibrate;
  look.calibrate = false;
  Target first = describeTarget(execute::BackendKind::Cpu, calibrate);
  QVERIFY(first.measured && first.provisional);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(dir.path().toStdString()) / "devices")) files.push_back(e.path());
  QCOMPARE(files.size(), size_t(1));
  auto stored = [&] { return nlohmann::json::parse(std::ifstream(files[0])); };
  QCOMPARE(stored()["calibration_samples"].get<int>(), 1);
  auto rewrite = [&](int samples, int64_t at) {
    nlohmann::json j = stored();
    j["fp32_gflops"] = 1.0;
    j["calibration_samples"] = samples;
    j["calibrated_at"] = at;
    writeText(files[0].string(), j.dump());
  };
  const int64_t anHourAgo = int64_t(std::time(nullptr)) - 3600;
  rewrite(1, anHourAgo);
  Target seen = describeTarget(execute::BackendKind::Cpu, look);
  QCOMPARE(seen.costDevice.fp32Gflops, 1.0);
  QVERIFY(seen.provisional);
  Target again = describeTarget(execute::BackendKind::Cpu, calibrate);
  QVERIFY2(again.costDevice.fp32Gflops > 1.0, qPrintable(QString::number(again.costDevice.fp32Gflops)));
  QCOMPARE(stored()["calibration_samples"].get<int>(), 2);
  QVERIFY(stored()["calibrated_at"].get<int64_t>() > anHourAgo);
  rewrite(2, int64_t(std::time(nullptr)));  // measured just now: not again within the minute
  QCOMPARE(describeTarget(execute::BackendKind::Cpu, calibrate).costDevice.fp32Gflops, 1.0);
  rewrite(3, anHourAgo);  // settled
  Target settled = describeTarget(execute::BackendKind::Cpu, calibrate);
  QVERIFY(!settled.provisional);
  QCOMPARE(settled.costDevice.fp32Gflops, 1.0);
}

QTEST_GUILESS_MAIN(TestTuneCache)
#include "test_tune_cache.moc"
