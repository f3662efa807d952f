// The backends' builds through the module cache: one module per kernel, compiled concurrently, a second build
// of the same kernels runs no compiler (every kernel cached), compile errors stay with their kernel, a damaged
// entry is compiled again and replaced, concurrent builds of the same kernels are safe, kernels that differ only
// in their names and comments share one module, and a sample model's
// second cpu run is all cache hits with the same verified outputs. CUDA builds need NVRTC only; runs on the GPU
// skip with the reason where there is none.
#include <QtTest>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "frontend/model_io.h"
#include "frontend/text/tsr.h"
#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/cpu_threads.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/execute/arena.h"
#include "runtime/execute/backend.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/module_batch.h"
#include "runtime/execute/module_source.h"
#include "runtime/cache/parallel_jobs.h"
#include "runtime/execute/from_fusion.h"

using namespace tessera;
using namespace tessera::execute;
namespace fs = std::filesystem;

namespace {

// y = x + w, where w is a 512 x 512 ConstantOfShape: a kernel of constants (left as an op, too large to fold)
// and one of the graph input.
CompiledModel constantOfShapeModel() {
  Graph g = parseTsr(R"(graph c {
    input %x: f32[512,512]
    const %shape: i64[2] = [512, 512]
    node w = ConstantOfShape(%shape) {value=tensor<f32[1]> [0.5]} -> %w
    node add = Add(%x, %w) -> %y
    output %y
  })");
  return compileKernels(compileGraph(std::move(g), CompileOptions{}));
}

// A cpu kernel adding `amount` to four floats (the executor's calling form: <entry>_call(void** args)).
codegen::GeneratedKernel cpuKernel(const std::string& entry, const std::string& amount) {
  codegen::GeneratedKernel k;
  k.entry = entry;
  k.source = "extern \"C\" void " + entry + "_call(void** args) {\n  float* x = static_cast<float*>(args[0]);\n" +
             "  for (int i = 0; i < 4; ++i) x[i] += " + amount + ";\n}\n";
  return k;
}

// A cpu kernel writing, to each of four floats, 10 × the OpenMP level it runs at + the threads of its team; with
// `shares`, its loop is a worksharing loop of the caller's region and it carries the marker that says so
// (`<entry>_region`, as codegen's wrapper writes them).
codegen::GeneratedKernel ompProbeKernel(const std::string& entry, bool shares) {
  codegen::GeneratedKernel k;
  k.entry = entry;
  k.source = "extern \"C\" int omp_get_level(void);\nextern \"C\" int omp_get_num_threads(void);\n"
             "extern \"C\" void " + entry + "_call(void** args) {\n  float* x = static_cast<float*>(args[0]);\n" +
             (shares ? "#pragma omp for\n" : "") +
             "  for (int i = 0; i < 4; ++i) x[i] = 10.0f * omp_get_level() + omp_get_num_threads();\n}\n" +
             (shares ? "extern \"C\" const int " + entry + "_region = 1;\n" : "");
  return k;
}

codegen::GeneratedKernel cudaKernel(const std::string& entry, const std::string& body) {
  codegen::GeneratedKernel k;
  k.entry = entry;
  k.source = "extern \"C\" __global__ void " + entry + "(float* x) { " + body + " }\n";
  return k;
}

// c = a + b over 4 floats; the fake driver (fake_libcuda.cpp) imitates its module entry the same way.
codegen::GeneratedKernel vaddKernel() {
  codegen::GeneratedKernel add = cudaKernel("vadd", "");
  add.source = "extern \"C\" __global__ void vadd(const float* a, const float* b, float* c) {\n"
               "  c[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];\n}\n";
  add.launch.block[0] = 4;
  return add;
}

// A GPU test runs on a GPU or on the fake driver; where TESSERA_EXPECT_GPU says one is there, its absence fails.
#define REQUIRE_GPU_OR_FAKE()                                                                                      \
  if (!cuda::cudaAvailability().available) {                                                                    \
    if (qEnvironmentVariableIsSet("TESSERA_EXPECT_GPU")) QFAIL(("no GPU: " + cuda::cudaAvailability().reason).c_str()); \
    QSKIP(("needs a GPU: " + cuda::cudaAvailability().reason).c_str());                                         \
  }

std::vector<const codegen::GeneratedKernel*> pointers(const std::vector<codegen::GeneratedKernel>& ks) {
  std::vector<const codegen::GeneratedKernel*> out;
  for (const auto& k : ks) out.push_back(&k);
  return out;
}

bool sameBytes(const Tensor& a, const Tensor& b) {
  return std::equal(a.bytes().begin(), a.bytes().end(), b.bytes().begin(), b.bytes().end());
}

size_t entriesIn(const QTemporaryDir& dir) {
  if (!fs::exists(dir.path().toStdString())) return 0;
  size_t n = 0;
  for (auto it = fs::directory_iterator(dir.path().toStdString()); it != fs::directory_iterator(); ++it) ++n;
  return n;
}

