// The conv template's implicit-GEMM form (gemm = 1) on NCHW convs and on NHWC inputs whose Transpose folds
// into the conv's loads: the IR it gives (halo and weight tiles in shared memory, the padding select kept
// over the cached input), that every point of its parameter space interprets equal to the reference or is
// refused with a ScheduleError naming a parameter, and that its CUDA compiles with NVRTC for sm_90.
#include <QtTest>

#include <set>

#include "codegen/codegen.h"
#include "cpu_run.h"
#include "kernel/templates/template_util.h"
#include "kernel/templates/templates.h"
#include "reference_check.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

using Ints = std::vector<int64_t>;

struct ConvShape {
  int64_t H = 11, W = 9, C = 5, OC = 6;
};

// relu(conv(x, w) + b) with pads 1 over an H x W input, C channels into OC (by default 11 x 9, 5 into 6: no
// tile divides them); `nhwc`: x is given NHWC and transposed to NCHW in front of the conv, the Transpose in
// the conv's group.
Case convCase(bool nhwc, int64_t stride, int64_t groups = 1, ConvShape d = {}) {
  GraphBuilder b(nhwc ? "conv_nhwc" : "conv_nchw");
  Value* x = b.input("x", {DType::F32, nhwc ? Shape{d.H > 8 ? 2 : 1, d.H, d.W, d.C} : Shape{d.H > 8 ? 2 : 1, d.C, d.H, d.W}});
  std::vector<double> wv(size_t(d.OC * d.C / groups * 9));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = double(int64_t(i % 7) - 3) * 0.1;
  Value* w = b.constant("w", Tensor::fromDoubles(DType::F32, {d.OC, d.C / groups, 3, 3}, wv));
  Value* bias = b.constant("bias", filled(DType::F32, {d.OC}, 0.05));
  std::vector<std::string> ids;
  Value* in = x;
  if (nhwc) {
    in = b.op("Transpose", {x}, {{"perm", Ints{0, 3, 1, 2}}}, "to_nchw");
    ids.push_back("to_nchw");
  }
  Value* y = b.op("Conv", {in, w, bias},
                  {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{stride, stride}}, {"group", groups}}, "conv");
  b.output(b.op("Relu", {y}, {}, "relu"));
  ids.insert(ids.end(), {"conv", "relu"});
  return {b.finish(), {"g0", "conv+epilogue", ids}};
}

// A 4 x 19 input, 5 channels into 18, stride 2: a 2 x 10 output, so tile_h 1 or 2, tile_w 7 or 8 (edge
// tiles) or the whole row, block_n 16 (an edge tile of 2 channels) or all 18, block_k 4 (an edge chunk).
Case sweepCase(bool nhwc) { return convCase(nhwc, 2, 1, {4, 19, 5, 18}); }

// The printed kernel without its parameter lines: points of the space that clamp to the same loops share it.
std::string loopsOf(const Kernel& k) {
  std::string text = printKernel(k), out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    if (text.compare(at, 8, "  param ") != 0) out.append(text, at, end - at);
    at = end;
  }
  return out;
}

std::set<std::string> paramNames(const Kernel& k) {
  std::set<std::string> out;
  for (const TemplateParam& p : parameterSpace(k)) out.insert(p.name);
  return out;
}

std::string cudaError(const Kernel& k) {
  cuda::NvrtcCompiler nvrtc;
  cuda::NvrtcResult r = nvrtc.compile(codegen::generateCuda(k).source, "conv.cu", {}, "sm_90");
  return r.ok ? "" : r.error;
}

