// The gemm template's wgmma form (Hopper's warpgroup MMA): which gemms take it by default, the swizzle
// primitive's preconditions, the CUDA it generates (one wgmma per k step of a warpgroup, compiled by NVRTC for
// sm_90a without a GPU), the C++ of the same schedule run verified on the cpu (which checks the swizzled
// addressing of fills and reads against the reference), and on a GPU the CUDA run verified.
#include <QtTest>

#include "codegen/codegen.h"
#include "frontend/text/tsr.h"
#include "kernel/lower/lower.h"
#include "kernel/printer.h"
#include "kernel/schedule/trace.h"
#include "kernel/templates/templates.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "gemm_fixture.h"

using namespace tessera;
using testing::gemmModel;
using testing::messages;
using testing::once;
using testing::withParams;

namespace {

// Y = A·B (+ relu) through Gemm with its transpose attributes: A is [k, m] when transA, B [n, k] when transB.
CompileResult transposedGemm(bool transA, bool transB, int m, int k, int n) {
  auto dims = [](bool t, int rows, int cols) { return "[" + std::to_string(t ? cols : rows) + "," + std::to_string(t ? rows : cols) + "]"; };
  std::string text = "graph g {\n  input %a: bf16" + dims(transA, m, k) + "\n  input %b: bf16" + dims(transB, k, n) +
                     "\n  node mm = Gemm(%a, %b) {transA = " + std::to_string(int(transA)) + ", transB = " +
                     std::to_string(int(transB)) + "} -> %p\n  node act = Relu(%p) -> %y\n  output %y\n}\n";
  return compileGraph(parseTsr(text), CompileOptions{});
}

// The kernel's CUDA compiles with NVRTC for the architecture it asks for; sm_90 (no suffix) refuses wgmma.
void compilesForSm90a(const codegen::GeneratedKernel& g) {
  QVERIFY(g.archSpecific);
  QCOMPARE(codegen::nvrtcArch(g, "sm_90"), std::string("sm_90a"));
  cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "wgmma.cu", {}, codegen::nvrtcArch(g, "sm_90"));
  QVERIFY2(r.ok, r.error.c_str());
  QVERIFY(r.ptx.find("wgmma.mma_async") != std::string::npos);
  QVERIFY(!cuda::NvrtcCompiler().compile(g.source, "wgmma.cu", {}, "sm_90").ok);
}

// What the template says when it refuses `params` ("" when it schedules them).
std::string refusal(const CompileResult& cr, const kernel::TemplateParams& params) {
  try {
    withParams(cr, params);
  } catch (const kernel::ScheduleError& e) {
    return e.what();
  }
  return "";
}

// The small tiles the cpu runs: 64 x 128 blocks, two warpgroups of 64 x 64 side by side, 2 stages.
const kernel::TemplateParams kSmall = {{"wgmma", 1}, {"mma", 1}, {"block_m", 64}, {"block_n", 128}, {"warp_n", 64},
                                       {"block_k", 64}, {"stages", 2}, {"pad", 0}, {"store_tile", 0}, {"tma", 1}};

void cpuRunVerified(const execute::CompiledModel& m) {
  QVERIFY2(!m.kernels[0].onHost(), m.kernels[0].placement.reason.c_str());
  execute::RunReport cpu = execute::executeModel(m, execute::BackendKind::Cpu, once());
  QVERIFY2(cpu.outputsVerified, messages(cpu).c_str());
}

bool gpuHere() { return cuda::cudaAvailability().available; }
const char* noGpu() {
  static const std::string why = "no GPU to run the wgmma kernels on: " + cuda::cudaAvailability().reason;
  return why.c_str();
}

// Verified on the GPU (the caller skips when there is none).
void gpuRunVerified(const execute::CompiledModel& m) {
  execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cuda, once());
  QVERIFY2(run.outputsVerified, messages(run).c_str());
}

}  // namespace