// Runs cpu kernel `index` of `be` on {1, 2, 3, 4}.
std::vector<float> runOnFour(detail::KernelBackend& be, size_t index) {
  std::vector<float> x = {1, 2, 3, 4};
  be.run(index, {{x.data(), sizeof(float) * 4, true, "", true}}, 0, 1);
  return x;
}

// $TESSERA_SAMPLES_DIR (on the GPU machine, where the source folder of the build is absent), else the source's.
CompiledModel sample(const std::string& name) {
  const char* dir = std::getenv("TESSERA_SAMPLES_DIR");
  std::string samples = dir && *dir ? dir : std::string(TESSERA_SOURCE_DIR) + "/samples";
  return compileKernels(compileGraph(loadModel(samples + "/" + name), CompileOptions{}));
}

RunOptions cachedIn(const QTemporaryDir& dir) {
  RunOptions o;
  o.reps = 1;
  o.warmup = 0;
  o.moduleCacheDir = dir.path().toStdString();
  return o;
}

}  // namespace

class TestBackendBuild : public QObject {
  Q_OBJECT
 private slots:
  // Installed without a C++ compiler (the package only recommends one), the cpu backend says it cannot run and
  // what to install, instead of failing each kernel's build.
  void cpuBackendWithoutACompilerSaysWhatToInstall() {
    QTemporaryDir empty;
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", empty.path().toUtf8());
    const std::string why = detail::makeCpuBackend(modcache::ModuleCache())->cannotRun();
    qputenv("PATH", path);
    QVERIFY2(why.find("sudo apt-get install g++") != std::string::npos, why.c_str());
    QVERIFY(detail::makeCpuBackend(modcache::ModuleCache())->cannotRun().empty() == !cpu::CpuCompiler::findCompiler().empty());
  }

  void cpuSecondBuildRunsNoCompiler() {
    QTemporaryDir dir;
    modcache::ModuleCache cache(dir.path().toStdString());
    std::vector<codegen::GeneratedKernel> ks = {cpuKernel("add_one", "1.0f"), cpuKernel("add_ten", "10.0f")};
    auto first = detail::makeCpuBackend(cache);
    std::vector<detail::KernelBuild> a = first->build(pointers(ks));
    for (const auto& b : a) {
      QVERIFY2(b.error.empty(), b.error.c_str());
      QVERIFY(!b.cached);
      QVERIFY(b.compileMs > 0);
    }
    QCOMPARE(entriesIn(dir), size_t(2));
    auto second = detail::makeCpuBackend(cache);
    std::vector<detail::KernelBuild> b = second->build(pointers(ks));
    for (const auto& one : b) {
      QVERIFY2(one.error.empty() && one.warning.empty(), (one.error + one.warning).c_str());
      QVERIFY(one.cached);
      QCOMPARE(one.compileMs, 0.0);
    }
    QCOMPARE(runOnFour(*second, 0), (std::vector<float>{2, 3, 4, 5}));  // the cached objects load and run
    QCOMPARE(runOnFour(*second, 1), (std::vector<float>{11, 12, 13, 14}));
  }

  void cpuErrorsStayWithTheirKernel() {
    QTemporaryDir dir;
    std::vector<codegen::GeneratedKernel> ks = {cpuKernel("good_k", "1.0f"), cpuKernel("bad_k", "undeclared")};
    std::vector<const codegen::GeneratedKernel*> ptrs = pointers(ks);
    ptrs.push_back(nullptr);  // not generated
    auto be = detail::makeCpuBackend(modcache::ModuleCache(dir.path().toStdString()));
    std::vector<detail::KernelBuild> b = be->build(ptrs);
    QCOMPARE(b.size(), size_t(3));
    QVERIFY2(b[0].error.empty(), b[0].error.c_str());
    QVERIFY2(b[1].error.find("'bad_k'") != std::string::npos && b[1].error.find("undeclared") != std::string::npos,
             b[1].error.c_str());
    QVERIFY(b[2].error.empty() && !b[2].cached);
    QCOMPARE(entriesIn(dir), size_t(1));  // a failed compile stores nothing
    QCOMPARE(runOnFour(*be, 0), (std::vector<float>{2, 3, 4, 5}));
  }

