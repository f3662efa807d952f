// Pipelined gemms (the template's stages, docs/codegen.md Pipelines): the CUDA multi-buffers the shared tiles
// and fills them with cp.async (16-byte copies, zero-filled past the edges; 4-byte ones or plain loads where
// the lanes are not provably whole), NVRTC compiles it for sm_90, the schedule replays to byte-identical CUDA,
// the C++ keeps the serial meaning and runs verified, and on a GPU the CUDA runs verified.
#include <QtTest>

#include "codegen/codegen.h"
#include "frontend/text/tsr.h"
#include "kernel/printer.h"
#include "kernel/templates/templates.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"
#include "gemm_fixture.h"

using namespace tessera;
using testing::gemmModel;
using testing::messages;
using testing::once;
using testing::withParams;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

class TestPipeline : public QObject {
  Q_OBJECT
 private slots:
  void pipelinedGemms_data() {
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<QStringList>("expected");  // in the CUDA source
    QStringList wide = {"cp.async.cg.shared.global [%0], [%1], 16;", "cp.async.commit_group;", "cp.async.wait_group 2;",
                        "tsr_stages_in0_shared[3 * ", "tsr_stages_in1_shared[3 * ", "prologue: iterations 0..1"};
    // Tiles dividing the shape: every fill a whole 16-byte copy per thread.
    QTest::newRow("f32") << "f32" << 96 << 128 << 80 << wide;
    QTest::newRow("bf16 mma") << "bf16" << 96 << 128 << 80 << wide;
    // 40 rows: the last row tile's copies past row 40 read nothing and zero-fill (the guard is the lanes' own).
    QTest::newRow("f32 ragged rows") << "f32" << 40 << 128 << 80 << QStringList{"tsr_in ? 16 : 0", "cp.async.wait_group 2;"};
    // k = 70 and block_k 16: the last k tile ends inside a run of lanes (and rows of 70 floats are no whole 16-byte
    // runs), so each element is its own 4-byte copy (f32) or a plain load (bf16: cp.async has no 2-byte copy),
    // still multi-buffered and pipelined.
    QTest::newRow("f32 ragged k") << "f32" << 96 << 70 << 80
                                  << QStringList{"cp.async.ca.shared.global [%0], [%1], 4;", "cp.async.wait_group 2;"};
    // k = 72: the last k tile ends between runs of 4 lanes, so the guard is the same for a run's lanes: its copies
    // past k read nothing and zero-fill, 16 bytes at a time.
    QTest::newRow("f32 k on runs") << "f32" << 96 << 72 << 80 << QStringList{"tsr_in ? 16 : 0", "cp.async.wait_group 2;"};
    QTest::newRow("bf16 ragged k") << "bf16" << 96 << 72 << 80 << QStringList{"tsr_stages_in0_shared[3 * ", "cp.async.wait_group 2;"};
  }
  void pipelinedGemms() {
    QFETCH(QString, dtype);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(QStringList, expected);
    kernel::TemplateParams params = {{"stages", 3}, {"block_k", 16}};
    execute::CompiledModel model = withParams(gemmModel(dtype.toStdString(), m, k, n), params);
    QCOMPARE(model.kernels.size(), size_t(1));
    QVERIFY2(!model.kernels[0].onHost() && model.kernels[0].replayed, model.kernels[0].placement.reason.c_str());
    codegen::GeneratedKernel g = codegen::generateCuda(model.kernels[0].kernel);
    for (const QString& e : expected) QVERIFY2(has(g.source, e.toStdString()), qPrintable("missing: " + e));
    QCOMPARE(g.lineNodes.size(), size_t(std::count(g.source.begin(), g.source.end(), '\n')));
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "gemm.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    QVERIFY(has(r.ptx, "cp.async.wait_group 2"));
    // The C++ runs the copies serially with one copy of each tile: the IR's meaning.
    codegen::GeneratedKernel cpp = codegen::generateCpp(model.kernels[0].kernel);
    QVERIFY(!has(cpp.source, "cp.async"));
    execute::RunReport cpu = execute::executeModel(model, execute::BackendKind::Cpu, once());
    QVERIFY2(cpu.outputsVerified, messages(cpu).c_str());
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the pipelined kernel on: " + gpu.reason).c_str());
    execute::RunReport run = execute::executeModel(model, execute::BackendKind::Cuda, once());
    QVERIFY2(run.outputsVerified, messages(run).c_str());
  }

