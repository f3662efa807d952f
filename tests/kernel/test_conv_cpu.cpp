// The conv template's CPU form (conv-cpu: a 2-D NCHW conv, grouped or not, on Machine::Cpu) and the vector path's
// narrower types: the cpu machine gets the form where it applies (NHWC inputs packed columns last; not the GPU);
// every point of a small space with edge tiles schedules to a kernel that means the conv or is refused; a row
// 56 wide in tiles of 8 columns accumulates in 8-lane vectors (tsr_vf8), one 32 wide in the host's; the default
// register tile fits the host's vector registers; tiles overhanging an odd image compute the overhang and guard
// only their stores; and generated, compiled and run on the cpu backend the kernels agree with the reference,
// strided, 1 x 1 and with guards included.
#include <QtTest>

#include <algorithm>

#include "codegen/codegen.h"
#include "kernel/host.h"
#include "kernel/templates/templates.h"
#include "runtime/execute/executor.h"
#include "cpu_run.h"
#include "reference_check.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

using Ints = std::vector<int64_t>;

struct Shape2d {
  int64_t N = 1, C = 3, OC = 8, H = 8, W = 8, k = 3, stride = 1, groups = 1;
  bool nhwcInput = false;  // x given NHWC and transposed to NCHW inside the group
};

// relu(conv(x, w) + bias) with "same" padding for a k x k window.
Case convOn(Machine machine, Shape2d d) {
  GraphBuilder b("cv");
  Value* x = b.input("x", {DType::F32, d.nhwcInput ? Shape{d.N, d.H, d.W, d.C} : Shape{d.N, d.C, d.H, d.W}});
  std::vector<double> wv(size_t(d.OC * d.C / d.groups * d.k * d.k));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = double(int64_t(i % 7) - 3) * 0.1;
  Value* w = b.constant("w", Tensor::fromDoubles(DType::F32, {d.OC, d.C / d.groups, d.k, d.k}, wv));
  Value* bias = b.constant("bias", filled(DType::F32, {d.OC}, 0.05));
  std::vector<std::string> ids;
  Value* in = x;
  if (d.nhwcInput) {
    in = b.op("Transpose", {x}, {{"perm", Ints{0, 3, 1, 2}}}, "to_nchw");
    ids.push_back("to_nchw");
  }
  const int64_t pad = d.k / 2;
  Value* y = b.op("Conv", {in, w, bias},
                  {{"pads", Ints{pad, pad, pad, pad}}, {"strides", Ints{d.stride, d.stride}}, {"group", d.groups}}, "conv");
  b.output(b.op("Relu", {y}, {}, "relu"));
  ids.insert(ids.end(), {"conv", "relu"});
  return {b.finish(), {"g0", "conv+epilogue", ids, {}, machine}};
}

Case cpuConv(Shape2d d = {}) { return convOn(Machine::Cpu, d); }

// A 3 x 3 stride-2 pool with a pixel of padding (max, or average without the padding in the count).
Case cpuPool(const std::string& op, int64_t C, int64_t H, int64_t W) {
  GraphBuilder b("pool");
  Value* x = b.input("x", {DType::F32, {1, C, H, W}});
  b.output(b.op(op, {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}, "pool"));
  return {b.finish(), {"g0", "pool", {"pool"}, {}, Machine::Cpu}};
}

std::string cpuRun(const Case& c, const TemplateParams& params = {}) {
  execute::ScheduleSet saved;
  saved.traces[execute::ScheduleSet::keyOf(c.spec.nodeIds)] = traceWithParams(c.graph, c.spec, params);
  return cpuRunFails(c, &saved);
}

std::string generatedCpp(const Case& c, const TemplateParams& params = {}) {
  Kernel k = lower(c);
  TracedSchedule s(k);
  applyTemplate(s, params);
  return codegen::generateCpp(k).body;
}

}  // namespace

class TestConvCpu : public QObject {
  Q_OBJECT
 private slots:
  void theCpuMachineGetsTheCpuForm() {
    QCOMPARE(templateName(lower(convOn(Machine::Gpu, {}))), std::string("conv"));
    Kernel grouped = lower(cpuConv({.C = 4, .OC = 8, .groups = 2}));  // split into groups of 4 channels first
    QCOMPARE(templateName(grouped), std::string("conv-cpu"));
    applyDefaultSchedule(grouped);
    QCOMPARE(agreesWithReference(cpuConv({.C = 4, .OC = 8, .groups = 2}).graph, grouped), std::string());
    Kernel k = lower(cpuConv());
    QCOMPARE(templateName(k), std::string("conv-cpu"));
    applyDefaultSchedule(k);
    std::string t = printKernel(k);
    QVERIFY2(has(t, " parallel {"), t.c_str());
    QVERIFY2(has(t, " vectorized {"), t.c_str());
    QCOMPARE(agreesWithReference(cpuConv().graph, k), std::string());
  }