  // More modules than two a compiler: they build several to a compiler run (module_batch.h), each still its own
  // module (its own results, cache entry and error), and a unit that does not compile is built again one by one.
  void cpuModulesCompileInBatches() {
    QTemporaryDir dir;
    modcache::ModuleCache cache(dir.path().toStdString());
    const size_t n = 4 * modcache::hardwareThreads() + 1;
    std::vector<codegen::GeneratedKernel> ks;
    for (size_t i = 0; i < n; ++i) ks.push_back(cpuKernel("add_" + std::to_string(i), std::to_string(i) + ".0f"));
    ks[n / 2] = cpuKernel("bad_k", "undeclared");
    auto be = detail::makeCpuBackend(cache);
    std::vector<detail::KernelBuild> b = be->build(pointers(ks));
    std::map<double, int> sharedTimes;  // a batch's members share its time evenly
    for (size_t i = 0; i < n; ++i) {
      if (i == n / 2) {
        QVERIFY2(b[i].error.find("'bad_k'") != std::string::npos, b[i].error.c_str());
        continue;
      }
      QVERIFY2(b[i].error.empty(), b[i].error.c_str());
      ++sharedTimes[b[i].compileMs];
      float x = float(i);
      QCOMPARE(runOnFour(*be, i), (std::vector<float>{1 + x, 2 + x, 3 + x, 4 + x}));
    }
    QVERIFY(std::any_of(sharedTimes.begin(), sharedTimes.end(), [](const auto& t) { return t.second > 1; }));
    QCOMPARE(entriesIn(dir), n - 1);
    auto again = detail::makeCpuBackend(cache);
    std::vector<detail::KernelBuild> c = again->build(pointers(ks));
    for (size_t i = 0; i < n; ++i) QVERIFY(i == n / 2 ? !c[i].error.empty() : c[i].cached);
    QCOMPARE(runOnFour(*again, n - 1), (std::vector<float>{1.0f + float(n - 1), 2.0f + float(n - 1), 3.0f + float(n - 1),
                                                           4.0f + float(n - 1)}));
  }

  void batchesTakeEveryModuleOnce() {
    std::vector<std::string> sources;
    for (int i = 0; i < 100; ++i) sources.push_back("prelude" + std::string(size_t(i * 37 % 101), 'x'));
    for (unsigned threads : {1u, 2u, 3u, 16u})
      for (size_t n : {size_t(1), size_t(3), size_t(5), size_t(17), size_t(100)}) {
        std::vector<size_t> modules;
        for (size_t i = 0; i < n; ++i) modules.push_back(i);
        auto batches = detail::formBatches(modules, sources, 7, threads);
        std::vector<size_t> seen;
        for (const auto& batch : batches) {
          QVERIFY(!batch.empty() && batch.size() <= detail::kMaxBatch);
          QVERIFY(std::is_sorted(batch.begin(), batch.end()));
          seen.insert(seen.end(), batch.begin(), batch.end());
        }
        std::sort(seen.begin(), seen.end());
        QCOMPARE(seen, modules);
        QVERIFY(batches.size() >= std::min(n, size_t(2 * threads)));  // every compiler has work, twice over
        QVERIFY(batches.size() == n || batches.size() % threads == 0);  // in whole rounds
      }
  }

  void batchSourceTagsEachEntry() {
    std::string a = "P\nextern \"C\" void tsr_module_entry_call(void** a) {}\n";
    std::string b = "P\nextern \"C\" void tsr_module_entry_call(void** b) {}\nconst int tsr_module_entry_region = 1;\n";
    std::string unit = detail::batchSource("P\n", {&a, &b});
    QCOMPARE(unit.rfind("P\n", 0), size_t(0));
    QCOMPARE(std::count(unit.begin(), unit.end(), 'P'), 1L);  // the prelude once
    QVERIFY(unit.find(detail::taggedEntry(a) + "_call(void** a)") != std::string::npos);
    QVERIFY(unit.find(detail::taggedEntry(b) + "_call(void** b)") != std::string::npos);
    QVERIFY(unit.find(detail::taggedEntry(b) + "_region") != std::string::npos);
    QVERIFY(detail::taggedEntry(a) != detail::taggedEntry(b));
    QVERIFY(unit.find("tsr_module_entry_call") == std::string::npos);
  }

  void cpuDamagedEntryIsCompiledAgain() {
    QTemporaryDir dir;
    modcache::ModuleCache cache(dir.path().toStdString());
    std::vector<codegen::GeneratedKernel> ks = {cpuKernel("add_one", "1.0f")};
    detail::makeCpuBackend(cache)->build(pointers(ks));
    QCOMPARE(entriesIn(dir), size_t(1));
    std::string path = fs::directory_iterator(dir.path().toStdString())->path().string();
    fs::resize_file(path, fs::file_size(path) / 2);  // truncated, as by a full disk or a killed copy
    auto be = detail::makeCpuBackend(cache);
    std::vector<detail::KernelBuild> b = be->build(pointers(ks));
    QVERIFY2(b[0].error.empty(), b[0].error.c_str());
    QVERIFY(!b[0].cached);
    QVERIFY2(b[0].warning.find("ignored") != std::string::npos, b[0].warning.c_str());
    QCOMPARE(runOnFour(*be, 0), (std::vector<float>{2, 3, 4, 5}));
    QVERIFY(detail::makeCpuBackend(cache)->build(pointers(ks))[0].cached);  // replaced by a whole entry
  }