class TestWgmma : public QObject {
  Q_OBJECT
 private slots:
  // A bf16 gemm whose sides divide 128 (N by 256) takes the wgmma form by default: 128 x 256 blocks, two
  // warpgroups, 64-deep steps, swizzled operand tiles; one wgmma m64n256k16 per k step, and a proxy fence
  // before each barrier. (Its C++ is too large a build for a unit test: the small tiles below run on the cpu.)
  void defaultBf16GemmIsWgmma() {
    execute::CompiledModel m = execute::compileKernels(gemmModel("bf16", 256, 256, 512), nullptr);
    QCOMPARE(m.kernels.size(), size_t(1));
    const kernel::Kernel& k = m.kernels[0].kernel;
    QCOMPARE(k.params.at("wgmma"), int64_t(1));
    QCOMPARE(k.params.at("block_n"), int64_t(256));
    QCOMPARE(k.params.at("stages"), int64_t(3));  // beside the output tile, through shared memory
    QCOMPARE(k.params.at("tma"), int64_t(1));
    QVERIFY(kernel::printKernel(k).find("128-byte swizzle") != std::string::npos);
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(g.source.find("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16") != std::string::npos);
    QVERIFY(g.source.find("fence.proxy.async.shared::cta") != std::string::npos);
    QVERIFY(g.source.find("mma.sync") == std::string::npos);
    QCOMPARE(g.launch.block[0] * g.launch.block[1] * g.launch.block[2], 256u);
    // TMA: A's tiles are boxes of 64 columns x 128 rows of a 256 x 256 tensor, B's of 64 x 64 of 256 x 512, each
    // a bulk tensor copy completing on the stage's mbarrier; their maps are the last parameters.
    QCOMPARE(g.tensorMaps.size(), size_t(2));
    for (const auto& map : g.tensorMaps) {
      bool a = map.param == 0;
      QCOMPARE(map.dims, (std::vector<uint64_t>{a ? 256u : 512u, 256u}));
      QCOMPARE(map.box, (std::vector<uint32_t>{64u, a ? 128u : 64u}));
    }
    QVERIFY(g.source.find("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes") != std::string::npos);
    QVERIFY(g.source.find("mbarrier.try_wait.parity") != std::string::npos);
    QVERIFY(g.source.find("cp.async.cg") == std::string::npos);
    compilesForSm90a(g);
    if (!gpuHere()) QSKIP(noGpu());
    gpuRunVerified(m);
  }

  // Small tiles, run on the cpu too (its C++ addresses the swizzled tiles as the CUDA does): one warpgroup of
  // 64 rows, two of 64 columns side by side (B's tile two 64-column chunks), 2 stages; bf16 and f16.
  void smallTilesBothTypes() {
    for (const char* t : {"bf16", "f16"}) {
      kernel::TemplateParams params = kSmall;
      params["tma"] = std::string(t) == "bf16" ? 1 : 0;  // the f16 tiles by every thread's cp.async
      execute::CompiledModel m = withParams(gemmModel(t, 128, 128, 128), params);
      codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
      std::string op = std::string("wgmma.mma_async.sync.aligned.m64n64k16.f32.") + t + "." + t;
      QVERIFY2(g.source.find(op) != std::string::npos, op.c_str());
      QCOMPARE(g.tensorMaps.size(), size_t(params["tma"] ? 2 : 0));
      compilesForSm90a(g);
      cpuRunVerified(m);
      if (gpuHere()) gpuRunVerified(m);
    }
  }

  // Gemm's transposes: A read M-major (transA) and B K-major (transB) set wgmma's transpose immediates.
  void transposedOperands() {
    std::vector<execute::CompiledModel> models;
    for (auto [ta, tb] : {std::pair{false, true}, std::pair{true, false}, std::pair{true, true}}) {
      models.push_back(withParams(transposedGemm(ta, tb, 128, 128, 128), kSmall));
      codegen::GeneratedKernel g = codegen::generateCuda(models.back().kernels[0].kernel);
      std::string flags = std::string(", p, 1, 1, ") + (ta ? "1" : "0") + ", " + (tb ? "0" : "1") + ";";
      QVERIFY2(g.source.find(flags) != std::string::npos, flags.c_str());
      compilesForSm90a(g);
      cpuRunVerified(models.back());
    }
    if (!gpuHere()) QSKIP(noGpu());
    for (const execute::CompiledModel& m : models) gpuRunVerified(m);
  }