  // An input read NHWC (its rows along the channels): the packed patch is stored columns last (permute), so
  // the lanes still load consecutive columns as vectors.
  void nhwcInputIsPackedColumnsLast() {
    Shape2d d;
    d.nhwcInput = true, d.C = 8, d.OC = 8, d.H = 6, d.W = 32;
    Kernel k = lower(cpuConv(d));
    QCOMPARE(templateName(k), std::string("conv-cpu"));
    QVERIFY(defaultScheduleUses(k, "permute"));
    QCOMPARE(agreesWithReference(cpuConv(d).graph, k), std::string());
    std::string cpp = generatedCpp(cpuConv(d));
    QVERIFY2(has(cpp, "tsr_vload(&in0_shared["), cpp.c_str());
    QCOMPARE(cpuRun(cpuConv(d)), std::string());
  }

  // The register tile keeps the FMA units busy: with AVX-512, 8 channels x 2 rows x 16 columns (16 accumulators;
  // a strided conv 4 x 4 rows); on narrower hosts 2 rows of 8 columns or 1 row of 16, whichever leaves less of
  // the image to overhang (16 preferred by 10%).
  void defaultsPickTheTileThatWastesLeast() {
    Shape2d d;
    d.C = 32, d.OC = 64, d.H = 56, d.W = 56;
    TemplateParams p = defaultParams(lower(cpuConv(d)));
    QVERIFY(p.at("block_m") % p.at("tile_m") == 0 && 64 % p.at("block_m") == 0);
    if (hostVectorBytes() >= 64) {
      for (int64_t w : {56, 28, 13}) {  // 7 columns take lanes along the channels (narrowImages... below)
        d.H = d.W = w;
        p = defaultParams(lower(cpuConv(d)));
        QCOMPARE(p.at("tile_m") * p.at("tile_h") * p.at("tile_w"), int64_t(8 * 2 * 16));
      }
      d.H = d.W = 28, d.stride = 2;  // 14 output columns
      p = defaultParams(lower(cpuConv(d)));
      QCOMPARE(p.at("tile_m"), int64_t(4));
      QCOMPARE(p.at("tile_h"), int64_t(4));
      return;
    }
    QCOMPARE(p.at("tile_w"), int64_t(8));  // 56 = 7 x 8; 16 would overhang to 64
    QCOMPARE(p.at("tile_h"), int64_t(2));
    for (int64_t w : {28, 32, 13}) {  // 28 and 13 overhang 16-lane rows by 4 and 3 columns
      d.H = d.W = w;
      p = defaultParams(lower(cpuConv(d)));
      QCOMPARE(p.at("tile_w"), int64_t(16));
      QCOMPARE(p.at("tile_h"), int64_t(1));
    }
    d.H = d.W = 7;  // 8 columns overhang by 1, 16 by 9
    QCOMPARE(defaultParams(lower(cpuConv(d))).at("tile_w"), int64_t(8));
  }

  // A 13 x 13 image in 16-column tiles: the register tile computes the 3 columns past the edge from the packed
  // patch and throws them away; its accumulation is vectorized, and only the stores are guarded.
  void overhangingColumnsAreComputedNotGuarded() {
    Shape2d d;
    d.C = 6, d.OC = 8, d.H = 13, d.W = 13;
    Kernel k = lower(cpuConv(d));
    QVERIFY(defaultScheduleUses(k, "overcompute"));
    std::string t = printKernel(k);
    QVERIFY2(has(t, " vectorized {"), t.c_str());
    QCOMPARE(agreesWithReference(cpuConv(d).graph, k), std::string());
    std::string cpp = generatedCpp(cpuConv(d));
    std::string reduction = cpp.substr(cpp.find("for (int64_t ic = 0;"));
    reduction = reduction.substr(0, reduction.find("_epi = 0;"));
    QVERIFY2(!has(reduction, "if ("), reduction.c_str());  // the accumulation runs whole
    QVERIFY2(has(cpp.substr(cpp.find("_epi = 0;")), "if ("), cpp.c_str());  // the stores keep their guard
    QVERIFY2(has(cpp, "for (int64_t ow_i_epi_whole = 0;"), cpp.c_str());  // whole tiles store unguarded
    QCOMPARE(cpuRun(cpuConv(d)), std::string());
    d.H = d.W = 7;  // rows overhang too (2 rows of 8 columns over 7 x 7)
    QCOMPARE(cpuRun(cpuConv(d)), std::string());
  }