  void stagesOneCopiesSynchronously() {
    execute::CompiledModel model = withParams(gemmModel("f32", 96, 128, 80), {{"stages", 1}});
    codegen::GeneratedKernel g = codegen::generateCuda(model.kernels[0].kernel);
    QVERIFY(!has(g.source, "cp.async"));
    QVERIFY(!has(g.source, "tsr_stages_"));
  }

  void pipelinedScheduleReplaysToIdenticalCuda() {
    CompileResult cr = gemmModel("bf16", 96, 128, 80);
    execute::CompiledModel model = withParams(cr, {{"stages", 3}, {"block_k", 16}});
    execute::ScheduleSet saved = execute::ScheduleSet::load(model.schedules().save());
    execute::CompiledModel again = execute::compileKernels(cr, &saved);
    QVERIFY(again.staleSchedules.empty() && again.kernels[0].replayed);
    QVERIFY(again.kernels[0].kernel.params.at("stages") == 3);
    QCOMPARE(codegen::generateCuda(again.kernels[0].kernel).source, codegen::generateCuda(model.kernels[0].kernel).source);
  }

  // Like the tile sizes, stages is an upper bound: 2 k steps give 2 stages, and copies of 128 x 64 and 64 x 128
  // f32 tiles (64 KiB a copy) fit three times in the 227 KiB of shared memory a block may have, not four.
  void stagesAreBoundedByKStepsAndSharedMemory() {
    execute::CompiledModel shallow = withParams(gemmModel("f32", 64, 32, 64), {{"stages", 3}, {"block_k", 16}});
    QVERIFY(has(kernel::printKernel(shallow.kernels[0].kernel), "reduce pipeline(2) {"));
    execute::CompiledModel wide = withParams(gemmModel("f32", 256, 256, 256), {{"stages", 4}, {"block_k", 64}, {"block_m", 128},
                                                                          {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}});
    QVERIFY(!wide.kernels[0].onHost());
    QVERIFY(has(kernel::printKernel(wide.kernels[0].kernel), "reduce pipeline(3) {"));
  }

  // Above 48 KiB (static shared memory's limit) a block's shared arrays are slices of one dynamic arena the
  // kernel is launched with: three 32 KiB copies of the tiles here. Below it they stay static arrays.
  void sharedAbove48KiBIsDynamic() {
    execute::CompiledModel model = withParams(gemmModel("f32", 256, 256, 256), {{"stages", 3}, {"block_k", 32}, {"block_m", 128},
                                                                           {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}});
    QVERIFY(has(kernel::printKernel(model.kernels[0].kernel), "reduce pipeline(3) {"));
    codegen::GeneratedKernel g = codegen::generateCuda(model.kernels[0].kernel);
    QVERIFY(has(g.source, "extern __shared__ __align__(16) unsigned char tsr_smem[];"));
    QVERIFY(has(g.source, "float* const tsr_stages_in1_shared = reinterpret_cast<float*>(tsr_smem + 0);"));
    QVERIFY(has(g.source, "float* const tsr_stages_in0_shared = reinterpret_cast<float*>(tsr_smem + 49152);"));
    QVERIFY(!has(g.source, "__shared__ __align__(16) float"));
    QVERIFY2(g.dynamicSharedBytes >= 3 * 32768 && g.dynamicSharedBytes < 3 * 32768 + 1024,
             std::to_string(g.dynamicSharedBytes).c_str());
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "gemm.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    execute::CompiledModel small = withParams(gemmModel("f32", 96, 128, 80), {{"stages", 3}, {"block_k", 16}});
    codegen::GeneratedKernel s = codegen::generateCuda(small.kernels[0].kernel);
    QCOMPARE(s.dynamicSharedBytes, size_t(0));
    QVERIFY(!has(s.source, "tsr_smem"));
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the 96 KiB kernel on: " + gpu.reason).c_str());
    execute::RunReport run = execute::executeModel(model, execute::BackendKind::Cuda, once());
    QVERIFY2(run.outputsVerified, messages(run).c_str());
  }
};

QTEST_GUILESS_MAIN(TestPipeline)
#include "test_pipeline.moc"