  void moduleSourceDropsCommentsAndTheEntryName() {
    codegen::GeneratedKernel k;
    k.entry = "tessera_k1";
    k.source = "// kernel k1, nodes: conv_7\n"
               "extern \"C\" void tessera_k1(float* x) {  /* n4\n n6 */ x[0] = 1;  // n4\n"
               "  tessera_k12(); tessera_k1x(); my_tessera_k1(); asm(\"a // b /* c\" ::: \"memory\"); char q = '\"';\n}\n"
               "extern \"C\" void tessera_k1_call(void** a) { tessera_k1((float*)a[0]); }\n";
    std::string m = detail::moduleSource(k);
    QCOMPARE(m, std::string("\n"
                            "extern \"C\" void tsr_module_entry(float* x) {  \n  x[0] = 1;  \n"
                            "  tessera_k12(); tessera_k1x(); my_tessera_k1(); asm(\"a // b /* c\" ::: \"memory\"); char q = '\"';\n}\n"
                            "extern \"C\" void tsr_module_entry_call(void** a) { tsr_module_entry((float*)a[0]); }\n"));
    QCOMPARE(std::count(m.begin(), m.end(), '\n'), std::count(k.source.begin(), k.source.end(), '\n'));  // lines kept
  }

  void kernelsThatDifferInNameAndCommentsShareOneModule() {
    QTemporaryDir dir;
    modcache::ModuleCache cache(dir.path().toStdString());
    std::vector<codegen::GeneratedKernel> ks = {cpuKernel("add_a", "1.0f"), cpuKernel("add_b", "1.0f"),
                                                cpuKernel("add_c", "2.0f")};
    ks[1].source = "// kernel b, nodes: other_node\n" + ks[1].source;
    ks[0].source = "// kernel a, nodes: some_node\n" + ks[0].source;
    auto be = detail::makeCpuBackend(cache);
    std::vector<detail::KernelBuild> b = be->build(pointers(ks));
    QVERIFY2(b[0].error.empty() && b[1].error.empty() && b[2].error.empty(), (b[0].error + b[1].error + b[2].error).c_str());
    QVERIFY(b[0].compileMs > 0 && b[2].compileMs > 0);
    QCOMPARE(b[1].compileMs, 0.0);  // built by add_a
    QCOMPARE(entriesIn(dir), size_t(2));
    QCOMPARE(runOnFour(*be, 0), (std::vector<float>{2, 3, 4, 5}));
    QCOMPARE(runOnFour(*be, 1), (std::vector<float>{2, 3, 4, 5}));
    QCOMPARE(runOnFour(*be, 2), (std::vector<float>{3, 4, 5, 6}));
  }

  void concurrentBuildsOfTheSameKernels() {
    QTemporaryDir dir;
    modcache::ModuleCache cache(dir.path().toStdString());
    std::vector<codegen::GeneratedKernel> ks;
    for (int i = 0; i < 4; ++i) ks.push_back(cpuKernel("add_" + std::to_string(i), std::to_string(i) + ".0f"));
    std::vector<std::vector<detail::KernelBuild>> builds(3);
    std::vector<std::thread> threads;
    for (auto& b : builds) threads.emplace_back([&] { b = detail::makeCpuBackend(cache)->build(pointers(ks)); });
    for (auto& t : threads) t.join();
    for (const auto& b : builds)
      for (const auto& one : b) QVERIFY2(one.error.empty() && one.warning.empty(), (one.error + one.warning).c_str());
    QCOMPARE(entriesIn(dir), ks.size());  // one whole entry per kernel, no temporary files
    auto be = detail::makeCpuBackend(cache);
    for (const auto& one : be->build(pointers(ks))) QVERIFY(one.cached);
    QCOMPARE(runOnFour(*be, 3), (std::vector<float>{4, 5, 6, 7}));
  }

  void cpuSampleSecondRunIsAllCacheHits() {
    QTemporaryDir dir;
    CompiledModel m = sample("mlp.tsr");
    RunReport first = executeModel(m, BackendKind::Cpu, cachedIn(dir));
    QVERIFY2(first.outputsVerified, first.toJson().dump().c_str());
    QVERIFY(first.buildMs > 0);
    for (const auto& k : first.kernels) QVERIFY2(!k.cached && k.compileMs > 0, k.group.c_str());
    QCOMPARE(entriesIn(dir), first.kernels.size());
    RunReport second = executeModel(m, BackendKind::Cpu, cachedIn(dir));
    QVERIFY2(second.outputsVerified, second.toJson().dump().c_str());
    for (const auto& k : second.kernels) QVERIFY2(k.cached && k.compileMs == 0, k.group.c_str());
    QCOMPARE(second.toJson()["kernels"][0]["cached"].get<bool>(), true);
    QCOMPARE(second.outputs.size(), first.outputs.size());
    for (size_t i = 0; i < first.outputs.size(); ++i) QVERIFY(sameBytes(second.outputs[i], first.outputs[i]));
  }

