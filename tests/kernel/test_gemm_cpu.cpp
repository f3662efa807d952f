// The gemm template's CPU form (gemm-cpu, Kernel::machine == cpu) and the C++ generator's vector path: every
// point of its space schedules to a kernel that means the same as the reference or is refused; the default's
// register tile is declared as f32 vectors and accumulated in vector statements; and generated, compiled and
// run on the cpu backend, the kernels agree with the reference, with and without guards.
#include <QtTest>

#include "codegen/codegen.h"
#include "kernel/host.h"
#include "kernel/launch.h"
#include "kernel/templates/templates.h"
#include "runtime/execute/executor.h"
#include "cpu_run.h"
#include "reference_check.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

Case batchedGemm(int64_t B, int64_t M, int64_t N, int64_t K) {
  GraphBuilder b("bmm");
  Value* x = b.input("x", {DType::F32, {B, M, K}});
  Value* w = b.input("w", {DType::F32, {K, N}});
  b.output(b.op("MatMul", {x, w}, {}, "matmul"));
  return {b.finish(), {"g0", "gemm", {"matmul"}, {}, Machine::Cpu}};
}

// Gemm with transB = 1 (a fully connected layer as ONNX exports it): B's rows are the output's columns.
Case transposedB(int64_t M, int64_t N, int64_t K) {
  GraphBuilder b("fc");
  Value* x = b.input("x", {DType::F32, {M, K}});
  Value* w = b.input("w", {DType::F32, {N, K}});
  b.output(b.op("Gemm", {x, w}, {{"transB", int64_t(1)}}, "gemm"));
  return {b.finish(), {"g0", "gemm", {"gemm"}, {}, Machine::Cpu}};
}

std::string cpuRun(const Case& c, const TemplateParams& params = {}) {
  execute::ScheduleSet saved;
  saved.traces[execute::ScheduleSet::keyOf(c.spec.nodeIds)] = traceWithParams(c.graph, c.spec, params);
  return cpuRunFails(c, &saved);
}

}  // namespace

