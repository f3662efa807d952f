// Code generation and the executor on every sample: CUDA compiles with NVRTC for sm_90 (no GPU needed), saved
// schedules replay to byte-identical CUDA, and the cpu backend runs every sample verified against the reference.
#include <QtTest>

#include <filesystem>

#include "codegen/codegen.h"
#include "frontend/model_io.h"
#include "frontend/text/tsr.h"
#include "kernel/templates/templates.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"
#include "gemm_fixture.h"

using namespace tessera;
using testing::gemmModel;
using testing::withParams;

namespace {
std::vector<std::string> samples() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TESSERA_SOURCE_DIR) + "/samples"))
    if (e.path().extension() == ".tsr") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}
execute::CompiledModel compileSample(const std::string& path, const execute::ScheduleSet* saved = nullptr) {
  CompileResult r = compileGraph(loadModel(path), CompileOptions{});
  return execute::compileKernels(r, saved);
}
}  // namespace

class TestCodegen : public QObject {
  Q_OBJECT
 private slots:
  void commentsAreSanitized() {
    QCOMPARE(codegen::sanitizeComment("a*/b\nc;d"), std::string("a/bcd"));  // no "*/", no newline
    QCOMPARE(codegen::identifier("9x-y"), std::string("t_9x_y"));
  }

  void samplesCompileForSm90() {
    cuda::NvrtcCompiler nvrtc;
    for (const auto& path : samples()) {
      execute::CompiledModel m = compileSample(path);
      QVERIFY(!m.kernels.empty());
      std::vector<codegen::GeneratedKernel> gen;
      for (const auto& ck : m.kernels) {
        QVERIFY2(!ck.onHost(), (path + ": " + ck.placement.reason).c_str());
        gen.push_back(codegen::generateCuda(ck.kernel));
        QCOMPARE(gen.back().lineNodes.size(), size_t(std::count(gen.back().source.begin(), gen.back().source.end(), '\n')));
      }
      cuda::NvrtcResult r = nvrtc.compile(codegen::combineSources(gen), "model.cu", {}, "sm_90");
      QVERIFY2(r.ok, (path + ": " + r.error).c_str());
      QVERIFY(!r.cubin.empty());
    }
  }

  void savedSchedulesReplayIdentically() {
    for (const auto& path : samples()) {
      execute::CompiledModel m = compileSample(path);
      execute::ScheduleSet saved = execute::ScheduleSet::load(m.schedules().save());
      execute::CompiledModel again = compileSample(path, &saved);
      QVERIFY(again.staleSchedules.empty());
      QCOMPARE(again.kernels.size(), m.kernels.size());
      for (size_t i = 0; i < m.kernels.size(); ++i) {
        QVERIFY(again.kernels[i].replayed);
        QCOMPARE(codegen::generateCuda(again.kernels[i].kernel).source, codegen::generateCuda(m.kernels[i].kernel).source);
      }
    }
  }

  void staleScheduleIsReported() {
    execute::ScheduleSet s;
    s.traces["no-such-node"] = kernel::Trace{};
    execute::CompiledModel m = compileSample(std::string(TESSERA_SOURCE_DIR) + "/samples/softmax.tsr", &s);
    QCOMPARE(m.staleSchedules.size(), size_t(1));
  }

  void samplesRunVerifiedOnCpu() {
    for (const auto& path : samples()) {
      execute::CompiledModel m = compileSample(path);
      execute::RunOptions o;
      o.reps = 1;
      o.warmup = 0;
      execute::RunReport r = execute::executeModel(m, execute::BackendKind::Cpu, o);
      QVERIFY2(r.ran, path.c_str());
      std::string why = path;
      for (const auto& msg : r.messages) why += "; " + msg;
      QVERIFY2(r.outputsVerified, why.c_str());
      for (const auto& k : r.kernels) {
        QCOMPARE(k.status, execute::KernelStatus::Ok);
        QVERIFY(k.ms >= 0);
      }
    }
  }