// Every (tile, thread) point with block_k cycling: agrees with the reference or is refused naming a
// parameter. Returns the number of distinct kernels checked.
int sweep(const Case& c) {
  Kernel plain = lower(c);
  std::set<std::string> names = paramNames(plain);
  std::map<std::string, std::vector<int64_t>> space;
  for (const TemplateParam& p : parameterSpace(plain)) space[p.name] = p.candidates;
  // Tile sizes at or above the extent all clamp to it: the smallest of them stands for the rest.
  const Shape& out = c.graph.outputs()[0]->shape();
  for (auto [param, extent] : {std::pair<std::string, int64_t>{"tile_h", out[2]}, {"tile_w", out[3]}, {"block_n", out[1]}}) {
    std::vector<int64_t> kept;
    for (int64_t v : space[param])
      if (v < extent || kept.empty() || kept.back() < extent) kept.push_back(v);
    space[param] = kept;
  }
  ReferenceOptions opt;
  opt.keepAll = true;
  ReferenceResult ref = runReference(c.graph, randomInputs(c.graph, 5), opt);
  std::set<std::string> seen;
  int scheduled = 0, refused = 0, n = 0;
  for (int64_t th : space["tile_h"])
    for (int64_t tw : space["tile_w"])
      for (int64_t bn : space["block_n"])
        for (int64_t tm : space["thread_m"])
          for (int64_t tn : space["thread_n"]) {
            int64_t bk = space["block_k"][size_t(n++) % space["block_k"].size()];
            TemplateParams p = {{"gemm", 1}, {"tile_h", th}, {"tile_w", tw}, {"block_n", bn}, {"block_k", bk},
                                {"thread_m", tm}, {"thread_n", tn}};
            Kernel k = lower(c);
            TracedSchedule s(k);
            try {
              applyTemplate(s, p);
            } catch (const ScheduleError& e) {
              if (!names.count(e.loop())) QTest::qFail(e.what(), __FILE__, __LINE__);
              ++refused;
              continue;
            }
            if (!seen.insert(loopsOf(k)).second) continue;  // the same loops as a point already checked
            std::string why = interpretedInSweep(scheduled) ? agreesWithReference(c.graph, k, ref) : "";
            if (!why.empty()) {
              QTest::qFail((std::to_string(th) + "x" + std::to_string(tw) + "x" + std::to_string(bn) + "/" +
                            std::to_string(tm) + "x" + std::to_string(tn) + "/" + std::to_string(bk) + ": " + why)
                               .c_str(),
                           __FILE__, __LINE__);
              return scheduled;
            }
            ++scheduled;
          }
  qInfo() << c.spec.nodeIds.front().c_str() << scheduled << "scheduled and checked," << refused << "refused";
  return scheduled;
}

}  // namespace