class TestGemmCpu : public QObject {
  Q_OBJECT
 private slots:
  void theCpuMachineGetsTheCpuForm() {
    QCOMPARE(templateName(lower(gemm())), std::string("gemm"));
    Kernel k = lower(onCpu(gemm(64, 64, 32)));
    QCOMPARE(templateName(k), std::string("gemm-cpu"));
    applyDefaultSchedule(k);
    std::string t = printKernel(k);
    QVERIFY2(has(t, "scheduled for the cpu"), t.c_str());
    QVERIFY2(has(t, " parallel {"), t.c_str());
    QVERIFY2(has(t, " vectorized {"), t.c_str());
    QCOMPARE(agreesWithReference(onCpu(gemm(64, 64, 32)).graph, k), std::string());
  }
  // Its one top-level loop shared among threads, the gemm's C++ makes it a worksharing loop of the caller's
  // region (the worker opens one for a whole run) and marks its wrapper so; outside any region the wrapper opens
  // its own. Under a loop that is not a plain one (unrolled here), the loop keeps a region of its own.
  void sharedLoopsRunInTheCallersRegion() {
    Kernel k = lower(onCpu(gemm(64, 64, 32)));
    applyDefaultSchedule(k);
    codegen::GeneratedKernel g = codegen::generateCpp(k);
    QVERIFY2(has(g.body, "#pragma omp for\n"), g.body.c_str());
    QVERIFY2(!has(g.body, "omp parallel for"), g.body.c_str());
    QVERIFY2(has(g.body, "if (omp_get_level() > 0) {"), g.body.c_str());
    QVERIFY2(has(g.body, g.entry + "_region = 1;"), g.body.c_str());
    QCOMPARE(cpuRun(onCpu(gemm(64, 64, 32))), std::string());
    Kernel unrolled = k;
    unrolled.body = ForStmt::make({"once", 1, LoopKind::Unrolled}, k.body);
    codegen::GeneratedKernel own = codegen::generateCpp(unrolled);
    QVERIFY2(has(own.body, "#pragma omp parallel for\n"), own.body.c_str());
    QVERIFY2(!has(own.body, "_region") && !has(own.body, "#pragma omp for\n"), own.body.c_str());
  }
  // Unrolls nest by multiplying: the loops around a statement ask GCC for 256 copies of it at most, the inner
  // loops getting what the outer ones leave (64 × 16 copies of a tile fill took g++ 6.9 s). Vector loops
  // (cpu_vector.cpp) are not counted: their copies are a few vectors each.
  void nestedUnrollsShareABudget() {
    Kernel k = lower(onCpu(gemm(64, 64, 32)));
    applyDefaultSchedule(k);
    k.body = ForStmt::make({"u_out", 64, LoopKind::Unrolled}, ForStmt::make({"u_in", 16, LoopKind::Unrolled}, k.body));
    std::string nested = codegen::generateCpp(k).body;
    QVERIFY2(has(nested, "#pragma GCC unroll 64\n  for (int64_t u_out = 0;"), nested.c_str());
    QVERIFY2(has(nested, "#pragma GCC unroll 4\n    for (int64_t u_in = 0;"), nested.c_str());
  }
  void defaultsFitTheHostsVectors() {
    TemplateParams p = defaultParams(lower(onCpu(gemm(64, 256, 32))));
    int64_t lanes = hostVectorBytes() / 4;
    QCOMPARE(p.at("tile_n"), std::min<int64_t>(64, 2 * lanes));
    QVERIFY(64 % p.at("tile_m") == 0);
    QVERIFY(p.at("block_m") % p.at("tile_m") == 0);
    QCOMPARE(p.at("pack_b"), int64_t(1));
  }
  // B's panel is packed only where it fits a quarter of this host's L2 (and the local arrays' limit).
  void thePanelFitsTheHostsL2() {
    QVERIFY(hostL2Bytes() >= (64 << 10));
    for (int64_t K : {32, 1024, 2048, 4096}) {
      TemplateParams p = defaultParams(lower(onCpu(gemm(64, 256, K))));
      const bool fits = K * p.at("tile_n") * 4 <= std::min<int64_t>(hostL2Bytes() / 4, kSharedBytesLimit);
      QCOMPARE(p.at("pack_b"), int64_t(fits ? 1 : 0));
    }
  }
  void theRegisterTileIsDeclaredAsVectors() {
    Kernel k = lower(onCpu(gemm(64, 64, 32)));
    applyDefaultSchedule(k);
    codegen::GeneratedKernel g = codegen::generateCpp(k);
    QVERIFY2(has(g.body, "tsr_vf acc0["), g.body.c_str());
    QVERIFY2(has(g.body, "/ TSR_VF] += ("), g.body.c_str());
    QVERIFY2(has(g.body, "tsr_vload(&in1_shared["), g.body.c_str());
    QVERIFY2(has(g.body, "+= TSR_VF) {"), g.body.c_str());
    // The GPU form of the same gemm, generated as C++, keeps float arrays: its loops are the threads'.
    Kernel gpu = lower(gemm(64, 64, 32));
    applyDefaultSchedule(gpu);
    QVERIFY(!has(codegen::generateCpp(gpu).body, "tsr_vf"));
  }
  void everyCpuPointIsCorrectOrRefused() {
    Case c = onCpu(gemm(40, 48, 20));  // 40 rows: tiles of 3, 6 and 16 leave guards
    std::map<std::string, std::vector<int64_t>> space;
    for (const TemplateParam& p : parameterSpace(lower(c))) space[p.name] = p.candidates;
    int scheduled = 0, refused = 0;
    for (int64_t tm : space["tile_m"])
      for (int64_t tn : space["tile_n"])
        for (int64_t bm : space["block_m"]) {
          Kernel k = lower(c);
          TracedSchedule s(k);
          try {
            applyTemplate(s, {{"tile_m", tm}, {"tile_n", tn}, {"block_m", bm}, {"pack_b", (tm + tn) % 2}});
          } catch (const ScheduleError&) {
            ++refused;
            continue;
          }
          std::string why = interpretedInSweep(scheduled) ? agreesWithReference(c.graph, k) : "";
          QVERIFY2(why.empty(), (std::to_string(tm) + "x" + std::to_string(tn) + " block " + std::to_string(bm) + ": " + why).c_str());
          ++scheduled;
        }
    qInfo() << scheduled << "scheduled and checked," << refused << "refused";
    QVERIFY(scheduled >= 50);
    QVERIFY(refused >= 10);  // block_m not a multiple of tile_m
  }
  void generatedKernelsRunOnTheCpuBackend() {
    QCOMPARE(cpuRun(onCpu(gemm(64, 64, 32))), std::string());
    QCOMPARE(cpuRun(onCpu(gemm(40, 48, 20)), {{"tile_m", 6}, {"tile_n", 32}, {"block_m", 12}}), std::string());
    QCOMPARE(cpuRun(onCpu(gemm(64, 96, 300)), {{"tile_m", 4}, {"tile_n", 48}, {"pack_b", 0}}), std::string());
    QCOMPARE(cpuRun(batchedGemm(3, 16, 32, 24)), std::string());
    QCOMPARE(cpuRun(transposedB(2, 40, 64)), std::string());
  }
  // A panel overhanging N (196 columns in panels of 32, densenet's 1 x 1 convs over 14 x 14): tiles wholly inside
  // store whole vectors, the last stores the lanes inside N by masked vectors, not 16 scalar copies a row (which
  // were a fifth of such a module's compile), and the kernel still means the product.
  void anOverhangingPanelStoresMaskedVectors() {
    Case c = onCpu(gemm(16, 196, 64));
    Kernel overcomputed = lower(c), versioned = lower(c);
    QVERIFY(defaultScheduleUses(overcomputed, "overcompute") && defaultScheduleUses(versioned, "version"));
    Kernel k = lower(c);
    applyDefaultSchedule(k);
    std::string body = codegen::generateCpp(k).body;
    QVERIFY2(has(body, "tsr_vstorem(&out0["), body.c_str());
    QVERIFY2(has(body, "tsr_vstore(&out0["), body.c_str());
    QCOMPARE(count(body, "_epi < 16; ++"), size_t(0));  // no scalar loop over the epilogue's lanes
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    QCOMPARE(cpuRun(c), std::string());
  }
  // A transposed B's columns are k apart: its column lanes stay unrolled (a forced `omp simd` gather of them ran
  // alexnet's last Gemm 250 times slower), and the kernel still means the Gemm.
  void aTransposedBKeepsItsLanesUnrolled() {
    Case c = transposedB(1, 64, 128);
    Kernel k = lower(c);
    applyDefaultSchedule(k);
    std::string t = printKernel(k);
    QVERIFY2(!has(t, " vectorized {"), t.c_str());
    QVERIFY2(has(t, " unrolled {"), t.c_str());
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    Kernel plain = lower(onCpu(gemm(1, 64, 128)));
    applyDefaultSchedule(plain);
    QVERIFY(has(printKernel(plain), " vectorized {"));  // B's rows along the columns: vectorized
  }
};

QTEST_GUILESS_MAIN(TestGemmCpu)
#include "test_gemm_cpu.moc"