  // N or K sides the tiles do not divide keep the mma form; asking for wgmma there is refused naming the parameter.
  void unevenShapesKeepTheMmaForm() {
    CompileResult cr = gemmModel("bf16", 96, 64, 80);
    execute::CompiledModel m = execute::compileKernels(cr, nullptr);
    QCOMPARE(m.kernels[0].kernel.params.at("wgmma"), int64_t(0));
    QVERIFY(refusal(cr, {{"wgmma", 1}, {"mma", 1}, {"block_m", 64}, {"block_n", 64}, {"warp_n", 64}, {"block_k", 64}}).find("block_n") !=
            std::string::npos);
    std::string f32 = refusal(gemmModel("f32", 128, 64, 128), {{"wgmma", 1}, {"mma", 1}, {"tf32", 1}});
    QVERIFY2(f32.find("wgmma") != std::string::npos, f32.c_str());
  }

  // M need not divide (ViT's 6304 token rows): the warpgroups compute the last block's rows past M from
  // whatever their shared rows hold (rows of a product are independent; the TMA fills them with zeros) and the
  // epilogue does not store them. The default takes the form, unguarded in its k steps.
  void overhangingRowsTakeWgmma() {
    execute::CompiledModel m = execute::compileKernels(gemmModel("bf16", 200, 128, 128), nullptr);
    QCOMPARE(m.kernels[0].kernel.params.at("wgmma"), int64_t(1));
    QCOMPARE(m.kernels[0].kernel.params.at("block_m"), int64_t(128));
    codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
    QVERIFY(g.source.find("wgmma.mma_async.sync.aligned.m64n128k16") != std::string::npos);
    QVERIFY(g.source.find("mma.sync") == std::string::npos);
    QVERIFY(g.source.find(" < 200") != std::string::npos);  // the stores' guard
    compilesForSm90a(g);
    cpuRunVerified(m);
    if (!gpuHere()) QSKIP(noGpu());
    gpuRunVerified(m);
  }

  // A kernel that needs sm_90a has no form on other architectures: the message names it and the way out.
  void otherArchitecturesAreRefusedByName() {
    codegen::GeneratedKernel g;
    g.kernelId = "k7";
    g.archSpecific = true;
    try {
      codegen::nvrtcArch(g, "sm_80");
      QFAIL("sm_80 accepted a wgmma kernel");
    } catch (const Error& e) {
      QVERIFY(std::string(e.what()).find("'k7'") != std::string::npos);
      QVERIFY(std::string(e.what()).find("wgmma = 0") != std::string::npos);
    }
    g.archSpecific = false;
    QCOMPARE(codegen::nvrtcArch(g, "sm_80"), std::string("sm_80"));
  }

  // The swizzle primitive: shared, unpadded, rows of whole 128-byte chunks, a multiple of 8 rows; it replays
  // from its trace to the same kernel.
  void swizzlePreconditionsAndReplay() {
    execute::CompiledModel m = execute::compileKernels(gemmModel("bf16", 256, 256, 512), nullptr);
    const execute::CompiledKernel& ck = m.kernels[0];
    kernel::Kernel fresh = kernel::lowerToLoops(*m.graph, ck.spec);
    kernel::replay(fresh, kernel::Trace::fromJson(ck.trace.toJson()));
    QCOMPARE(kernel::printKernel(fresh), kernel::printKernel(ck.kernel));
    kernel::Kernel k = ck.kernel.clone();
    auto stepOf = [&](const std::string& buffer, int64_t bytes) {
      try {
        kernel::sched::swizzle(k, buffer, bytes);
      } catch (const kernel::ScheduleError& e) {
        return e.step();
      }
      return 0;
    };
    QCOMPARE(stepOf("in0", 128), 2);  // a global buffer
    std::string tile;
    for (const kernel::Buffer& b : k.buffers)
      if (b.swizzleBytes) tile = b.name;
    QVERIFY(!tile.empty());
    QCOMPARE(stepOf(tile, 64), 3);
    QCOMPARE(stepOf(tile, 128), 4);  // already swizzled
  }
};

QTEST_GUILESS_MAIN(TestWgmma)
#include "test_wgmma.moc"