  void noCacheCompilesEverythingAndStoresNothing() {
    QTemporaryDir dir;
    RunOptions o = cachedIn(dir);
    o.moduleCache = false;
    RunReport r = executeModel(sample("softmax.tsr"), BackendKind::Cpu, o);
    QVERIFY2(r.outputsVerified, r.toJson().dump().c_str());
    for (const auto& k : r.kernels) QVERIFY(!k.cached);
    QCOMPARE(entriesIn(dir), size_t(0));
  }

  // A kernel whose inputs are all constants (a weight too large for fold-constants, made by ConstantOfShape)
  // computes the same on every run: it is timed once-at-load, outside the total, and the kernel that reads
  // the input as well is not.
  void kernelsOfConstantsRunOnceOutsideTheTotal() {
    CompiledModel m = constantOfShapeModel();
    QCOMPARE(m.kernels.size(), size_t(2));
    QTemporaryDir dir;
    RunReport r = executeModel(m, BackendKind::Cpu, cachedIn(dir));
    QVERIFY2(r.outputsVerified, r.toJson().dump().c_str());
    QVERIFY(r.kernels[0].once && !r.kernels[1].once);
    QCOMPARE(r.onceMs, r.kernels[0].ms);
    QVERIFY2(r.wholeMs >= 0 && r.wholeNote.empty(), r.wholeNote.c_str());  // the whole run leaves the constant out
    QCOMPARE(r.totalMs, r.kernels[1].ms);
    QVERIFY(r.toJson().at("kernels").at(0).at("once").get<bool>());
    // The constant has memory of its own, as an initializer has: the memory plan would hand its buffer to y
    // (the Add's output takes over its dying input), and a whole run would then have to make w again.
    detail::ArenaLayout layout(*m.graph, m.kernels);
    QCOMPARE(layout.place("w", 512 * 512 * 4, 0), -1);
    QVERIFY(layout.place("y", 512 * 512 * 4, 1) >= 0);
  }

  // Through a RunSession the second run of the same compiled model finds its constants where the first left
  // them: the constant kernel's output and the initializers lie in the zone at the block's start (offsets fixed
  // by the model), the region's first bytes are kept and the rest zeroed, and the outputs still verify.
  void constantsStayInTheSessionsRegion() {
    CompiledModel m = constantOfShapeModel();
    const detail::ConstantZone zone = detail::constantZone(*m.graph, m.kernels);
    QVERIFY(zone.at.count("w"));
    QVERIFY(!zone.at.count("x"));  // a graph input changes every run
    QVERIFY(zone.bytes >= 512 * 512 * 4 && zone.bytes <= detail::arenaBytes(*m.graph, m.kernels));
    QTemporaryDir dir;
    RunOptions o = cachedIn(dir);
    o.session = std::make_shared<RunSession>();
    RunReport first = executeModel(m, BackendKind::Cpu, o);
    QVERIFY2(first.outputsVerified, first.toJson().dump().c_str());
    QCOMPARE(first.keptBytes, 0.0);
    o.seed = 3;
    RunReport second = executeModel(m, BackendKind::Cpu, o);
    QVERIFY2(second.outputsVerified, second.toJson().dump().c_str());
    QVERIFY(second.keptBytes >= 512 * 512 * 4 && second.keptBytes <= double(zone.bytes));
    o.session = nullptr;  // no session: a fresh backend, nothing kept
    QCOMPARE(executeModel(m, BackendKind::Cpu, o).keptBytes, 0.0);
  }
  // The arena copies a zone value in unless the caller says the block holds it from an earlier run: a value
  // named kept is read where it lies (here overwritten on purpose, so the read shows no copy was made), one not
  // named is copied again; zoneValues says what a run placed, for the next.
  void arenaCopiesOnlyWhatWasNotKept() {
    CompiledModel m = sample("mlp.tsr");
    const Graph& g = *m.graph;
    const Value* w = g.initializers().front();
    const detail::ConstantZone zone = detail::constantZone(g, m.kernels);
    QVERIFY(zone.at.count(w->name()));
    const size_t bytes = detail::arenaBytes(g, m.kernels);
    std::vector<std::byte> block(bytes);
    std::vector<Tensor> inputs;
    for (const Value* in : g.inputs()) inputs.emplace_back(in->dtype(), in->shape());
    {
      detail::Arena first(g, inputs, m.kernels, block.data(), bytes, &zone, nullptr);
      QVERIFY(first.zoneValues().count(w->name()));
      QCOMPARE(first.keptBytes(), size_t(0));
    }
    std::byte* at = block.data() + zone.at.at(w->name()).first;
    std::fill_n(at, w->initializer()->byteSize(), std::byte{0});
    const std::set<std::string> kept = {w->name()};
    detail::Arena trusting(g, inputs, m.kernels, block.data(), bytes, &zone, &kept);
    QCOMPARE(trusting.keptBytes(), w->initializer()->byteSize());
    QVERIFY(trusting.read(w->name()).toDoubles() != w->initializer()->toDoubles());  // the zeros left there
    const std::set<std::string> none;
    detail::Arena copying(g, inputs, m.kernels, block.data(), bytes, &zone, &none);
    QCOMPARE(copying.read(w->name()).toDoubles(), w->initializer()->toDoubles());
  }
  void cpuResidentMemoryKeepsWhatItIsAskedTo() {
    auto be = detail::makeCpuBackend(modcache::ModuleCache());
    std::byte* block = be->residentMemory(1 << 20);
    QVERIFY(block);
    std::fill_n(block, 1 << 20, std::byte{7});
    QCOMPARE(be->residentMemory(1 << 20, 8192), block);  // the same place
    QCOMPARE(block[8191], std::byte{7});                  // kept
    QCOMPARE(block[8192], std::byte{0});                  // zeroed
    QCOMPARE(block[(1 << 20) - 1], std::byte{0});
    QCOMPARE(be->residentMemory(1 << 20), block);
    QCOMPARE(block[0], std::byte{0});
  }

