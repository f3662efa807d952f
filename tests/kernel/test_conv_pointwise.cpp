// 1 x 1 convs on the GPU as batched gemms (lowerPointwiseConv): the nest and its buffer views; that it
// interprets equal to the reference as lowered and as the gemm template's tf32 form schedules it; that the
// CUDA fills both operand tiles 16 bytes a copy (columns past N included, zero-filled) and compiles for sm_90;
// on the CPU too, overhanging panels included; grouped ones as a gemm per group; where the conv's own nest stays
// (strides, padding, an operand varying along w only); that a
// saved trace for one machine is not stale on the other though their nests differ; and, on a GPU, a verified run.
#include <QtTest>

#include "kernel/shared_banks.h"

#include "codegen/codegen.h"
#include "kernel/templates/template_util.h"
#include "cpu_run.h"
#include "kernel_fixtures.h"
#include "kernel/shared_banks.h"
#include "kernel/templates/templates.h"
#include "reference_check.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

using Ints = std::vector<int64_t>;

struct Conv1x1 {
  int64_t N = 2, C = 32, H = 7, W = 7, OC = 24;
  Attributes attrs = {};
  int64_t group = 1;
  bool rowOperand = false;  // an Add of a [W] tensor, which varies along w only
};

// relu(conv(x, w) + bias) * scale[oc, 1, 1] + residual, under PyTorch's tf32 policy, for machine `m`.
Case conv1x1(const Conv1x1& d, Machine m = Machine::Gpu) {
  GraphBuilder b("pwconv");
  Value* x = b.input("x", {DType::F32, {d.N, d.C, d.H, d.W}});
  std::vector<double> wv(size_t(d.OC * d.C / d.group));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = double(int64_t(i % 13) - 6) * 0.02;
  Value* w = b.constant("w", Tensor::fromDoubles(DType::F32, {d.OC, d.C / d.group, 1, 1}, wv));
  Value* bias = b.constant("bias", filled(DType::F32, {d.OC}, 0.05));
  Value* scale = b.constant("scale", filled(DType::F32, {d.OC, 1, 1}, 1.5));
  Attributes attrs = d.attrs;
  if (d.group != 1) attrs["group"] = d.group;
  Value* y = b.op("Conv", {x, w, bias}, attrs, "conv");
  Value* r = b.input("r", {DType::F32, y->shape()});
  Value* s = b.op("Mul", {b.op("Relu", {y}, {}, "relu"), scale}, {}, "scale");
  Value* out = b.op("Add", {s, r}, {}, "residual");
  std::vector<std::string> ids = {"conv", "relu", "scale", "residual"};
  if (d.rowOperand) {
    out = b.op("Add", {out, b.constant("row", filled(DType::F32, {y->shape().back()}, 0.5))}, {}, "row");
    ids.push_back("row");
  }
  b.output(out);
  Case c{b.finish(), {"g0", "conv+epilogue", ids}};
  c.spec.tf32 = {true, false};
  c.spec.machine = m;
  return c;
}

const Buffer* bufferOf(const Kernel& k, const std::string& value) {
  for (const Buffer& b : k.buffers)
    if (b.value == value) return &b;
  return nullptr;
}

}  // namespace