  void theRegisterTileIsDeclaredAsVectors() {
    Shape2d d;
    d.W = 56;
    std::string narrow = generatedCpp(cpuConv(d), {{"tile_m", 4}, {"tile_h", 2}, {"tile_w", 8}});
    QVERIFY2(has(narrow, "tsr_vf8 acc0["), narrow.c_str());
    QVERIFY2(has(narrow, "tsr_vload8(&in0_shared["), narrow.c_str());
    QVERIFY2(has(narrow, "+= TSR_VF8) {"), narrow.c_str());
    d.W = 32;
    std::string host = generatedCpp(cpuConv(d));
    QVERIFY2(has(host, "tsr_vf acc0["), host.c_str());
    QVERIFY2(has(host, "+= TSR_VF) {"), host.c_str());
  }

  // The default tile applies to convs of many channels too: the packed patch spans every input channel, so a
  // larger tile's could pass the local arrays' limit (ResNet's stride-2 convs of 256 and 512 channels did, and ran
  // without the CPU form at 3 GFLOP/s).
  void defaultsFitManyChannels() {
    for (Shape2d d : {Shape2d{.C = 256, .OC = 256, .H = 28, .W = 28, .stride = 2}, Shape2d{.C = 512, .OC = 512, .H = 14, .W = 14, .stride = 2},
                      Shape2d{.C = 1024, .OC = 64, .H = 14, .W = 14}}) {
      Kernel k = lower(cpuConv(d));
      try {
        applyDefaultSchedule(k);
      } catch (const Error& e) {
        QFAIL(e.what());
      }
    }
  }

  // A stride-2 conv's packed patch is stored by phase, so its lanes load consecutive columns as vectors.
  void stridedColumnsLoadAsVectors() {
    Shape2d d;
    d.C = 3, d.OC = 8, d.H = d.W = 35, d.stride = 2;  // 18 output columns
    Kernel k = lower(cpuConv(d));
    QVERIFY(defaultScheduleUses(k, "deinterleave"));
    QCOMPARE(agreesWithReference(cpuConv(d).graph, k), std::string());
    std::string cpp = generatedCpp(cpuConv(d));
    QVERIFY2(has(cpp, "tsr_vload(&in0_shared[") || has(cpp, "tsr_vload8(&in0_shared["), cpp.c_str());
    QCOMPARE(cpuRun(cpuConv(d)), std::string());
  }

  // A padded conv's patch is copied a vector at a time, the lanes the padding or the row's last piece drop
  // masked (tsr_vloadm from the input, tsr_vstorem into the patch); run at widths where the padding cuts a
  // vector on both sides (13, 28, 40) and at a stride.
  void paddedFillCopiesMaskedVectors() {
    for (int64_t w : {13, 28, 40}) {
      Shape2d d;
      d.C = 4, d.OC = 8, d.H = 5, d.W = w;
      std::string cpp = generatedCpp(cpuConv(d));
      QVERIFY2(has(cpp, "tsr_vloadm(&in0["), cpp.c_str());
      QVERIFY2(has(cpp, "tsr_vstorem(&in0_shared["), cpp.c_str());
      QCOMPARE(cpuRun(cpuConv(d)), std::string());
      d.stride = 2;
      QCOMPARE(cpuRun(cpuConv(d)), std::string());
    }
  }