  // After each kernel's own run the whole run is timed as one: the worker calls every kernel in order, and the
  // graph's outputs it reports (and verifies) are the whole run's.
  void cpuWholeRunIsTimedAsOne() {
    QTemporaryDir dir;
    RunReport r = executeModel(sample("mlp.tsr"), BackendKind::Cpu, cachedIn(dir));
    QVERIFY2(r.outputsVerified, r.toJson().dump().c_str());
    QVERIFY2(r.wholeMs > 0, r.wholeNote.c_str());
    QCOMPARE(r.graphMs, -1.0);  // no graphs on the host
    RunReport back = RunReport::fromJson(r.toJson());
    QCOMPARE(back.wholeMs, r.wholeMs);
    QCOMPARE(back.graphMs, r.graphMs);
  }

  // Values in the backend's resident memory (where the executor's arena lives) are used in place: a kernel that
  // writes a parameter passed as an input changes it there (a copy would not come back), and they stay where
  // they are while the region grows for parameters that are copied (a large one beside them).
  void cpuKernelsRunOnResidentMemoryInPlace() {
    std::vector<codegen::GeneratedKernel> ks = {cpuKernel("add_one", "1.0f")};
    auto be = detail::makeCpuBackend(modcache::ModuleCache());
    std::vector<detail::KernelBuild> b = be->build(pointers(ks));
    QVERIFY2(b[0].error.empty(), b[0].error.c_str());
    std::byte* block = be->residentMemory(4096);
    QVERIFY(block);
    auto* x = reinterpret_cast<float*>(block + 128);
    QCOMPARE(x[0], 0.0f);  // zeroed
    std::copy_n(std::vector<float>{1, 2, 3, 4}.begin(), 4, x);
    std::vector<float> copied(size_t(16) << 20, 7.0f);  // 64 MiB, outside: copied in and out
    be->run(0, {{x, sizeof(float) * 4, false, "x", false}, {copied.data(), copied.size() * sizeof(float), true, "", true}}, 0, 1);
    QCOMPARE(std::vector<float>(x, x + 4), (std::vector<float>{2, 3, 4, 5}));
    QCOMPARE(copied.back(), 7.0f);
    std::vector<float> outside = {1, 2, 3, 4};  // the same kernel on memory outside: a copy, its change not kept
    be->run(0, {{outside.data(), sizeof(float) * 4, false, "", false}}, 0, 1);
    QCOMPARE(outside, (std::vector<float>{1, 2, 3, 4}));
  }

  // Kernels marked as sharing the caller's region run in one the worker opens (level 1, a team of the threads
  // setting); one without the marker runs outside any, as its own code would open its own.
  void cpuWorkerOpensOneRegionForKernelsThatShareIt() {
    cpu::setCpuThreads(2);  // the worker starts with the backend
    std::vector<codegen::GeneratedKernel> ks = {ompProbeKernel("shares_a", true), ompProbeKernel("alone", false),
                                                ompProbeKernel("shares_b", true)};
    auto be = detail::makeCpuBackend(modcache::ModuleCache());
    std::vector<detail::KernelBuild> b = be->build(pointers(ks));
    for (const auto& one : b) QVERIFY2(one.error.empty(), one.error.c_str());
    std::vector<float> a(4, -1), x(4, -1), c(4, -1);
    size_t n = sizeof(float) * 4;
    std::vector<std::vector<detail::ParamBuffer>> params = {
        {{a.data(), n, true, "a", true}}, {{x.data(), n, true, "x", true}}, {{c.data(), n, true, "c", true}}};
    detail::KernelBackend::WholeRunTimes t = be->runWhole({0, 1, 2}, params, 0, 1);
    cpu::setCpuThreads(0);
    QVERIFY2(t.launchedMs > 0, t.note.c_str());
    QCOMPARE(a, std::vector<float>(4, 12));
    QCOMPARE(x, std::vector<float>(4, 1));
    QCOMPARE(c, std::vector<float>(4, 12));
    QCOMPARE(runOnFour(*be, 0), std::vector<float>(4, 12));  // alone too: its own region from the worker
  }