class TestConvPointwise : public QObject {
  Q_OBJECT
 private slots:
  // Loops b0 (images), i (output channels), j (pixels), reducing k (input channels); every global buffer a
  // view of its value: the planes as rows of h·w, the weights as a matrix, the per-channel scale as [oc, 1].
  // A grouped one (ShuffleNet's 1 x 1 convs over 4 groups) is a gemm per image and group: loops b0, b1 (the
  // group), i, j; X as [n, groups, ic / groups, h·w], W as [groups, oc / groups, ic / groups], the per-channel
  // scale as [groups, oc / groups, 1].
  void aGroupedOneIsAGemmPerGroup() {
    Case c = conv1x1({2, 32, 7, 7, 24, {}, 4});
    Kernel k = lowerToLoops(c.graph, c.spec);
    QCOMPARE(k.kind, std::string("gemm"));
    QCOMPARE(templ::outerChain(k), (std::vector<std::string>{"b0", "b1", "i", "j"}));
    QCOMPARE(bufferOf(k, "x")->shape, (Shape{2, 4, 8, 49}));
    QCOMPARE(bufferOf(k, "w")->shape, (Shape{4, 6, 8}));
    QCOMPARE(bufferOf(k, "scale")->shape, (Shape{4, 6, 1}));
    QCOMPARE(bufferOf(k, "r")->shape, (Shape{2, 4, 6, 49}));
    applyDefaultSchedule(k);
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(codegen::generateCuda(k).source, "grouped.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
  }
  void lowersAsABatchedGemmOverThePlanes() {
    Case c = conv1x1({});
    Kernel k = lowerToLoops(c.graph, c.spec);
    QCOMPARE(k.kind, std::string("gemm"));
    QVERIFY(k.allowTf32);  // the conv's policy, though the kernel is a gemm
    QCOMPARE(templ::outerChain(k), (std::vector<std::string>{"b0", "i", "j"}));
    QCOMPARE(bufferOf(k, "x")->shape, (Shape{2, 32, 49}));
    QCOMPARE(bufferOf(k, "x")->graphShape(), (Shape{2, 32, 7, 7}));
    QCOMPARE(bufferOf(k, "w")->shape, (Shape{24, 32}));
    QCOMPARE(bufferOf(k, "scale")->shape, (Shape{24, 1}));
    QCOMPARE(bufferOf(k, "bias")->shape, (Shape{24}));
    QCOMPARE(bufferOf(k, "r")->shape, (Shape{2, 24, 49}));
  }
  // As lowered and as scheduled by the gemm template's defaults (the tf32 mma form: N = 49 pixels overhang
  // the 64-wide tiles), the kernel interpreter agrees with the reference; so do odd sizes.
  void interpretsEqualToTheReference() {
    for (const Conv1x1& d : {Conv1x1{}, Conv1x1{3, 16, 5, 9, 40}, Conv1x1{1, 64, 14, 14, 128}, Conv1x1{2, 32, 7, 7, 24, {}, 4}}) {
      Case c = conv1x1(d);
      Kernel plain = lowerToLoops(c.graph, c.spec);
      QCOMPARE(agreesWithReference(c.graph, plain), std::string());
      Kernel scheduled = lowerToLoops(c.graph, c.spec);
      applyDefaultSchedule(scheduled);
      QCOMPARE(agreesWithReference(c.graph, scheduled), std::string());
    }
  }
  // The defaults take the tensor cores in tf32 only where the policy allows it; exact f32 keeps the CUDA cores.
  void tf32OnlyWhereThePolicyAllows() {
    Case c = conv1x1({1, 64, 14, 14, 128});
    Kernel k = lowerToLoops(c.graph, c.spec);
    TemplateParams p = defaultParams(k);
    QCOMPARE(p.at("mma"), int64_t(1));
    QCOMPARE(p.at("tf32"), int64_t(1));
    c.spec.tf32 = {};
    Kernel exact = lowerToLoops(c.graph, c.spec);
    QCOMPARE(exact.kind, std::string("gemm"));
    QCOMPARE(defaultParams(exact).at("tf32"), int64_t(0));
    QCOMPARE(defaultParams(exact).at("mma"), int64_t(0));
    // A reduction of 64 channels into 256 over 56²: blocks of 128 x 64, warps of 64 x 32 (four steps of 16 are
    // over soon: more blocks in flight); 256 channels into 64 keep 128 x 128 blocks of 64 x 64 warps.
    TemplateParams shortK = defaultParams(lowerToLoops(conv1x1({4, 64, 56, 56, 256}).graph, conv1x1({4, 64, 56, 56, 256}).spec));
    QCOMPARE(shortK.at("block_n"), int64_t(64));
    QCOMPARE(shortK.at("warp_n"), int64_t(32));
    TemplateParams longK = defaultParams(lowerToLoops(conv1x1({4, 256, 56, 56, 64}).graph, conv1x1({4, 256, 56, 56, 64}).spec));
    QCOMPARE(longK.at("warp_n"), int64_t(64));
    // 1024 channels into 256 over 14² at batch 32: 32-deep steps (the grid fills the SMs), both stages kept past
    // 48 KiB; at batch 1 16-deep ones, which the split-K default counts.
    Case deep = conv1x1({32, 1024, 14, 14, 256});
    TemplateParams deepK = defaultParams(lowerToLoops(deep.graph, deep.spec));
    QCOMPARE(deepK.at("block_k"), int64_t(32));
    QCOMPARE(deepK.at("stages"), int64_t(2));
    Case one = conv1x1({1, 1024, 14, 14, 256});
    QCOMPARE(defaultParams(lowerToLoops(one.graph, one.spec)).at("block_k"), int64_t(16));
  }
  // The tf32 fragments' banks (kernel/shared_banks.h): the weights' tile (A, 16-deep rows) and the pixels' (B, 64
  // wide, depth down the rows) each take 4 wavefronts a load unpadded; the defaults pad A's rows by 4 (20 words:
  // 1) and B's by 4 more (72: 1). A 16-bit operand refuses a pad of 4 (ldmatrix's 16-byte rows); the padded
  // schedule interprets equal to the reference (tests above) and its CUDA reads rows 20 and 72 apart.
  void tf32TilesArePaddedByTheirBanks() {
    QCOMPARE(tf32OperandWavefronts(true, true, 16), 4.0);
    QCOMPARE(tf32OperandWavefronts(false, false, 64), 4.0);
    QCOMPARE(tf32OperandWavefronts(true, true, 20), 1.0);
    QCOMPARE(tf32OperandWavefronts(false, false, 72), 1.0);
    Case c = conv1x1({4, 64, 56, 56, 256});
    Kernel k = lowerToLoops(c.graph, c.spec);
    TemplateParams p = defaultParams(k);
    QCOMPARE(p.at("pad"), int64_t(4));
    QCOMPARE(p.at("pad_b"), int64_t(4));
    applyDefaultSchedule(k);
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(has(g.source, "* 20 + (tsr_t"));
    QVERIFY(has(g.source, "* 72 + ((tsr_g"));
    Case small = conv1x1({1, 16, 5, 9, 40});
    Kernel padded = lowerToLoops(small.graph, small.spec);
    TracedSchedule ps(padded);
    applyTemplate(ps, {{"mma", 1}, {"tf32", 1}, {"warp_m", 16}, {"warp_n", 16}, {"block_m", 32}, {"block_n", 32}, {"block_k", 8}, {"pad", 4}, {"pad_b", 8}});
    QCOMPARE(agreesWithReference(small.graph, padded), std::string());
    // 32-deep steps of padded tiles in two stages (the long-K default), over a ragged N.
    Case deep = conv1x1({1, 64, 5, 9, 40});
    Kernel deepK = lowerToLoops(deep.graph, deep.spec);
    TracedSchedule ds(deepK);
    applyTemplate(ds, {{"mma", 1}, {"tf32", 1}, {"warp_m", 16}, {"warp_n", 16}, {"block_m", 32}, {"block_n", 32}, {"block_k", 32}, {"pad", 4}, {"pad_b", 4}, {"stages", 2}});
    QCOMPARE(agreesWithReference(deep.graph, deepK), std::string());
    Kernel bf = lower(gemmWithoutEpilogue(64, 64, 64, DType::BF16));
    TracedSchedule bs(bf);
    QVERIFY(failsNaming([&] { applyTemplate(bs, {{"mma", 1}, {"warp_m", 32}, {"warp_n", 32}, {"pad", 4}}); }, "pad", "multiples of 8"));
  }
  // 14 x 14 planes: 196 pixels, whole runs of 4 floats, so both tiles fill by 16-byte cp.async, the B tile's
  // columns past 196 zero-filled a run at a time; one tf32 mma.sync per tile; NVRTC compiles it.
  void cudaFillsSixteenBytesACopy() {
    Case c = conv1x1({2, 64, 14, 14, 128});
    Kernel k = lowerToLoops(c.graph, c.spec);
    applyDefaultSchedule(k);
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(count(g.source, "cp.async.cg.shared.global [%0], [%1], 16") >= 2);
    QVERIFY(count(g.source, "tsr_in ? 16 : 0") >= 1);
    QVERIFY(count(g.source, "cp.async.ca.shared.global [%0], [%1], 4") == 0);
    QVERIFY(count(g.source, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") >= 1);
    QCOMPARE(g.precision, std::string("tf32"));
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "pwconv.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
  }
  // On the CPU too: planes of whole 16-lane vectors (8 x 8) and planes the gemm's panels overhang (7 x 7, whose
  // register tile computes the columns past the plane from the packed panel and stores only the plane's, and
  // 13 x 13 under 1000 rows of 40 a work item) run verified on the cpu backend as gemms.
  void onTheCpuTooAsGemms() {
    for (const Conv1x1& d : {Conv1x1{2, 32, 8, 8, 24}, Conv1x1{}, Conv1x1{1, 64, 13, 13, 1000}, Conv1x1{2, 32, 7, 7, 24, {}, 4}}) {
      Case c = conv1x1(d, Machine::Cpu);
      Kernel k = lowerToLoops(c.graph, c.spec);
      QCOMPARE(k.kind, std::string("gemm"));
      QCOMPARE(cpuRunFails(c), std::string());
    }
    Case ragged = conv1x1({1, 64, 13, 13, 1000}, Machine::Cpu);
    Kernel k = lowerToLoops(ragged.graph, ragged.spec);
    TemplateParams p = defaultParams(k);
    QCOMPARE(p.at("tile_n"), int64_t(32));
    QCOMPARE(p.at("block_m"), int64_t(40));
    QCOMPARE(p.at("pack_b"), int64_t(1));
    applyDefaultSchedule(k);
    std::string cpp = codegen::generateCpp(k).source;
    QVERIFY(has(cpp, "_whole"));  // the panels inside the plane store whole vectors
  }
  // The conv's own nest stays for strides and padding (canonicalize makes an unpadded strided one a Slice and an
  // unstrided conv) and an epilogue operand that varies along w only (no view of the plane as one row).
  void theConvNestStaysElsewhere() {
    for (const Conv1x1& d : {Conv1x1{2, 32, 7, 7, 24, {{"strides", Ints{2, 2}}}},
                             Conv1x1{2, 32, 7, 7, 24, {{"pads", Ints{1, 1, 1, 1}}}}, Conv1x1{2, 32, 7, 7, 24, {}, 1, true}}) {
      Case c = conv1x1(d);
      Kernel k = lowerToLoops(c.graph, c.spec);
      QCOMPARE(k.kind, std::string("conv"));
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
    }
  }
  // A trace saved for a strided 1 x 1 conv's GPU form (the conv template: a unit test's graph has no
  // canonicalize to make it a Slice and a gemm) is the other machine's on the CPU (conv-cpu): not stale, and
  // the CPU kernel takes its defaults; the same trace replays on the GPU's kernel.
  void aTraceForTheOtherMachineIsNotStale() {
    Case gpu = conv1x1({1, 64, 14, 14, 128, {{"strides", Ints{2, 2}}}});
    execute::ScheduleSet saved;
    saved.traces[execute::ScheduleSet::keyOf(gpu.spec.nodeIds)] = traceWithParams(gpu.graph, gpu.spec, {{"block_n", 32}});
    auto graph = std::make_shared<const Graph>(gpu.graph.clone());
    execute::CompiledModel onGpu = execute::compileKernels(graph, {gpu.spec}, &saved);
    QVERIFY(onGpu.staleSchedules.empty());
    QVERIFY(onGpu.kernels[0].replayed);
    Case cpu = conv1x1({1, 64, 14, 14, 128, {{"strides", Ints{2, 2}}}}, Machine::Cpu);
    execute::CompiledModel onCpu = execute::compileKernels(graph, {cpu.spec}, &saved);
    QVERIFY2(onCpu.staleSchedules.empty(), onCpu.staleSchedules.empty() ? "" : onCpu.staleSchedules.front().c_str());
    QVERIFY(!onCpu.kernels[0].replayed);
    QCOMPARE(onCpu.kernels[0].kernel.kind, std::string("conv"));
  }
  void runsVerifiedOnTheGpu() {
    Case c = conv1x1({4, 64, 14, 14, 96});
    auto graph = std::make_shared<const Graph>(c.graph.clone());
    execute::CompiledModel m = execute::compileKernels(graph, {c.spec});
    QVERIFY2(!m.kernels[0].onHost(), m.kernels[0].placement.reason.c_str());
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the 1 x 1 conv on: " + gpu.reason).c_str());
    execute::RunReport run = runOnceWithBaseline(m, execute::BackendKind::Cuda);
    QVERIFY2(run.outputsVerified, messagesOf(run).c_str());
    QCOMPARE(run.kernels[0].precision, std::string("tf32"));
  }
};

QTEST_GUILESS_MAIN(TestConvPointwise)
#include "test_conv_pointwise.moc"
