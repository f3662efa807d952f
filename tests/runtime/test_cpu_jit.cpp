#include <QtTest>

#include <algorithm>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/cpu_threads.h"
#include "runtime/cpu/cpu_timing.h"
#include "runtime/cpu/cpu_worker.h"
#include "runtime/cpu/process.h"
#include "runtime/timing_budget.h"

using namespace tessera;
using namespace tessera::cpu;

namespace {

// c[i] = a[i] + b[i] over an OpenMP-parallel loop; also reports how many threads the region had.
const char* kVectorAdd = R"(
#include <omp.h>
extern "C" int vector_add(const float* a, const float* b, float* c, long n) {
  int threads = 1;
  #pragma omp parallel
  {
    #pragma omp single
    threads = omp_get_num_threads();
    #pragma omp for
    for (long i = 0; i < n; ++i) c[i] = a[i] + b[i];
  }
  return threads;
}
)";

using VectorAdd = int(const float*, const float*, float*, long);

// Runs vector_add over 1M floats and checks every value; a[i] = i/2, b[i] = 2, so c[i] = i/2 + 2 exactly.
void runVectorAdd(const SharedLibrary& lib) {
  const long n = 1 << 20;
  std::vector<float> a(n), b(n, 2.0f), c(n, -1.0f);
  for (long i = 0; i < n; ++i) a[i] = 0.5f * static_cast<float>(i);
  int threads = lib.function<VectorAdd>("vector_add")(a.data(), b.data(), c.data(), n);
  QVERIFY(threads >= 1);
  QCOMPARE(c[0], 2.0f);
  QCOMPARE(c[3], 3.5f);
  QCOMPARE(c[n - 1], 0.5f * static_cast<float>(n - 1) + 2.0f);
  long bad = 0;
  for (long i = 0; i < n; ++i) bad += c[i] != 0.5f * static_cast<float>(i) + 2.0f;
  QCOMPARE(bad, 0L);
}

std::vector<std::string> flagsWithoutNodelete() {
  std::vector<std::string> flags;
  for (const auto& f : CpuCompiler::defaultFlags())
    if (f != "-Wl,-z,nodelete") flags.push_back(f);
  return flags;
}

}  // namespace

namespace {

// An entry that writes its OpenMP team's size into the int its one argument points at.
const char* kTeamSize = R"(
#include <omp.h>
extern "C" void team_size(void** args) {
  int n = 0;
  #pragma omp parallel
  {
    #pragma omp single
    n = omp_get_num_threads();
  }
  *static_cast<int*>(args[0]) = n;
}
)";

// The team a kernel in a fresh worker runs with.
int workerTeam() {
  CpuBuild b = CpuCompiler().build(kTeamSize, "team_size");
  if (!b.ok) return -1;
  CpuWorker w;
  w.addModule(0, "team_size", "team_size", b.image);
  w.run(0, {0}, 0, 1, 0, CancelToken(), "team_size");
  int n = 0;
  std::memcpy(&n, w.region(sizeof n), sizeof n);
  return n;
}

}  // namespace

class TestCpuJit : public QObject {
  Q_OBJECT
 private slots:
  // setCpuThreads(n) is the workers' OMP_NUM_THREADS from then on, whatever this process's environment says;
  // 0 gives the environment back its say.
  void theThreadsSettingIsTheWorkersTeam() {
    qputenv("OMP_NUM_THREADS", "3");
    QCOMPARE(cpuThreads(), 3);
    QCOMPARE(workerTeam(), 3);
    setCpuThreads(1);
    QCOMPARE(cpuThreads(), 1);
    QCOMPARE(workerTeam(), 1);
    setCpuThreads(2);
    QCOMPARE(workerTeam(), 2);
    setCpuThreads(0);
    QCOMPARE(cpuThreads(), 3);
    QCOMPARE(workerTeam(), 3);
    qunsetenv("OMP_NUM_THREADS");
  }
  // A pinned region keeps its address while it grows (the executor's arena lives there), starts zeroed even where
  // something ran before, and a kernel's results land at that address.
  void aPinnedRegionStaysWhereItIs() {
    CpuBuild b = CpuCompiler().build(kTeamSize, "team_size");
    QVERIFY2(b.ok, b.error.c_str());
    CpuWorker w;
    w.addModule(0, "team_size", "team_size", b.image);
    std::memset(w.region(4096), 0xab, 4096);
    std::byte* pinned = w.pinnedRegion(4096);
    QVERIFY(pinned);
    QVERIFY(std::all_of(pinned, pinned + 4096, [](std::byte x) { return x == std::byte{0}; }));
    QCOMPARE(w.region(size_t(256) << 20), pinned);  // grown past 4096 bytes many times over
    w.run(0, {64}, 0, 1, 0, CancelToken(), "team_size");
    int n = 0;
    std::memcpy(&n, pinned + 64, sizeof n);
    QVERIFY(n >= 1);
  }