  // The whole run as one CUDA graph replays every launch: on the fake driver each launch takes 0.01 ms, so both
  // figures are two launches' worth, and the graph's last pass leaves d = (a + x) + a on the host.
  void cudaWholeRunReplaysEveryLaunchAsOneGraph() {
    REQUIRE_GPU_OR_FAKE();
    codegen::GeneratedKernel add = vaddKernel();
    auto be = detail::makeCudaBackend("", modcache::ModuleCache());
    std::vector<detail::KernelBuild> b = be->build({&add, &add});
    QVERIFY2(b[0].error.empty(), b[0].error.c_str());
    std::vector<float> a = {1, 2, 3, 4}, x = {10, 20, 30, 40}, c(4, -1), d(4, -1);
    size_t n = sizeof(float) * 4;
    std::vector<std::vector<detail::ParamBuffer>> params = {
        {{a.data(), n, false, "a", true}, {x.data(), n, false, "x", true}, {c.data(), n, true, "c", false}},
        {{c.data(), n, false, "c", true}, {a.data(), n, false, "a", true}, {d.data(), n, true, "d", true}}};
    for (size_t k = 0; k < 2; ++k) be->run(k, params[k], 0, 1);
    d.assign(4, -1);
    detail::KernelBackend::WholeRunTimes t = be->runWhole({0, 1}, params, 1, 3);
    QVERIFY2(t.launchedMs > 0 && t.graphMs > 0, t.note.c_str());
    if (be->device().starts_with("Fake")) {
      QVERIFY(qFuzzyCompare(float(t.launchedMs), 0.02f));
      QVERIFY(qFuzzyCompare(float(t.graphMs), 0.02f));
    }
    QCOMPARE(d, (std::vector<float>{12, 24, 36, 48}));
    QCOMPARE(c, std::vector<float>(4, -1));  // not downloaded: only outputs marked so come back
  }