  // A depthwise conv's channels share no loads: one channel a register tile, 4 rows (their taps share input
  // rows), the width in one tile of 8, 16 or 32 columns.
  void depthwiseTakesOneChannelATile() {
    Shape2d d;
    d.C = d.OC = d.groups = 16, d.H = 9, d.W = 28;
    TemplateParams p = defaultParams(lower(cpuConv(d)));
    QCOMPARE(p.at("tile_m"), int64_t(1));
    QCOMPARE(p.at("tile_h"), int64_t(4));
    QCOMPARE(p.at("tile_w"), int64_t(32));
    QCOMPARE(cpuRun(cpuConv(d)), std::string());
    d.H = d.W = 7;
    QCOMPARE(defaultParams(lower(cpuConv(d))).at("tile_w"), int64_t(8));
    QCOMPARE(cpuRun(cpuConv(d)), std::string());
    Shape2d one;  // one input channel, not grouped: its output channels share every load
    one.C = 1, one.OC = 8, one.H = one.W = 16;
    QVERIFY(defaultParams(lower(cpuConv(one))).at("tile_m") > 1);
  }

  // A pool's or a depthwise conv's patch at stride 2 stays in the input's order (its fill whole vectors) and
  // the taps load every other element; a pool's padding test is a lane mask blending the window's values.
  void strideTwoWindowsLoadEveryOtherElement() {
    for (const char* op : {"MaxPool", "AveragePool"})
      for (int64_t w : {23, 40, 112}) {
        Case c = cpuPool(op, 4, 9, w);
        std::string cpp = generatedCpp(c);
        QVERIFY2(has(cpp, "tsr_vload_even(&in0_shared[") || has(cpp, "tsr_vload_even8(&in0_shared["), cpp.c_str());
        QVERIFY2(has(cpp, "tsr_viota"), cpp.c_str());
        QCOMPARE(cpuRun(c), std::string());
      }
    Shape2d d;
    d.C = d.OC = d.groups = 8, d.stride = 2, d.H = 11, d.W = 30;
    Kernel k = lower(cpuConv(d));
    QVERIFY(!defaultScheduleUses(k, "deinterleave"));
    std::string cpp = generatedCpp(cpuConv(d));
    QVERIFY2(has(cpp, "tsr_vload_even(&in0_shared[") || has(cpp, "tsr_vload_even8(&in0_shared["), cpp.c_str());
    QCOMPARE(cpuRun(cpuConv(d)), std::string());
  }

  // An image narrower than a vector (ResNet's layer4: 7 x 7) takes lanes along 32 output channels by default on
  // AVX-512 hosts: the weights packed in blocks of 32 (one vector load a tap), the input one broadcast scalar,
  // where lanes along 7 columns fill 7 of 16. Interpreted and compiled on the cpu backend it agrees with the
  // reference: stride 1 and 2, one vector or two, two rows a tile, the patch packed or not, columns overhanging.
  void narrowImagesTakeLanesAlongTheChannels() {
    const Shape2d d{.C = 16, .OC = 64, .H = 7, .W = 7};
    const TemplateParams lanes{{"tile_m", 32}, {"tile_h", 1}, {"tile_w", 7}, {"block_m", 64}, {"pack_input", 1}, {"channel_lanes", 1}};
    Kernel k = lower(cpuConv(d));
    TracedSchedule s(k);
    applyTemplate(s, lanes);
    const std::string t = printKernel(k);
    QVERIFY2(has(t, "global f32[2, 16, 3, 3, 32]") && has(t, "packed in blocks of 32 along axis 0"), t.c_str());
    QCOMPARE(agreesWithReference(cpuConv(d).graph, k), std::string());
    const std::string cpp = generatedCpp(cpuConv(d), lanes);
    QVERIFY2(has(cpp, "tsr_vload(&in1["), cpp.c_str());  // a tap's 16 channels, one load
    QCOMPARE(cpuRun(cpuConv(d), lanes), std::string());
    auto with = [&](std::map<std::string, int64_t> change) {
      TemplateParams p = lanes;
      for (auto& [key, value] : change) p[key] = value;
      return p;
    };
    QCOMPARE(cpuRun(cpuConv({.C = 16, .OC = 64, .H = 14, .W = 14, .stride = 2}), lanes), std::string());
    QCOMPARE(cpuRun(cpuConv({.C = 8, .OC = 96, .H = 7, .W = 7}), with({{"block_m", 32}})), std::string());
    QCOMPARE(cpuRun(cpuConv(d), with({{"tile_m", 16}, {"tile_h", 2}, {"block_m", 32}})), std::string());
    QCOMPARE(cpuRun(cpuConv(d), with({{"pack_input", 0}})), std::string());
    QCOMPARE(cpuRun(cpuConv({.C = 4, .OC = 32, .H = 5, .W = 9}), with({{"tile_w", 4}, {"block_m", 32}})), std::string());
    Kernel grouped = lower(cpuConv({.C = 32, .OC = 64, .H = 7, .W = 7, .groups = 2}));
    TracedSchedule g(grouped);
    QVERIFY(failsNaming([&] { applyTemplate(g, lanes); }, "channel_lanes", "ungrouped"));
    Kernel narrow = lower(cpuConv(d));
    TracedSchedule n(narrow);
    QVERIFY(failsNaming([&] { applyTemplate(n, with({{"tile_m", 8}, {"block_m", 64}})); }, "tile_m", "multiple of 16"));
    if (hostVectorBytes() < 64) QSKIP("the default takes channel lanes on AVX-512 hosts only; checked above by parameters");
    QCOMPARE(defaultParams(lower(cpuConv(d))).at("channel_lanes"), int64_t(1));
    QCOMPARE(defaultParams(lower(cpuConv({.C = 16, .OC = 48, .H = 7, .W = 7}))).at("channel_lanes"), int64_t(0));  // 48: not 32s
    QCOMPARE(defaultParams(lower(cpuConv({.C = 16, .OC = 64, .H = 14, .W = 14}))).at("channel_lanes"), int64_t(0));  // 14 columns
  }

