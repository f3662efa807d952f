// Memory limits (runtime/execute/memory_limit.h): sizes parse and print in binary units, a bad size is refused
// naming it, the estimate of a sample's run adds up from its parts (the arena holds at least its inputs and
// weights, the reference every value), and a run over the limit is refused before anything is built, naming the
// estimate, its parts and the limit; at the estimate itself the run goes ahead. A cuda run over the device's
// free memory is refused the same way (against the stand-in driver in CI).
#include <QtTest>

#include "frontend/model_io.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"
#include "runtime/execute/memory_limit.h"

using namespace tessera;
using namespace tessera::execute;

namespace {

CompiledModel mlp() {
  return compileKernels(compileGraph(loadModel(std::string(TESSERA_SOURCE_DIR) + "/samples/mlp.tsr"), CompileOptions{}));
}

uint64_t bytesOf(const Value& v) { return uint64_t(numElements(v.shape())) * dtypeSize(v.dtype()); }

}  // namespace

class TestMemoryLimit : public QObject {
  Q_OBJECT
 private slots:
  void sizesParseAndPrint() {
    QCOMPARE(parseByteSize("4096"), uint64_t(4096));
    QCOMPARE(parseByteSize("16G"), uint64_t(16) << 30);
    QCOMPARE(parseByteSize("16 GiB"), uint64_t(16) << 30);
    QCOMPARE(parseByteSize("1.5gb"), uint64_t(3) << 29);
    QCOMPARE(parseByteSize("512M"), uint64_t(512) << 20);
    QCOMPARE(parseByteSize("64k"), uint64_t(64) << 10);
    for (const char* bad : {"", "lots", "12X", "-1G", "1e30T", "G"}) {
      try {
        parseByteSize(bad);
        QFAIL(bad);
      } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find("'" + std::string(bad) + "' is not a memory size") == 0, e.what());
      }
    }
    QCOMPARE(formatBytes(12), std::string("12 bytes"));
    QCOMPARE(formatBytes(1536), std::string("1.5 KiB"));
    QCOMPARE(formatBytes(uint64_t(38) << 30), std::string("38.0 GiB"));
  }

  void estimateAddsUpFromItsParts() {
    CompiledModel m = mlp();
    RunOptions o;
    HostMemoryEstimate e = estimateHostMemory(m, BackendKind::Cpu, o, true);
    uint64_t weights = 0, all = 0;
    for (const Value* v : m.graph->initializers()) weights += bytesOf(*v);
    for (const Value* v : m.graph->values()) all += bytesOf(*v);
    QVERIFY(e.arena >= weights + bytesOf(*m.graph->inputs()[0]));
    QCOMPARE(e.reference, all);
    QVERIFY(e.worker > e.arena);  // the whole run holds every buffer in the worker's region at once
    QCOMPARE(e.total(), e.arena + e.reference + e.kept + e.worker);
    o.verify = false;
    QCOMPARE(estimateHostMemory(m, BackendKind::Cpu, o, true).reference, uint64_t(0));
    QCOMPARE(estimateHostMemory(m, BackendKind::Cuda, o, true).worker, uint64_t(0));
  }

  void runOverTheLimitIsRefusedBeforeItStarts() {
    CompiledModel m = mlp();
    RunOptions o;
    o.reps = 1;
    o.warmup = 0;
    o.moduleCache = false;
    HostMemoryEstimate e = estimateHostMemory(m, BackendKind::Cpu, o, true);
    o.memoryLimit = {e.total() - 1, "setting 'memory/hostLimit'"};
    try {
      executeWithBaseline(m, BackendKind::Cpu, o);
      QFAIL("a run over the limit ran");
    } catch (const Error& e2) {
      std::string want = "run needs " + formatBytes(e.total()) + " of host memory (" + e.parts() + "); the limit is " +
                         formatBytes(e.total() - 1) + " (setting 'memory/hostLimit')";
      QCOMPARE(std::string(e2.what()), want);
    }
    o.memoryLimit.hostBytes = e.total();
    o.verify = false;  // quick: the estimate without the reference is smaller still
    QVERIFY(executeModel(m, BackendKind::Cpu, o).ran);
  }

  // On the GPU (the stand-in driver in CI: test_memory_limit_fake, whose device has 1 KiB free) a run whose
  // device buffers exceed the free memory is refused before anything is built.
  void cudaRunOverFreeDeviceMemoryIsRefused() {
    if (!qEnvironmentVariableIsSet("TESSERA_FAKE_CUDA_FREE_BYTES")) QSKIP("needs the stand-in driver's full device");
    CompiledModel m = mlp();
    RunOptions o;
    o.verify = false;
    try {
      executeModel(m, BackendKind::Cuda, o);
      QFAIL("a run over the device's free memory ran");
    } catch (const Error& e) {
      // The buffers, and the workspaces of kernels split over k (mlp's fc2 by default) on top of them.
      const std::string why = e.what();
      QVERIFY2(why.rfind("run needs ", 0) == 0 && why.find(" of device memory (buffers and workspaces)") != std::string::npos, e.what());
      QVERIFY2(deviceBytesNeeded(m, {}) < parseByteSize(why.substr(10, why.find(" of device") - 10)) * 2, e.what());
      QVERIFY2(std::string(e.what()).find("has 1.0 KiB free") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestMemoryLimit)
#include "test_memory_limit.moc"