  void buildsAndRunsOpenMpVectorAdd() {
    CpuCompiler cc;
    CpuBuild b = cc.build(kVectorAdd, "vector_add");
    QVERIFY2(b.ok, b.error.c_str());
    QVERIFY(b.error.empty());
    QVERIFY(b.library);
    qInfo("compiled in %.0f ms with %s", b.compileMs, cc.compilerPath().c_str());
    runVectorAdd(*b.library);
  }
  // Modules are linked without libstdc++ (its symbol table made most of the link's time): the C++ runtime a
  // kernel may use (new[], a thrown and caught exception, the math library) is found in this process at load.
  void cppRuntimeComesFromTheLoadingProgram() {
    const char* source = R"(
#include <cmath>
#include <stdexcept>
extern "C" int uses_runtime(int n) {
  int* p = new int[n]();
  int caught = 0;
  try {
    if (n > 2) throw std::runtime_error("big");
  } catch (const std::exception& e) {
    caught = int(std::sqrt(double(e.what()[0])));  // 'b' is 98
  }
  delete[] p;
  return caught;
}
)";
    CpuCompiler cc;
    QVERIFY(cc.linksLibraries());
    CpuBuild b = cc.build(source, "uses_runtime");
    QVERIFY2(b.ok, b.error.c_str());
    QCOMPARE(b.command.back(), CpuCompiler::linkLibraries().back());  // the libraries after the source
    QCOMPARE(b.library->function<int(int)>("uses_runtime")(5), 9);
    QCOMPARE(b.library->function<int(int)>("uses_runtime")(1), 0);
    QVERIFY(cc.identity().flags.find("-lgcc_s") != std::string::npos);  // a change of libraries is a new cache key
  }
  void buildsOnTwoThreadsAtOnce() {
    CpuCompiler cc;
    CpuBuild first, second;
    std::thread other([&] { first = cc.build("extern \"C\" int v() { return 1; }\n", "same_name"); });
    second = cc.build("extern \"C\" int v() { return 2; }\n", "same_name");
    other.join();
    QVERIFY2(first.ok && second.ok, (first.error + second.error).c_str());
    QCOMPARE(first.library->function<int()>("v")(), 1);  // same name, separate folders, separate objects
    QCOMPARE(second.library->function<int()>("v")(), 2);
  }
  void compileErrorComesBackAsMessage() {
    CpuCompiler cc;
    CpuBuild b = cc.build("extern \"C\" int f() {\n  return undeclared_thing;\n}\n", "bad");
    QVERIFY(!b.ok);
    QVERIFY(!b.library);
    qInfo("%s", b.error.c_str());
    QVERIFY2(b.error.find("could not compile 'bad'") != std::string::npos, b.error.c_str());
    QVERIFY2(b.error.find("bad.cpp:2:") != std::string::npos, b.error.c_str());  // names the line
    QVERIFY2(b.error.find("undeclared_thing") != std::string::npos, b.error.c_str());
    QVERIFY(b.error.find("/tmp") == std::string::npos);  // the private folder does not leak into messages
    QVERIFY(b.log.find("error") != std::string::npos);
  }
  void namesAreSanitized() {
    CpuCompiler cc;
    CpuBuild b = cc.build("syntax error here", "../evil name;rm");
    QVERIFY(!b.ok);
    QVERIFY2(b.error.find("'___evil_name_rm'") != std::string::npos, b.error.c_str());
    QVERIFY2(b.error.find("___evil_name_rm.cpp:1:") != std::string::npos, b.error.c_str());
  }
  void missingSymbolNamesIt() {
    CpuCompiler cc;
    CpuBuild b = cc.build("extern \"C\" int present() { return 7; }\nint mangled() { return 8; }\n", "syms");
    QVERIFY2(b.ok, b.error.c_str());
    QCOMPARE(b.library->function<int()>("present")(), 7);
    try {
      b.library->symbol("mangled");
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("no symbol 'mangled'") != std::string::npos, e.what());
    }
  }
  void unresolvedReferenceIsALoadError() {
    CpuCompiler cc;
    CpuBuild b = cc.build("extern \"C\" int missing_elsewhere();\nextern \"C\" int g() { return missing_elsewhere(); }\n",
                          "unresolved");
    QVERIFY(!b.ok);
    QVERIFY2(b.error.find("did not load") != std::string::npos, b.error.c_str());
    QVERIFY2(b.error.find("missing_elsewhere") != std::string::npos, b.error.c_str());
  }
  // Without -z nodelete the object really is unloaded; libgomp, pinned once, must outlive it.
  void dlcloseAfterOpenMpDoesNotCrash() {
    CpuCompiler cc(CpuCompiler().compilerPath(), flagsWithoutNodelete());
    for (int round = 0; round < 3; ++round) {
      CpuBuild b = cc.build(kVectorAdd, "unload_" + std::to_string(round));
      QVERIFY2(b.ok, b.error.c_str());
      runVectorAdd(*b.library);
      b.library.reset();  // dlclose while OpenMP's worker threads are parked
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    QVERIFY(pinOpenMpRuntime().empty());
  }
  void temporaryFoldersAreRemoved() {
    QTemporaryDir scratch;
    QVERIFY(scratch.isValid());
    const char* old = std::getenv("TMPDIR");
    std::string saved = old ? old : "";
    setenv("TMPDIR", scratch.path().toStdString().c_str(), 1);
    CpuCompiler cc;
    CpuBuild good = cc.build("extern \"C\" int one() { return 1; }\n", "good");
    CpuBuild bad = cc.build("not C++", "bad");
    CompilerIdentity id = cc.identity();
    if (old) setenv("TMPDIR", saved.c_str(), 1); else unsetenv("TMPDIR");
    QVERIFY2(good.ok, good.error.c_str());
    QVERIFY(!bad.ok);
    QCOMPARE(good.library->function<int()>("one")(), 1);
    QVERIFY(!id.version.empty());
    QVERIFY(std::filesystem::is_empty(scratch.path().toStdString()));
  }
  void timeLimitAndCancelStopTheCompiler() {
    CpuCompiler cc;
    // Parsing <regex> and <iostream> alone takes the compiler several times longer than the limit.
    std::string slow = "#include <regex>\n#include <iostream>\nextern \"C\" int f() { return 1; }\n";
    CpuBuild late = cc.build(slow, "slow", 0.05);
    QVERIFY(!late.ok);
    QVERIFY2(late.error.find("time limit of 0.05 s") != std::string::npos, late.error.c_str());
    std::atomic<bool> cancel{true};
    CpuBuild cancelled = cc.build(slow, "slow", 300, &cancel);
    QVERIFY(!cancelled.ok);
    QCOMPARE(QString::fromStdString(cancelled.error), QString("C++ compiler could not compile 'slow': cancelled"));
  }
  void identityForCacheKeys() {
    CpuCompiler cc;
    CompilerIdentity id = cc.identity();
    qInfo("compiler: %s", id.key().c_str());
    QVERIFY(!id.version.empty());
    QVERIFY(id.target.find("linux") != std::string::npos);
    QVERIFY(id.key().find("-fopenmp") != std::string::npos);
    QVERIFY(id.key().find(cc.compilerPath()) == 0);
  }
  void processThatCannotStart() {
    ProcessResult r = runProcess({"/nonexistent/compiler", "-v"}, "/dev/null");
    QVERIFY(!r.started);
    QVERIFY2(r.output.find("cannot start '/nonexistent/compiler'") != std::string::npos, r.output.c_str());
    QVERIFY(findOnPath("surely-not-a-program-name-xyz").empty());
  }
  void timingIsAMedian() {
    int calls = 0;
    double ms = medianHostMs([&] {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }, 2, 5);
    QCOMPARE(calls, 7);
    QVERIFY(ms >= 2.0 && ms < 100.0);
    QVERIFY_THROWS_EXCEPTION(Error, medianHostMs([] {}, 0, 0));
  }
  void aTimeBudgetCutsASlowKernelsRuns() {
    using runtime::callsWithin;
    auto same = [](runtime::TimedCalls c, int warmup, int reps) { return c.warmup == warmup && c.reps == reps; };
    QVERIFY(same(callsWithin(1000, 10, 1, 10), 1, 10));    // fits: every call
    QVERIFY(same(callsWithin(1000, 200, 1, 10), 0, 4));    // 5 calls of 200 ms: the first and 4 timed
    QVERIFY(same(callsWithin(1000, 2000, 1, 10), 0, 1));   // over the budget at once: one timed call still
    QVERIFY(same(callsWithin(0, 2000, 1, 10), 1, 10));     // no budget
    int calls = 0;
    double ms = medianHostMs([&] {
      ++calls;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }, 2, 10, 200);
    QVERIFY2(calls >= 2 && calls <= 4, std::to_string(calls).c_str());  // not 12
    QVERIFY(ms >= 50.0);
    calls = 0;
    medianHostMs([&] { ++calls; }, 2, 10, 200);  // a fast one keeps every call
    QCOMPARE(calls, 12);
  }
};

QTEST_GUILESS_MAIN(TestCpuJit)
#include "test_cpu_jit.moc"