  void cudaBuildsPerKernelAndCaches() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    QTemporaryDir dir;
    modcache::ModuleCache cache(dir.path().toStdString());
    std::vector<codegen::GeneratedKernel> ks = {cudaKernel("twice", "x[threadIdx.x] *= 2.0f;"),
                                                cudaKernel("broken", "x[threadIdx.x] = undeclared;")};
    std::vector<detail::KernelBuild> a = detail::makeCudaBackend("sm_90", cache)->build(pointers(ks));
    QVERIFY2(a[0].error.empty() && !a[0].cached && a[0].compileMs > 0, a[0].error.c_str());
    QVERIFY2(a[1].error.find("'broken.cu'") != std::string::npos && a[1].error.find("undeclared") != std::string::npos,
             a[1].error.c_str());
    QCOMPARE(entriesIn(dir), size_t(1));
    std::vector<detail::KernelBuild> b = detail::makeCudaBackend("sm_90", cache)->build(pointers(ks));
    QVERIFY(b[0].cached && b[0].compileMs == 0);
    QVERIFY(!b[1].error.empty() && !b[1].cached);  // errors are never cached: compiled again, failing again
    // Another architecture the H200 also loads (an sm_80 cubin would not load where a GPU is present).
    std::vector<detail::KernelBuild> c = detail::makeCudaBackend("sm_90a", cache)->build(pointers(ks));
    QVERIFY2(c[0].error.empty() && !c[0].cached, c[0].error.c_str());  // another architecture, another key
    QCOMPARE(entriesIn(dir), size_t(2));
  }

  void cudaSampleSecondBuildIsAllCacheHits() {
    if (!TESSERA_HAVE_CUDA) QSKIP("built without CUDA: NVRTC is not linked");
    QTemporaryDir dir;
    CompiledModel m = sample("resnet_basic_block.tsr");
    RunReport first = executeModel(m, BackendKind::Cuda, cachedIn(dir));
    RunReport second = executeModel(m, BackendKind::Cuda, cachedIn(dir));
    QVERIFY(!first.kernels.empty());
    for (size_t i = 0; i < first.kernels.size(); ++i) {
      QVERIFY2(first.kernels[i].status != execute::KernelStatus::NotCompiled, first.kernels[i].message.c_str());
      QVERIFY(!first.kernels[i].cached && first.kernels[i].compileMs > 0);
      QVERIFY(second.kernels[i].cached && second.kernels[i].compileMs == 0);
    }
    if (!cuda::cudaAvailability().available) {
      QVERIFY(!second.ran);
      QSKIP(("built and cached; running needs a GPU: " + cuda::cudaAvailability().reason).c_str());
    }
    QVERIFY2(second.outputsVerified, second.toJson().dump().c_str());
  }

  // On a GPU, or on tests/runtime's fake driver (test_backend_build_fake), which imitates the module entry as c = a + b.
  void cudaValuesStayResidentBetweenKernels() {
    REQUIRE_GPU_OR_FAKE();
    codegen::GeneratedKernel add = vaddKernel();
    auto be = detail::makeCudaBackend("", modcache::ModuleCache());
    std::vector<detail::KernelBuild> b = be->build({&add, &add});
    QVERIFY2(b[0].error.empty(), b[0].error.c_str());
    std::vector<float> a = {1, 2, 3, 4}, x = {10, 20, 30, 40}, c(4, -1), d(4, -1);
    size_t n = sizeof(float) * 4;
    be->run(0, {{a.data(), n, false, "a", true}, {x.data(), n, false, "x", true}, {c.data(), n, true, "c", false}}, 0, 1);
    QCOMPARE(c, std::vector<float>(4, -1));  // not downloaded: nothing on the host reads it
    be->run(1, {{c.data(), n, false, "c", true}, {a.data(), n, false, "a", true}, {d.data(), n, true, "d", true}}, 0, 1);
    QCOMPARE(d, (std::vector<float>{12, 24, 36, 48}));  // c = a + x came from the device, not the host's -1s
    c = {100, 100, 100, 100};  // the host buffer now holds another value: uploaded again
    be->run(1, {{c.data(), n, false, "c2", true}, {a.data(), n, false, "a", true}, {d.data(), n, true, "d2", true}}, 0, 1);
    QCOMPARE(d, (std::vector<float>{101, 102, 103, 104}));
    std::vector<float> e(4, -1);  // buffers without a value: uploaded and downloaded every run
    be->run(0, {{c.data(), n, false, "", true}, {a.data(), n, false, "", true}, {e.data(), n, true, "", false}}, 0, 1);
    QCOMPARE(e, (std::vector<float>{101, 102, 103, 104}));
  }

  // A remote worker builds on one job's thread and runs on another's; the window's runs come on job threads too.
  // The driver acts on the context current on the calling thread, so each call must make the backend's current
  // (on the H200 a worker's runs failed with CUDA_ERROR_INVALID_CONTEXT before). Also on the fake driver.
  void cudaBackendWorksFromAnyThread() {
    REQUIRE_GPU_OR_FAKE();
    codegen::GeneratedKernel add = vaddKernel();
    auto be = detail::makeCudaBackend("", modcache::ModuleCache());
    std::vector<detail::KernelBuild> b;
    std::thread([&] { b = be->build({&add}); }).join();
    QVERIFY2(b.size() == 1 && b[0].error.empty(), b.empty() ? "no build" : b[0].error.c_str());
    std::vector<float> a = {1, 2, 3, 4}, x = {10, 20, 30, 40}, c(4, -1);
    size_t n = sizeof(float) * 4;
    std::string error;
    std::thread([&] {
      try {
        be->run(0, {{a.data(), n, false, "a", true}, {x.data(), n, false, "x", true}, {c.data(), n, true, "c", true}}, 0, 1);
      } catch (const std::exception& e) {
        error = e.what();
      }
    }).join();
    QVERIFY2(error.empty(), error.c_str());
    QCOMPARE(c, (std::vector<float>{11, 22, 33, 44}));
    QVERIFY(be->freeDeviceBytes() > 0);
    std::thread([&] { be.reset(); }).join();
  }

  void cudaUncheckedRunKeepsValuesOnTheDevice() {
    if (!cuda::cudaAvailability().available) QSKIP(("needs a GPU: " + cuda::cudaAvailability().reason).c_str());
    QTemporaryDir dir;
    CompiledModel m = sample("transformer_block.tsr");
    RunReport checked = executeModel(m, BackendKind::Cuda, cachedIn(dir));
    RunOptions o = cachedIn(dir);
    o.verify = false;  // only graph outputs come back to the host; the rest stay resident between kernels
    RunReport unchecked = executeModel(m, BackendKind::Cuda, o);
    QVERIFY2(checked.outputsVerified, checked.toJson().dump().c_str());
    QCOMPARE(unchecked.outputs.size(), checked.outputs.size());
    for (size_t i = 0; i < checked.outputs.size(); ++i) QVERIFY(sameBytes(unchecked.outputs[i], checked.outputs[i]));
  }
};

QTEST_APPLESS_MAIN(TestBackendBuild)
#include "test_backend_build.moc"