  // The tiled gemm on both targets: shared tiles and per-thread accumulators (f32), tensor-core mma (bf16);
  // NVRTC compiles both for sm_90 and the cpu backend runs both verified (the mma tiles as plain loops there).
  void tiledGemmsOnBothTargets() {
    for (const char* t : {"f32", "bf16"}) {
      execute::CompiledModel m = execute::compileKernels(gemmModel(t, 96, 64, 80), nullptr);
      QCOMPARE(m.kernels.size(), size_t(1));
      codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
      QVERIFY(g.source.find("__shared__") != std::string::npos);
      bool bf16 = std::string(t) == "bf16";
      QCOMPARE(g.source.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") != std::string::npos, bf16);
      cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "gemm.cu", {}, "sm_90");
      QVERIFY2(r.ok, r.error.c_str());
      execute::RunOptions o;
      o.reps = 1;
      o.warmup = 0;
      execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cpu, o);
      QVERIFY2(run.outputsVerified, t);
    }
  }

  // A block tile overhanging M (100 rows in 64-row tiles): inside the k loop the rows past M are computed on
  // registers from the zero-filled shared tiles, unguarded; the stores keep the guard. A guard on a reduction
  // step (K = 20 in steps of 8) is kept: it leaves out products, not rows. Both compile for sm_90.
  void overhangingTileComputesUnguarded() {
    struct Shape {
      int m, k;
      int64_t blockK;
      bool unguarded;
    };
    for (Shape c : {Shape{100, 32, 16, true}, Shape{64, 20, 8, false}}) {
      CompileResult cr = gemmModel("f32", c.m, c.k, 64);
      execute::CompiledModel m = withParams(cr, {{"block_m", 64}, {"block_n", 64}, {"thread_m", 4}, {"thread_n", 4},
                                                 {"block_k", c.blockK}, {"stages", 1}});
      std::string src = codegen::generateCuda(m.kernels[0].kernel).source;
      QCOMPARE(src.find("unguarded (") != std::string::npos, c.unguarded);
      if (c.unguarded) QVERIFY(src.find(" < 100)) {") != std::string::npos);  // the stores' guard
      else QVERIFY(src.find(" < 20)) {") != std::string::npos);
      cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(src, "gemm.cu", {}, "sm_90");
      QVERIFY2(r.ok, r.error.c_str());
    }
  }

  // A K the mma steps do not divide (ViT's attention · V: 197 keys) still runs on the tensor cores: the default
  // schedule takes the mma form, and the last step's fragment elements past K are zeroed in both operands
  // (16-bit halves by mask, tf32 registers whole). NVRTC compiles both for sm_90; on a GPU both run verified
  // against the interpreter (the C++ and the interpreter keep the guard as the IR has it).
  void depthRemainderMasksFragments() {
    struct Case {
      std::string type;
      int k;
      kernel::TemplateParams params;
      std::string instruction, mask;
    };
    std::vector<Case> cases = {
        {"bf16", 197, {}, "mma.sync.aligned.m16n8k16", "&= 0xFFFF0000u;"},
        {"f32", 20, {{"block_m", 32}, {"block_n", 16}, {"warp_m", 32}, {"warp_n", 16}, {"block_k", 16}, {"mma", 1}, {"tf32", 1}},
         "mma.sync.aligned.m16n8k8", " = 0u;"}};
    for (const Case& c : cases) {
      CompileResult cr = gemmModel(c.type, 100, c.k, 64);
      execute::CompiledModel m = c.params.empty() ? execute::compileKernels(cr, nullptr) : withParams(cr, c.params);
      QCOMPARE(m.kernels[0].kernel.params.at("mma"), int64_t(1));
      std::string src = codegen::generateCuda(m.kernels[0].kernel).source;
      QVERIFY2(src.find(c.instruction) != std::string::npos, c.type.c_str());
      QVERIFY2(src.find(c.mask) != std::string::npos, c.type.c_str());
      QVERIFY(src.find(" < " + std::to_string(c.k) + "))))") != std::string::npos);  // the mask's condition
      cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(src, "gemm.cu", {}, "sm_90");
      QVERIFY2(r.ok, r.error.c_str());
      QVERIFY(execute::executeModel(m, execute::BackendKind::Cpu, testing::once()).outputsVerified);
      cuda::Availability gpu = cuda::cudaAvailability();
      if (!gpu.available) {
        qInfo("no GPU to run the masked mma on: %s", gpu.reason.c_str());
        continue;
      }
      execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cuda, testing::once());
      QVERIFY2(run.outputsVerified, testing::messages(run).c_str());
    }
  }

  // tf32 = 1 on an f32 gemm: CUDA rounds the operands (cvt.rna) and runs m16n8k8 tf32 mma.sync, says so in its
  // precision, and NVRTC compiles it for sm_90; the C++ keeps exact f32 (with a note) and runs verified at f32's
  // tolerance; on a GPU the CUDA kernel runs verified at tf32's. tf32 = 2 hands the f32 bits to the mma as they
  // are (a truncation), tf32 = 3 rounds them by an integer add: no cvt, the same precision and checks.
  void tf32GemmOnBothTargets_data() {
    QTest::addColumn<int>("tf32");
    QTest::newRow("rounded") << 1;
    QTest::newRow("truncated") << 2;
    QTest::newRow("rounded by an add") << 3;
  }
  void tf32GemmOnBothTargets() {
    QFETCH(int, tf32);
    CompileResult cr = gemmModel("f32", 96, 64, 80);
    execute::CompiledModel m =
        withParams(cr, {{"block_m", 32}, {"block_n", 16}, {"warp_m", 32}, {"warp_n", 16}, {"block_k", 32}, {"mma", 1}, {"tf32", tf32}});
    QCOMPARE(m.kernels.size(), size_t(1));
    QVERIFY2(!m.kernels[0].onHost() && m.kernels[0].replayed, m.kernels[0].placement.reason.c_str());
    codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
    QVERIFY(g.source.find("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") != std::string::npos);
    QCOMPARE(g.source.find("cvt.rna.tf32.f32") != std::string::npos, tf32 == 1);
    QCOMPARE(g.source.find("] = __float_as_uint(") != std::string::npos, tf32 >= 2);  // a fragment register
    QCOMPARE(g.source.find(") + 0x1000u;") != std::string::npos, tf32 == 3);
    QCOMPARE(g.precision, std::string("tf32"));
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "gemm.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    codegen::GeneratedKernel cpp = codegen::generateCpp(m.kernels[0].kernel);
    QCOMPARE(cpp.precision, std::string());
    QVERIFY(cpp.source.find("is a tensor-core format, not used on the CPU") != std::string::npos);
    execute::RunOptions o;
    o.reps = 1;
    o.warmup = 0;
    execute::RunReport cpu = execute::executeModel(m, execute::BackendKind::Cpu, o);
    QVERIFY(cpu.outputsVerified);
    QCOMPARE(cpu.kernels[0].precision, std::string());
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the tf32 kernel on: " + gpu.reason).c_str());
    execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cuda, o);
    std::string why;
    for (const auto& msg : run.messages) why += msg + "; ";
    QVERIFY2(run.outputsVerified, why.c_str());
    QCOMPARE(run.kernels[0].precision, std::string("tf32"));
    QVERIFY(run.toJson()["kernels"][0]["precision"] == "tf32");
  }
};

QTEST_GUILESS_MAIN(TestCodegen)
#include "test_codegen.moc"
