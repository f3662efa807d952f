// The conv template's tensor-core form (mma = 1): chosen only where the tf32 policy lets a conv's f32 products
// round (or the operands are 16-bit); its IR (a box over the fused pixel loop, warps of 16 x 8 mma tiles);
// that it interprets equal to the reference on tiles overhanging the output (7 x 7, odd sizes, stride 2);
// that its CUDA is one tf32 mma.sync per tile (guards included) and compiles with NVRTC for sm_90; its
// refusals; and, on a GPU, a run verified at tf32's tolerance.
#include <QtTest>

#include "codegen/codegen.h"
#include "kernel/shared_banks.h"
#include "kernel/templates/templates.h"
#include "cpu_run.h"
#include "reference_check.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

using Ints = std::vector<int64_t>;

struct ConvDims {
  int64_t N, C, H, W, OC, K, stride;
};

// relu(conv(x, w) + b), a K x K window with "same" padding, under the tf32 policy `tf32`.
Case convCase(ConvDims d, Tf32Policy tf32 = {true, false}, DType dtype = DType::F32) {
  GraphBuilder b("conv");
  Value* x = b.input("x", {dtype, {d.N, d.C, d.H, d.W}});
  std::vector<double> wv(size_t(d.OC * d.C * d.K * d.K));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = double(int64_t(i % 11) - 5) * 0.03;
  Value* w = b.constant("w", Tensor::fromDoubles(dtype, {d.OC, d.C, d.K, d.K}, wv));
  Value* bias = b.constant("bias", filled(dtype, {d.OC}, 0.05));
  int64_t pad = d.K / 2;
  Value* y = b.op("Conv", {x, w, bias}, {{"pads", Ints{pad, pad, pad, pad}}, {"strides", Ints{d.stride, d.stride}}}, "conv");
  b.output(b.op("Relu", {y}, {}, "relu"));
  Case c{b.finish(), {"g0", "conv+epilogue", {"conv", "relu"}}};
  c.spec.tf32 = tf32;
  return c;
}

TemplateParams mmaParams(int64_t th, int64_t tw, int64_t bn, int64_t wm, int64_t wn, int64_t bk = 8) {
  return {{"mma", 1}, {"tf32", 1}, {"tile_h", th}, {"tile_w", tw}, {"block_n", bn}, {"warp_m", wm}, {"warp_n", wn}, {"block_k", bk}};
}

Kernel scheduled(const Case& c, const TemplateParams& p) {
  Kernel k = lower(c);
  TracedSchedule s(k);
  applyTemplate(s, p);
  return k;
}

// The template refuses `p` on a fresh lowering of `c`, naming `param` with a message containing `what`.
bool refuses(const Case& c, const TemplateParams& p, const std::string& param, const std::string& what) {
  Kernel k = lower(c);
  TracedSchedule s(k);
  return failsNaming([&] { applyTemplate(s, p); }, param, what);
}

}  // namespace