  void everyCpuPointIsCorrectOrRefused() {
    Shape2d d;
    d.C = 5, d.OC = 6, d.H = 7, d.W = 9;  // no tile divides them all: edge tiles and guards
    Case c = cpuConv(d);
    int scheduled = 0, refused = 0;
    for (int64_t tm : {1, 2, 4})
      for (int64_t th : {1, 2})
        for (int64_t tw : {4, 7, 8, 16})
          for (int64_t bm : {2, 4, 6}) {
            Kernel k = lower(c);
            TracedSchedule s(k);
            try {
              applyTemplate(s, {{"tile_m", tm}, {"tile_h", th}, {"tile_w", tw}, {"block_m", bm}, {"pack_input", (tm + tw) % 2}});
            } catch (const ScheduleError&) {
              ++refused;
              continue;
            }
            std::string why = interpretedInSweep(scheduled) ? agreesWithReference(c.graph, k) : "";
            QVERIFY2(why.empty(), (std::to_string(tm) + "x" + std::to_string(th) + "x" + std::to_string(tw) + " block " +
                                   std::to_string(bm) + ": " + why).c_str());
            ++scheduled;
          }
    qInfo() << scheduled << "scheduled and checked," << refused << "refused";
    QVERIFY(scheduled >= 40);
    QVERIFY(refused >= 8);  // block_m not a multiple of tile_m
  }

  void generatedKernelsRunOnTheCpuBackend() {
    Shape2d wide;
    wide.C = 8, wide.OC = 16, wide.H = 6, wide.W = 56;
    QCOMPARE(cpuRun(cpuConv(wide)), std::string());  // 8-lane vectors
    Shape2d square;
    square.N = 2, square.W = 32, square.H = 4;
    QCOMPARE(cpuRun(cpuConv(square)), std::string());  // the host's vectors
    Shape2d strided;
    strided.stride = 2, strided.H = 9, strided.W = 17;
    QCOMPARE(cpuRun(cpuConv(strided)), std::string());
    Shape2d pointwise;
    pointwise.k = 1, pointwise.C = 16, pointwise.W = 16;
    QCOMPARE(cpuRun(cpuConv(pointwise)), std::string());
    Shape2d odd;
    odd.C = 5, odd.OC = 6, odd.H = 7, odd.W = 9;
    QCOMPARE(cpuRun(cpuConv(odd), {{"tile_m", 4}, {"tile_h", 2}, {"tile_w", 8}, {"block_m", 4}}), std::string());  // guards
    Shape2d grouped;  // AlexNet's conv2 in small: 2 groups of 6 input and 8 output channels, 5 x 5
    grouped.C = 12, grouped.OC = 16, grouped.groups = 2, grouped.k = 5, grouped.H = grouped.W = 13;
    QCOMPARE(cpuRun(cpuConv(grouped)), std::string());
    Shape2d depthwise;  // one channel a group, stride 2
    depthwise.C = depthwise.OC = depthwise.groups = 24, depthwise.stride = 2, depthwise.H = depthwise.W = 28;
    QCOMPARE(cpuRun(cpuConv(depthwise)), std::string());
  }
};

QTEST_GUILESS_MAIN(TestConvCpu)
#include "test_conv_cpu.moc"