class TestConv : public QObject {
  Q_OBJECT
 private slots:
  void implicitGemmForm() {
    Case c = convCase(false, 1);
    const TemplateParams p = {{"tile_h", 4}, {"tile_w", 8}, {"block_n", 6}, {"block_k", 4}, {"thread_m", 2}, {"thread_n", 3}, {"stages", 1}};
    std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
    // Pixel tiles on blockIdx.x, channel tiles on y, n on z; 8 x 2 x 2 threads each 2 rows x 3 channels.
    QVERIFY(has(t, "for oh_o_ow_o in 0..6 bind(blockIdx.x) {"));
    QVERIFY(has(t, "tmp acc0: register f32[2, 2, 8, 2, 3, 1]"));
    QVERIFY(has(t, "bind(threadIdx.z) {"));
    // The k-outer step stages 4 channels' 6 x 10 halo box (4 rows and 8 columns of outputs, 3 x 3 taps) and
    // the 6 x 4 x 3 x 3 weights; the fill guards the box's rows and columns against the input's edges.
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 4, 6, 10]  # read cache of in0, zero outside in0"));
    QVERIFY(has(t, "tmp in1_shared: shared f32[6, 4, 3, 3]  # read cache of in1"));
    QVERIFY(has(t, "for ic_o in 0..2 reduce {"));
    QVERIFY(has(t, "% 6 >= 0 && oh_o_ow_o % 2 * 8 - 1 + ("));
    // The padding select moved into the fill, which writes every entry of the halo (0 outside x), so the
    // product reads the cache unmasked: one fma per tap.
    QVERIFY(has(t, "% 10 < 9 && oh_o_ow_o % 2 * 8 - 1 + ("));
    QVERIFY(has(t, "% 10 >= 0, in0[n + ("));
    QVERIFY(has(t, "sum= in0_shared[0, ic_i, kh + oh_i_i + oh_i_o * 2, kw + ow_i] * in1_shared["));
    QVERIFY(t.find("sum= select(") == std::string::npos);
    Kernel k = lower(c);
    TracedSchedule s(k);
    applyTemplate(s, p);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  void zeroFilledCacheMovesAndPipelines() {
    Case c = convCase(false, 2);
    Kernel k = lower(c);
    TracedSchedule s(k);
    applyTemplate(s, {{"tile_h", 2}, {"tile_w", 8}, {"block_k", 4}, {"stages", 1}});
    // compute_at takes the cache out (its reads get their masks back) and places it again.
    s.computeAt("in0_shared", "ic_o");
    QVERIFY(has(printKernel(k), "# read cache of in0, zero outside in0"));
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    // Pipelined, the halo's fill is an asynchronous copy that writes 0 outside the input (cp.async reading 0
    // bytes there), and the kernel still means the same.
    sched::pipeline(k, "ic_o", 2);
    std::string t = printKernel(k);
    QVERIFY(has(t, " <- async in0["));
    QVERIFY(has(t, " else 0"));
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    codegen::GeneratedKernel g = codegen::generateCuda(k);
    QVERIFY(has(g.source, "cp.async.ca.shared.global [%0], [%1], 4, %2;"));
    QCOMPARE(cudaError(k), std::string());
  }
  // The CUDA-core implicit GEMM pipelines its k loop as the mma form does (stages): the halo's and the weights'
  // tiles of the next step load by cp.async during this one's; unpipelined with stages = 1.
  void implicitGemmPipelines() {
    Case c = convCase(false, 1);
    for (int64_t stages : {1, 2, 3}) {
      Kernel k = lower(c);
      TracedSchedule s(k);
      applyTemplate(s, {{"gemm", 1}, {"tile_h", 4}, {"tile_w", 8}, {"block_k", 2}, {"stages", stages}});
      std::string t = printKernel(k);
      QCOMPARE(has(t, "pipeline(" + std::to_string(stages) + ")"), stages > 1);
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
      QCOMPARE(cudaError(k), std::string());
    }
  }
  void defaultsPickTheGemmForm() {
    TemplateParams d = defaultParams(lower(convCase(false, 1)));
    QCOMPARE(d.at("gemm"), int64_t(1));
    QCOMPARE(d.at("tile_w"), int64_t(9));  // a row up to 32 wide is one tile
    QCOMPARE(d.at("block_n"), int64_t(6));
    // A grouped conv reads channel oc / 3 * 2 + ic: no box per channel chunk, so the window form.
    Kernel grouped = lower(convCase(false, 1, 2, {11, 9, 4, 6}));
    QCOMPARE(defaultParams(grouped).at("gemm"), int64_t(0));
    TracedSchedule s(grouped);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"gemm", 1}}); }, "gemm", "without groups"));
    // A depthwise conv (channel oc reads its own input channel, oc + ic) is a box per channel chunk, but its
    // GEMM's k is one channel's 9 taps: the window form, which the implicit GEMM still may replace.
    Case dw = convCase(false, 2, 6, {11, 9, 6, 6});
    Kernel depthwise = lower(dw);
    QVERIFY(templ::plainConv2d(depthwise) && templ::depthwiseConv(depthwise, templ::outerChain(depthwise)[1]));
    QCOMPARE(defaultParams(depthwise).at("gemm"), int64_t(0));
    QVERIFY(!templ::depthwiseConv(grouped, templ::outerChain(grouped)[1]));
    TracedSchedule window(depthwise);
    applyTemplate(window, {});
    QCOMPARE(agreesWithReference(dw.graph, depthwise), std::string());
  }
  // Large filters at stride 4 (AlexNet's first conv is 11 x 11): the defaults stage fewer input channels per
  // step until the halo and weight tiles fit in 48 KiB (a 23 x 23 filter over 16 channels), and take the
  // window form when even one channel's weights do not (31 x 31); either way the defaults apply.
  void defaultsFitInSharedMemory() {
    auto bigFilter = [](int64_t channels, int64_t side) {
      GraphBuilder b("big_filter");
      Value* x = b.input("x", {DType::F32, {1, channels, 67, 67}});
      std::vector<double> wv(size_t(64 * channels * side * side));
      for (size_t i = 0; i < wv.size(); ++i) wv[i] = double(int64_t(i % 5) - 2) * 0.01;
      Value* w = b.constant("w", Tensor::fromDoubles(DType::F32, {64, channels, side, side}, wv));
      Value* y = b.op("Conv", {x, w}, {{"strides", Ints{4, 4}}, {"pads", Ints{2, 2, 2, 2}}}, "conv");
      b.output(b.op("Relu", {y}, {}, "relu"));
      return Case{b.finish(), {"g0", "conv+epilogue", {"conv", "relu"}}};
    };
    Case alex = bigFilter(3, 11);
    Kernel k = lower(alex);
    QCOMPARE(defaultParams(k).at("gemm"), int64_t(1));
    TracedSchedule s(k);
    applyTemplate(s, {});
    QCOMPARE(agreesWithReference(alex.graph, k), std::string());
    Kernel wide = lower(bigFilter(16, 23));
    TemplateParams d = defaultParams(wide);
    QCOMPARE(d.at("gemm"), int64_t(1));
    QVERIFY2(d.at("block_k") < 8, qPrintable(QString::number(d.at("block_k"))));
    TracedSchedule s2(wide);
    applyTemplate(s2, {});
    Kernel huge = lower(bigFilter(16, 31));
    QCOMPARE(defaultParams(huge).at("gemm"), int64_t(0));
    TracedSchedule s3(huge);
    applyTemplate(s3, {});
  }
  void refusalsNameTheParameter() {
    Case wide = convCase(false, 1, 1, {32, 32, 16, 128});
    auto refuses = [&](const TemplateParams& p, const std::string& param, const std::string& what) {
      Kernel k = lower(wide);
      TracedSchedule s(k);
      return failsNaming([&] { applyTemplate(s, p); }, param, what);
    };
    QVERIFY(refuses({{"tile_h", 16}, {"tile_w", 32}, {"block_n", 64}, {"thread_m", 1}, {"thread_n", 1}}, "thread_m", "exceeds 1024"));
    QVERIFY(refuses({{"block_n", 128}, {"thread_n", 1}}, "thread_n", "128 channel threads exceed"));
    QVERIFY(refuses({{"tile_h", 16}, {"tile_w", 32}, {"block_n", 128}, {"thread_m", 8}, {"thread_n", 8}}, "tile_h", "exceeds 16384"));
    // 64 channels of halo and weights a step: 341 KiB of shared memory, over the 227 KiB a block may have.
    Case deep = convCase(false, 1, 1, {32, 32, 64, 128});
    Kernel k = lower(deep);
    TracedSchedule s(k);
    QVERIFY(failsNaming([&] {
      applyTemplate(s, {{"tile_h", 8}, {"tile_w", 16}, {"block_n", 128}, {"block_k", 64}, {"thread_m", 4}, {"thread_n", 8}});
    }, "block_k", "limit 227 KiB"));
  }
  void everyPointNchw() { QVERIFY(sweep(sweepCase(false)) >= 60); }
  void everyPointNhwc() { QVERIFY(sweep(sweepCase(true)) >= 60); }
  void nhwcReadsTheInputWhereItLies() {
    Case c = convCase(true, 2);
    Kernel plain = lower(c);
    QCOMPARE(agreesWithReference(c.graph, plain), std::string());
    std::string lowered = printKernel(plain);
    QVERIFY(has(lowered, "in0[n, oh * 2 - 1 + kh, ow * 2 - 1 + kw, ic]"));
    std::string t = roundTrip(c, [](TracedSchedule& s) { applyTemplate(s, {{"tile_h", 2}, {"tile_w", 8}, {"block_k", 4}}); });
    // 2 rows and 5 columns of stride-2 outputs, 4 channels (a row, padded by 1 against bank conflicts).
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 5, 11, 5]  # read cache of in0, rows padded by 1, zero outside in0"));
  }
  void windowFormStaysAvailable() {
    Case c = convCase(true, 2);
    Kernel k = lower(c);
    TracedSchedule s(k);
    applyTemplate(s, {{"gemm", 0}});
    QVERIFY(has(printKernel(k), "for kh in 0..3 unrolled reduce {"));
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  void cudaCompilesForSm90() {
    for (bool nhwc : {false, true})
      for (const TemplateParams& p : {TemplateParams{}, TemplateParams{{"gemm", 0}},
                                      TemplateParams{{"tile_h", 2}, {"tile_w", 16}, {"thread_m", 1}, {"thread_n", 1}}}) {
        Case c = convCase(nhwc, 2);
        Kernel k = lower(c);
        TracedSchedule s(k);
        applyTemplate(s, p);
        QCOMPARE(cudaError(k), std::string());
      }
  }
  // The default (implicit-GEMM) kernels as generated C++ on the cpu backend, verified against the reference:
  // its shared caches are uninitialized local arrays, so a halo entry the fill left unwritten would show.
  void cpuBackendRunsVerified() {
    for (bool nhwc : {false, true}) {
      QCOMPARE(cpuRunFails(convCase(nhwc, nhwc ? 2 : 1)), std::string());
    }
  }
};

QTEST_GUILESS_MAIN(TestConv)
#include "test_conv.moc"