class TestConvMma : public QObject {
  Q_OBJECT
 private slots:
  void policyNamesParse() {
    QCOMPARE(Tf32Policy::parse("off"), Tf32Policy{});
    QCOMPARE(Tf32Policy::parse("pytorch"), (Tf32Policy{true, false}));
    QCOMPARE(Tf32Policy::parse("all").name(), std::string("all"));
    QCOMPARE(Tf32Policy::parse("matmul").name(), std::string("matmul"));
    try {
      Tf32Policy::parse("fast");
      QFAIL("an unknown policy was accepted");
    } catch (const Error& e) {
      QVERIFY(has(e.what(), "tf32 policy 'fast'"));
    }
  }
  // ResNet's 3 x 3 conv at 56 x 56 over 64 channels: the tensor cores only when the policy allows tf32 for
  // convolutions (exact f32 otherwise), with 8 x 14 pixel tiles (no overhang) and the kernel says so.
  void defaultsFollowThePolicy() {
    ConvDims resnet{32, 64, 56, 56, 64, 3, 1};
    Kernel exact = lower(convCase(resnet, {}));
    QVERIFY(!exact.allowTf32);
    QCOMPARE(defaultParams(exact).at("mma"), int64_t(0));
    QCOMPARE(lower(convCase(resnet, {false, true})).allowTf32, false);  // matmuls only
    Kernel k = lower(convCase(resnet));
    QVERIFY(k.allowTf32);
    QVERIFY(has(printKernel(k), "precision f32 products may round to tf32"));
    TemplateParams d = defaultParams(k);
    QCOMPARE(d.at("mma"), int64_t(1));
    QCOMPARE(d.at("tf32"), int64_t(1));  // rounded: truncation biases whole models
    QCOMPARE(d.at("tile_h") * d.at("tile_w"), int64_t(112));
    QCOMPARE(d.at("warp_m"), int64_t(112));
  }
  // ResNet's layer4 at batch 1 (512 channels over 7 x 7): 32 tiles of 16 channels for 132 SMs, so the
  // defaults split the k loop until the SMs have blocks enough; 14 x 14 at batch 32 has them unsplit.
  void splitKFillsTheSms() {
    TemplateParams d = defaultParams(lower(convCase({1, 512, 7, 7, 512, 3, 1})));
    QCOMPARE(d.at("mma"), int64_t(1));
    QCOMPARE(d.at("block_n"), int64_t(16));
    QCOMPARE(d.at("split_k"), int64_t(16));  // 32 x 16 = 512 blocks, 3 an SM at least (8 parts: 256)
    // The CUDA-core form (tf32 off) splits too: 128 blocks of 2 x 7 pixels, 16 parts.
    TemplateParams cores = defaultParams(lower(convCase({1, 512, 7, 7, 512, 3, 1}, {})));
    QCOMPARE(cores.at("mma"), int64_t(0));
    QCOMPARE(cores.at("split_k"), int64_t(16));
    QCOMPARE(defaultParams(lower(convCase({32, 256, 14, 14, 256, 3, 1}))).at("split_k"), int64_t(1));
  }
  // A stride-2 conv's blocks take 128 channels in one-step (8-channel) stages, its 112-pixel tile kept by the
  // larger budget, and count 128 blocks as filling the SMs; at batch 1 they narrow until the SMs have blocks.
  void stridedConvsTake128ChannelBlocks() {
    TemplateParams l2 = defaultParams(lower(convCase({32, 128, 56, 56, 128, 3, 2})));
    QCOMPARE(l2.at("block_n"), int64_t(128));
    QCOMPARE(l2.at("block_k"), int64_t(8));
    QCOMPARE(l2.at("stages"), int64_t(2));
    QCOMPARE(l2.at("tile_h") * l2.at("tile_w"), int64_t(112));
    TemplateParams l4 = defaultParams(lower(convCase({32, 512, 14, 14, 512, 3, 2})));
    QCOMPARE(l4.at("block_n"), int64_t(128));  // 32 images x 4 = 128 blocks
    QCOMPARE(l4.at("split_k"), int64_t(1));
    QVERIFY(defaultParams(lower(convCase({1, 128, 56, 56, 128, 3, 2}))).at("block_n") < 128);
    QCOMPARE(defaultParams(lower(convCase({32, 128, 28, 28, 128, 3, 1}))).at("block_n"), int64_t(64));
    QCOMPARE(l2.at("halo_runs"), int64_t(0));  // 28 wide: by phase
    // 8-wide tiles fill the halo in 16-byte runs (unpadded, not by phase), also split at batch 1 and in bf16
    // (8 columns a run); alignedHalosAreFilledByRuns checks such fills against the reference.
    TemplateParams l3 = defaultParams(lower(convCase({32, 256, 28, 28, 256, 3, 2})));
    QCOMPARE(l3.at("tile_w"), int64_t(8));
    QCOMPARE(l3.at("halo_runs"), int64_t(1));
    QCOMPARE(l3.at("deinterleave") + l3.at("pad") + l3.at("pad_rows"), int64_t(0));
    TemplateParams batch1 = defaultParams(lower(convCase({1, 256, 28, 28, 64, 3, 2})));
    QVERIFY(batch1.at("halo_runs") == 1 && batch1.at("split_k") > 1);
    QCOMPARE(defaultParams(lower(convCase({4, 32, 28, 28, 128, 3, 2}, {}, DType::BF16))).at("halo_runs"), int64_t(1));
  }
  // Split-K in both implicit-GEMM forms: two phases (the parts' sums to a workspace, a grid barrier, the
  // epilogue on their sum), equal to the reference, replayed to the same IR; the CUDA is one launch a phase and
  // compiles with NVRTC.
  void splitKAgreesWithTheReference() {
    Case c = convCase({1, 64, 7, 7, 32, 3, 1});
    TemplateParams mma = mmaParams(7, 7, 16, 49, 8, 16);
    mma["split_k"] = 4;
    TemplateParams cores = {{"gemm", 1}, {"mma", 0}, {"tile_h", 4}, {"tile_w", 7}, {"block_n", 16}, {"block_k", 8},
                            {"thread_m", 2}, {"thread_n", 2}, {"split_k", 2}};
    for (const TemplateParams& p : {mma, cores}) {
      std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
      QVERIFY(has(t, "sync grid"));
      QVERIFY(has(t, "tmp acc0_parts: global f32[" + std::to_string(p.at("split_k")) + ", "));
      Kernel k = scheduled(c, p);
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
      codegen::GeneratedKernel g = codegen::generateCuda(k);
      QCOMPARE(g.phases, 2);
      cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "conv.cu", {}, "sm_90");
      QVERIFY2(r.ok, r.error.c_str());
    }
  }
  // The pixel loop is fused before the operands are staged: the input's box is still found (its rows and
  // columns from the fused index's quotient and remainder), 8 channels x (8 + 2) x (14 + 2) floats.
  void boxOverTheFusedPixels() {
    Case c = convCase({2, 16, 16, 28, 16, 3, 1});
    std::string t = roundTrip(c, [](TracedSchedule& s) { applyTemplate(s, mmaParams(8, 14, 16, 112, 16)); });
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 8, 10, 16]  # read cache of in0, zero outside in0"));
    QVERIFY(has(t, "bind(mma.row) {"));
    QVERIFY(has(t, "for kh in 0..3 unrolled reduce {"));
  }
  // Overhanging tiles: a 7 x 7 output as one 49-pixel tile (its fourth mma tile one row used), a 10 x 10
  // output in 8 x 8 tiles, a stride-2 conv, a strided 1 x 1 conv (an unstrided one is lowered as a gemm on the
  // GPU: test_conv_pointwise): each interprets equal to the reference.
  void overhangingTilesAgreeWithTheReference() {
    struct Point {
      ConvDims d;
      TemplateParams p;
    };
    const std::vector<Point> points = {
        {{2, 16, 7, 7, 16, 3, 1}, mmaParams(7, 7, 16, 49, 8)},
        {{1, 8, 10, 10, 16, 3, 1}, mmaParams(8, 8, 16, 32, 16)},
        {{1, 16, 13, 13, 24, 3, 2}, mmaParams(4, 7, 24, 28, 8, 16)},
        {{2, 32, 9, 9, 16, 1, 2}, mmaParams(4, 4, 16, 16, 16, 16)},
    };
    for (const Point& pt : points) {
      Case c = convCase(pt.d);
      Kernel k = scheduled(c, pt.p);
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
    }
  }
  // The generated CUDA: every tile one m16n8k8 tf32 mma.sync, guarded tiles too (7 x 7: 4 m-tiles, 2 n-tiles,
  // 9 taps, 2 k steps), fragments rounded with cvt.rna, the kernel's precision tf32; NVRTC compiles it.
  void cudaIsOneMmaPerTile() {
    Case c = convCase({2, 16, 7, 7, 16, 3, 1});
    codegen::GeneratedKernel g = codegen::generateCuda(scheduled(c, mmaParams(7, 7, 16, 49, 8)));
    QCOMPARE(count(g.source, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), size_t(1));  // in the unrolled nest
    QVERIFY(has(g.source, "cvt.rna.tf32.f32"));
    QVERIFY(has(g.source, "tsr_fa[4][4], tsr_fb[1][2]"));
    QCOMPARE(g.precision, std::string("tf32"));
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "conv.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    codegen::GeneratedKernel cpp = codegen::generateCpp(scheduled(c, mmaParams(7, 7, 16, 49, 8)));
    QVERIFY(has(cpp.source, "tf32 = 1 is a tensor-core format, not used on the CPU"));
  }
  // The weights' tile is whole rows of block_k channels x 9 taps: each thread copies 16-byte runs, one
  // cp.async each (the flattened fill index's f / 3 / 3 % 8 · 9 + f / 3 % 3 · 3 + f % 3 proven to be f % 72);
  // the input's halo, zero-filled at the padding, stays one element a copy.
  void weightTilesCopySixteenBytes() {
    Case c = convCase({2, 32, 14, 14, 64, 3, 1});
    TemplateParams p = mmaParams(14, 8, 64, 112, 16);
    p["stages"] = 2;
    p["split_k"] = 1;  // the defaults split these 4 tiles' k loop into parts of one step, with nothing to pipeline
    codegen::GeneratedKernel g = codegen::generateCuda(scheduled(c, p));
    QCOMPARE(count(g.source, "cp.async of 16 bytes"), size_t(2));  // the prologue's fill and the loop's
    QVERIFY(has(g.source, "% 72)"));
    QVERIFY(has(g.source, "cp.async.ca.shared.global [%0], [%1], 4, %2;"));  // the halo
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "conv.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
  }
  // The bank model (kernel/shared_banks.h): ResNet's 14 x 8 tiles read a 16 x 10 halo, whose channels are 160
  // words apart, so a tf32 fragment load's 4 channels share banks (4 wavefronts), whatever each row's padding;
  // 4 rows more a plane (200 words) take 1. A warp reading one word is a broadcast; 32 words 32 apart, 32.
  void bankModelCountsWavefronts() {
    HaloReads l3{14, 8, 16, 10, 3, 3, 1, 1, 1, 1, 4};
    QCOMPARE(haloFragmentWavefronts(l3, 0, 0), 4.0);
    for (int64_t pad = 1; pad < 8; ++pad) QVERIFY(haloFragmentWavefronts(l3, pad, 0) >= 2.0);
    QCOMPARE(haloFragmentWavefronts(l3, 0, 4), 1.0);
    QCOMPARE(sharedWavefronts(std::vector<int64_t>(32, 64)), int64_t(1));
    std::vector<int64_t> column;
    for (int64_t lane = 0; lane < 32; ++lane) column.push_back(lane * 128);
    QCOMPARE(sharedWavefronts(column), int64_t(32));
  }
  // The defaults pad ResNet's 56² and 14² halos by planes (the model's least conflicted padding), the trace
  // replays to the same IR, and a padded tile interprets equal to the reference and compiles for sm_90.
  void defaultsPadTheHaloByTheBankModel() {
    for (ConvDims d : {ConvDims{32, 64, 56, 56, 64, 3, 1}, ConvDims{32, 256, 14, 14, 256, 3, 1}}) {
      TemplateParams p = defaultParams(lower(convCase(d)));
      QCOMPARE(p.at("tile_h") * 100 + p.at("tile_w"), int64_t(1408));
      QCOMPARE(p.at("pad"), int64_t(0));
      QCOMPARE(p.at("pad_rows"), int64_t(4));
      // Warps of 32 channels where the tiles give 3 blocks an SM (896 blocks over 56²; 256 over 14² keep 16).
      QCOMPARE(p.at("warp_n"), int64_t(d.H == 56 ? 32 : 16));
      // 16 channels a k step where the grid leaves the SMs under 3 blocks (14²) and warps hold 112 pixels.
      QCOMPARE(p.at("block_k"), int64_t(d.H == 56 ? 8 : 16));
    }
    QCOMPARE(defaultParams(lower(convCase({32, 512, 7, 7, 512, 3, 1}))).at("block_k"), int64_t(8));  // warps of 49
    // A strided conv keeps warps of 16 channels (its wide halo filled by twice the threads), 448 blocks or not.
    QCOMPARE(defaultParams(lower(convCase({32, 128, 56, 56, 128, 3, 2}))).at("warp_n"), int64_t(16));
    Case c = convCase({1, 8, 10, 10, 16, 3, 1});
    TemplateParams p = mmaParams(8, 8, 16, 32, 16);
    p["pad"] = 1;
    p["pad_rows"] = 3;
    std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 8, 13, 11]  # read cache of in0, rows padded by 1, 3 rows of padding a plane"));
    Kernel k = scheduled(c, p);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(codegen::generateCuda(k).source, "conv.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
  }
  // An image's 3 channels make no 8-deep channel step: the defaults put the mma's depth along a 7-wide window's
  // columns (tap_depth: one masked step of 8), all the channels in one k step; tap_depth also takes a 3-wide
  // window (a step of 8 with 3 used). ResNet's stem (7 x 7, stride 2) and a 3 x 3 one interpret equal to the
  // reference on overhanging tiles, and their CUDA masks the fragments past the window (one tf32 mma a tile)
  // and compiles for sm_90.
  void fewChannelsTakeTheDepthAlongTheWindow() {
    TemplateParams stem = defaultParams(lower(convCase({32, 3, 224, 224, 64, 7, 2})));
    QCOMPARE(stem.at("mma"), int64_t(1));
    QCOMPARE(stem.at("tap_depth"), int64_t(1));
    QCOMPARE(stem.at("block_k"), int64_t(3));  // the three channels in one step, unpipelined
    QCOMPARE(stem.at("stages"), int64_t(1));
    // MobileNet's 3 x 3 stem would use 3 of each 8 products: the CUDA cores (measured faster).
    QCOMPARE(defaultParams(lower(convCase({32, 3, 224, 224, 32, 3, 2}))).at("mma"), int64_t(0));
    QCOMPARE(defaultParams(lower(convCase({32, 64, 56, 56, 64, 3, 1}))).at("tap_depth"), int64_t(0));
    for (ConvDims d : {ConvDims{2, 3, 20, 20, 16, 7, 2}, ConvDims{1, 3, 15, 15, 16, 3, 1}}) {
      Case c = convCase(d);
      TemplateParams p = mmaParams(4, 8, 16, 32, 8, d.K == 7 ? 1 : 3);
      p["tap_depth"] = 1;
      std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
      Kernel k = scheduled(c, p);
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
      codegen::GeneratedKernel g = codegen::generateCuda(k);
      QCOMPARE(count(g.source, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), size_t(1));
      cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "conv.cu", {}, "sm_90");
      QVERIFY2(r.ok, r.error.c_str());
      // As the defaults run a stem: every channel in one unpipelined k step.
      TemplateParams whole = p;
      whole["block_k"] = d.C;
      whole["stages"] = 1;
      QCOMPARE(agreesWithReference(c.graph, scheduled(c, whole)), std::string());
    }
  }
  // A stride-2 conv's lanes read every other column: 8 pixels of a fragment row span 16 words, so its 4
  // channels cannot all take distinct banks (2 wavefronts a load at any padding); its columns stored by phase
  // (deinterleave) read 8 consecutive words, and a padding gives 1. The defaults take it for ResNet-50's
  // stride-2 convs from 56² and 28²; a phased, padded tile interprets equal to the reference (odd sizes: a
  // phase one column longer), replays, and compiles for sm_90; an unstrided conv refuses it.
  void stridedHalosAreStoredByPhase() {
    HaloReads l2s{4, 28, 9, 57, 3, 3, 2, 2, 1, 1, 4};
    double best = 99;
    for (int64_t pad = 0; pad < 8; ++pad)
      for (int64_t rows = 0; rows < 8; ++rows) best = std::min(best, haloFragmentWavefronts(l2s, pad, rows));
    QVERIFY(best >= 2.0);
    l2s.phases = 2;
    best = 99;
    for (int64_t pad = 0; pad < 8; ++pad)
      for (int64_t rows = 0; rows < 8; ++rows) best = std::min(best, haloFragmentWavefronts(l2s, pad, rows));
    QCOMPARE(best, 1.0);
    // ResNet-50's from 56² (the one from 28² takes 16-byte runs instead: stridedConvsTake128ChannelBlocks).
    QCOMPARE(defaultParams(lower(convCase({32, 128, 56, 56, 128, 3, 2}))).at("deinterleave"), int64_t(1));
    Case c = convCase({1, 16, 13, 13, 24, 3, 2});
    TemplateParams p = mmaParams(4, 7, 24, 28, 8, 16);
    p["deinterleave"] = 1;
    p["pad"] = 1;
    p["pad_rows"] = 2;
    std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
    // 15 columns as two phases of 8, then the row's pad: each stored column at (x % 2) * 8 + x / 2.
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 16, 13, 17]  # read cache of in0, rows padded by 1, 2 rows of padding a plane"));
    QVERIFY(has(t, "% 15 % 2 * 8 + "));
    Kernel k = scheduled(c, p);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(codegen::generateCuda(k).source, "conv.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    // The halo filled with its columns on the lanes (halo_rows), phased or not: the same meaning.
    for (int64_t phased : {0, 1}) {
      TemplateParams rows = p;
      rows["halo_rows"] = 1;
      rows["deinterleave"] = phased;
      Kernel kr = scheduled(c, rows);
      QCOMPARE(agreesWithReference(c.graph, kr), std::string());
      QVERIFY(has(printKernel(kr), "bind(threadIdx.x)"));
      cuda::NvrtcResult rr = cuda::NvrtcCompiler().compile(codegen::generateCuda(kr).source, "conv.cu", {}, "sm_90");
      QVERIFY2(rr.ok, rr.error.c_str());
    }
    TemplateParams unstrided = mmaParams(2, 14, 16, 28, 8, 16);
    unstrided["deinterleave"] = 1;
    QVERIFY(refuses(convCase({1, 16, 14, 14, 16, 3, 1}), unstrided, "deinterleave", "strided along its columns"));
  }
  // halo_runs: the halo's box starts at a multiple of 4 columns (cache_read align; a 2 x 8 tile at stride 2
  // over 16 columns starts at 16·p - 1: 3 earlier) and spans whole runs, so the fill copies 16 bytes a lane
  // group, zero-filled where a run lies in the padding; it interprets equal to the reference, replays, and
  // compiles for sm_90. A box whose start is no multiple of 4 (7-wide tiles: 14·p - 1) is refused naming align;
  // so is halo_runs with deinterleave.
  void alignedHalosAreFilledByRuns() {
    Case c = convCase({1, 16, 16, 16, 16, 3, 2});
    TemplateParams p = mmaParams(2, 8, 16, 16, 8, 8);
    p["halo_runs"] = 1;
    std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 8, 5, 20]  # read cache of in0, columns aligned to 4"));
    Kernel k = scheduled(c, p);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QCOMPARE(count(g.source, "cp.async.ca.shared.global [%0], [%1], 4"), size_t(0));
    QVERIFY(count(g.source, "cp.async.cg.shared.global [%0], [%1], 16, %2") >= 1);
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "conv.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    // Two tiles across (16·(p % 2) - 1 over the fused tile loop) align too.
    Case two = convCase({1, 16, 32, 32, 16, 3, 2});
    Kernel k2 = scheduled(two, p);
    QCOMPARE(agreesWithReference(two.graph, k2), std::string());
    QVERIFY(has(printKernel(k2), "columns aligned to 4"));
    QCOMPARE(count(codegen::generateCuda(k2).source, "cp.async.ca.shared.global [%0], [%1], 4"), size_t(0));
    TemplateParams p7 = mmaParams(7, 7, 16, 49, 8, 8);
    p7["halo_runs"] = 1;
    QVERIFY(refuses(convCase({1, 16, 28, 28, 16, 3, 2}), p7, "block_k", "not a multiple of 4 plus a constant"));
    TemplateParams both = p;
    both["deinterleave"] = 1;
    QVERIFY(refuses(c, both, "halo_runs", "by phase"));
    // As the defaults take them at small batches: split-K, and bf16 operands (runs of 8 columns).
    TemplateParams split = p;
    split["split_k"] = 2;
    QCOMPARE(agreesWithReference(c.graph, scheduled(c, split)), std::string());
    Case bf16 = convCase({1, 32, 16, 16, 16, 3, 2}, {}, DType::BF16);
    TemplateParams runs16 = mmaParams(2, 8, 16, 16, 8, 16);
    runs16["tf32"] = 0;
    runs16["halo_runs"] = 1;
    runs16["split_k"] = 2;
    Kernel k16 = scheduled(bf16, runs16);
    QVERIFY(has(printKernel(k16), "columns aligned to 8"));
    QCOMPARE(agreesWithReference(bf16.graph, k16), std::string());
    cuda::NvrtcResult r16 = cuda::NvrtcCompiler().compile(codegen::generateCuda(k16).source, "conv.cu", {}, "sm_90");
    QVERIFY2(r16.ok, r16.error.c_str());
  }
  void refusalsNameTheParameter() {
    Case c = convCase({2, 24, 14, 14, 32, 3, 1});
    QVERIFY(refuses(c, mmaParams(8, 14, 32, 48, 16), "warp_m", "dividing the 112 pixels"));
    QVERIFY(refuses(c, mmaParams(8, 14, 32, 112, 12), "warp_n", "multiple of 8"));
    QVERIFY(refuses(c, mmaParams(8, 14, 32, 112, 16, 16), "block_k", "dividing the 24 input channels"));
    TemplateParams split = mmaParams(8, 14, 32, 112, 16);
    split["split_k"] = 2;  // 24 channels in steps of 8: 3 steps
    QVERIFY(refuses(c, split, "split_k", "2 parts do not divide the 3 k steps"));
    QVERIFY(refuses(c, {{"gemm", 0}, {"mma", 0}, {"split_k", 2}}, "split_k", "needs the implicit-GEMM forms"));
    TemplateParams rounding = mmaParams(8, 14, 32, 112, 16);
    rounding["tf32"] = 4;  // no such form of rounding
    QVERIFY(refuses(c, rounding, "tf32", "tf32 = 4: 0 (off), 1 (rounded), 2 (truncated) or 3"));
    Case exact = convCase({2, 24, 14, 14, 32, 3, 1}, {});
    TemplateParams bf16 = mmaParams(8, 14, 32, 112, 16);
    bf16["tf32"] = 0;
    QVERIFY(refuses(exact, bf16, "mma", "f16 or bf16 operands"));
  }
  // The policy travels from the driver's specs to the run's unfused baseline; on a GPU the tf32 kernels run
  // verified at tf32's tolerance.
  void runsVerifiedOnTheGpu() {
    Case c = convCase({4, 32, 14, 14, 32, 3, 1});
    auto graph = std::make_shared<const Graph>(c.graph.clone());
    execute::ScheduleSet saved;
    Trace t;
    roundTrip(c, [](TracedSchedule& s) { applyTemplate(s, mmaParams(8, 14, 32, 112, 16)); }, &t);
    saved.traces[execute::ScheduleSet::keyOf(c.spec.nodeIds)] = t;
    execute::CompiledModel m = execute::compileKernels(graph, {c.spec}, &saved);
    QVERIFY2(!m.kernels[0].onHost() && m.kernels[0].replayed, m.kernels[0].placement.reason.c_str());
    QVERIFY(m.kernels[0].kernel.allowTf32);
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the tf32 conv on: " + gpu.reason).c_str());
    execute::RunReport run = runOnceWithBaseline(m, execute::BackendKind::Cuda);
    QVERIFY2(run.outputsVerified, messagesOf(run).c_str());
    QCOMPARE(run.kernels[0].precision, std::string("tf32"));
  }
  // Split-K by default at batch 1 over 7 x 7 (two launches), verified on a GPU.
  void splitKRunsVerifiedOnTheGpu() {
    Case c = convCase({1, 512, 7, 7, 512, 3, 1});
    auto graph = std::make_shared<const Graph>(c.graph.clone());
    execute::CompiledModel m = execute::compileKernels(graph, {c.spec});
    QVERIFY(has(printKernel(m.kernels[0].kernel), "sync grid"));
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the split-K conv on: " + gpu.reason).c_str());
    execute::RunReport run = runOnceWithBaseline(m, execute::BackendKind::Cuda);
    QVERIFY2(run.outputsVerified, messagesOf(run).c_str());
  }
};

QTEST_GUILESS_MAIN(TestConvMma)
#include "test_conv_mma.moc"
