// Default schedule templates: parameter spaces, defaults, the IR they give, and that they are traces
// (each template's result replays from JSON on a fresh lowering).
#include <QtTest>

#include "kernel/templates/templates.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

std::string scheduled(const Case& c, const TemplateParams& p = {}, Trace* trace = nullptr) {
  return roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); }, trace);
}

std::vector<std::string> paramNames(const Kernel& k) {
  std::vector<std::string> out;
  for (const TemplateParam& p : parameterSpace(k)) out.push_back(p.name);
  return out;
}

}  // namespace

class TestTemplates : public QObject {
  Q_OBJECT
 private slots:
  void namesAndSpaces() {
    QCOMPARE(templateName(lower(pointwise())), std::string("pointwise"));
    QCOMPARE(templateName(lower(softmax())), std::string("row-reduction"));
    QCOMPARE(templateName(lower(gemm())), std::string("gemm"));
    QCOMPARE(templateName(lower(conv())), std::string("conv"));
    QCOMPARE(templateName(lower(maxpool())), std::string("pool"));
    QCOMPARE(templateName(lower(transpose())), std::string("transpose"));
    QCOMPARE(paramNames(lower(gemm())),
             (std::vector<std::string>{"block_m", "block_n", "block_k", "warp_m", "warp_n", "thread_m", "thread_n", "column_run", "shared", "mma", "stages", "tf32",
                                       "ldmatrix", "pad", "pad_b", "store_tile", "split_k", "tma", "wgmma"}));
    QCOMPARE(paramNames(lower(pointwise())),
             (std::vector<std::string>{"vector_width", "elems_per_thread", "block_size", "grid_stride", "max_blocks"}));
    for (const TemplateParam& p : parameterSpace(lower(softmax()))) QVERIFY(!p.candidates.empty() && !p.summary.empty());
  }
  // applyTemplate skips computing the defaults when it is given every parameter (the tuner's candidates), so
  // each template's defaults must name exactly its space, and applying them explicitly must schedule the same
  // loops as applying none: the GPU's templates and the CPU's.
  void defaultsNameTheirSpace() {
    auto check = [&](const Case& c) {
      Kernel k = lower(c);
      std::vector<std::string> keys;
      for (const auto& [key, value] : defaultParams(k)) keys.push_back(key);
      std::vector<std::string> names = paramNames(k);
      std::sort(names.begin(), names.end());
      QCOMPARE(keys, names);
      QCOMPARE(scheduled(c, defaultParams(k)), scheduled(c));
    };
    for (Case (*make)() : {+[] { return pointwise(); }, +[] { return softmax(); }, +[] { return gemm(); },
                           +[] { return conv(); }, +[] { return maxpool(); }, +[] { return transpose(); }}) {
      check(make());
      check(onCpu(make()));
    }
  }
  void defaultsFitTheKernel() {
    TemplateParams g = defaultParams(lower(gemm(48, 80, 24)));
    QCOMPARE(g.at("block_m"), int64_t(16));  // the largest candidate dividing 48
    QCOMPARE(g.at("block_n"), int64_t(16));
    QCOMPARE(g.at("block_k"), int64_t(8));
    TemplateParams r = defaultParams(lower(softmax(4, 4096)));
    QCOMPARE(r.at("threads"), int64_t(256));  // long rows: one block per row
    QCOMPARE(r.at("cache_row"), int64_t(1));  // 16 KiB row, three passes
    QCOMPARE(defaultParams(lower(softmax(2, 8192))).at("threads"), int64_t(512));  // measured best at 8192 on the H200
    QCOMPARE(defaultParams(lower(softmax(4, 64))).at("threads"), int64_t(32));  // short rows: one warp per row
    QCOMPARE(defaultParams(lower(pointwise())).at("vector_width"), int64_t(4));
    // Row kernels read 16 bytes a step: 4 f32 or 8 bf16 (attention's softmax read 8 bytes with 4).
    QCOMPARE(defaultParams(lower(softmax(64, 2048))).at("vector_width"), int64_t(4));
    QCOMPARE(defaultParams(lower(softmax(64, 2048, DType::BF16))).at("vector_width"), int64_t(8));
  }
  void pointwiseTemplate() {
    Trace trace;
    std::string t = scheduled(pointwise(), {}, &trace);
    QVERIFY(has(t, "  param block_size = 256\n  param elems_per_thread = 1\n"));
    QVERIFY(has(t, "for i0_i1_o_o in 0..1 bind(blockIdx.x) {\n    for i0_i1_o_i in 0..8 bind(threadIdx.x) {\n"
                   "      for i0_i1_i in 0..4 vectorized {\n"));
    QCOMPARE(trace.instructions.front().kind, std::string("set_param"));
  }
  void pointwiseElementsPerThreadAndGridStride() {
    GraphBuilder b("big");
    Value* x = b.input("x", {DType::F32, {1 << 16}});
    b.output(b.op("Relu", {x}, {}, "relu"));
    Case c{b.finish(), {"g", "pointwise", {"relu"}}};
    std::string t = scheduled(c, {{"vector_width", 2}, {"elems_per_thread", 4}, {"block_size", 128}, {"grid_stride", 1}, {"max_blocks", 264}});
    // 65536 = 2 lanes * 128 threads * 4 elements * 64 blocks; 64 blocks fit under the 264 cap, so no grid-stride loop.
    QVERIFY(has(t, "for i0_o_o_o in 0..64 bind(blockIdx.x) {\n    for i0_o_o_i in 0..4 unrolled {\n"
                   "      for i0_o_i in 0..128 bind(threadIdx.x) {\n        for i0_i in 0..2 vectorized {\n"));
    std::string s = scheduled(c, {{"vector_width", 1}, {"block_size", 64}, {"grid_stride", 1}, {"max_blocks", 264}});
    // 1024 blocks > 264: a serial grid-stride loop wraps the block index.
    QVERIFY(has(s, "  for i0_o_o in 0..4 {\n    for i0_o_i in 0..264 bind(blockIdx.x) {\n      if i0_o_o * 264 + i0_o_i < 1024 {\n"
                   "        for i0_i in 0..64 bind(threadIdx.x) {\n"));
    QVERIFY(has(s, "out0[i0_o_o * 16896 + i0_o_i * 64 + i0_i] = v0  # relu"));
  }
  void rowReductionTemplate() {
    std::string t = scheduled(softmax(4, 64), {{"vector_width", 1}, {"online", 0}, {"cache_row", 1}});
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 64]  # read cache of in0"));
    QVERIFY(has(t, "  for i0 in 0..4 bind(blockIdx.x) {\n    alloc in0_shared\n"));
    QVERIFY(has(t, "for in0_shared_ax1_i in 0..32 bind(threadIdx.x) {"));
    QVERIFY(has(t, "    for k0_o in 0..2 reduce {\n      for k0_i in 0..32 bind(threadIdx.x) reduce {\n"
                   "        acc0[0] max= in0_shared[0, k0_o * 32 + k0_i]  # softmax\n"));
    QVERIFY(has(t, "        out0[i0, j_o * 32 + j_i] = v1  # softmax\n"));
    std::string block = scheduled(softmax(4, 64), {{"threads", 128}, {"cache_row", 0}, {"vector_width", 1}, {"online", 0}});
    QVERIFY(has(block, "    for k0 in 0..64 bind(threadIdx.x) reduce {\n      acc0[0] max= in0[i0, k0]  # softmax\n"));
    QVERIFY(block.find("shared") == std::string::npos);
  }
  // vector_width: each pass (and the row cache's fill) reads runs of consecutive elements, one run a thread per
  // step, the runs of a warp's threads adjacent (coalesced).
  void rowReductionVectorWidth() {
    QCOMPARE(defaultParams(lower(softmax(4, 8192))).at("vector_width"), int64_t(4));
    QCOMPARE(defaultParams(lower(softmax(4, 64))).at("vector_width"), int64_t(2));  // 32 threads x 2 = the row
    QCOMPARE(defaultParams(lower(softmax(4, 40))).at("vector_width"), int64_t(1));  // 32 x 2 > 40: threads would idle
    QCOMPARE(defaultParams(lower(softmax(4, 4098))).at("vector_width"), int64_t(2));
    QCOMPARE(defaultParams(lower(layernorm())).at("vector_width"), int64_t(1));  // rows of 16 < 32 threads
    std::string t = scheduled(softmax(4, 1024), {{"vector_width", 4}, {"threads", 64}, {"online", 0}});
    QVERIFY(has(t, "in0_shared[in0_shared_ax0, in0_shared_ax1_o_o * 256 + in0_shared_ax1_o_i * 4 + in0_shared_ax1_i] = "
                   "in0[i0 + in0_shared_ax0, in0_shared_ax1_o_o * 256 + in0_shared_ax1_o_i * 4 + in0_shared_ax1_i]"));
    QVERIFY(has(t, "    for k0_o_o in 0..4 reduce {\n      for k0_o_i in 0..64 bind(threadIdx.x) reduce {\n"
                   "        for k0_i in 0..4 vectorized reduce {\n"));
    QVERIFY(has(t, "for j_i in 0..4 vectorized {"));
    Kernel k = lower(softmax(4, 42));
    TracedSchedule s(k);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"vector_width", 4}}); }, "vector_width", "vector_width 4 does not divide loop"));
  }
  // online softmax is offered, not a default (the defaults are the forms measured on the H200); blocks_per_row
  // splits long rows that are too few to fill the GPU.
  void rowReductionDefaultsOnlineAndSplit() {
    QCOMPARE(defaultParams(lower(softmax(4, 64))).at("online"), int64_t(0));
    QCOMPARE(defaultParams(lower(softmax(4, 1024))).at("blocks_per_row"), int64_t(1));    // parts under 8192
    QCOMPARE(defaultParams(lower(softmax(4, 65536))).at("blocks_per_row"), int64_t(8));   // 32 blocks, parts of 8192
    QCOMPARE(defaultParams(lower(softmax(512, 65536))).at("blocks_per_row"), int64_t(1)); // rows fill the SMs
    std::string t = scheduled(softmax(2, 16384), {{"blocks_per_row", 2}, {"threads", 256}, {"online", 1}});
    QVERIFY(has(t, "tmp ws0: global f32[2, 2, 2]\n"));
    QVERIFY(has(t, "  alloc ws0\n  for i0_part0 in 0..4 bind(blockIdx.x) {\n"));
    QVERIFY(has(t, "  sync grid\n  for i0_1_part1 in 0..4 bind(blockIdx.x) {\n"));
    QVERIFY(has(t, "acc0_pair[0] maxsumexp= in0[i0_part0 / 2, i0_part0 % 2 * 8192 + k0_o_o * 1024 + k0_o_i * 4 + k0_i]"));
    QVERIFY(has(t, "for ws0_part in 0..2 reduce {\n      acc0_pair[0] max= ws0[i0_1_part1 / 2, ws0_part, 0]  # softmax\n"));
    Kernel k = lower(softmax(2, 16384));
    TracedSchedule s(k);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"blocks_per_row", 2}, {"cache_row", 1}}); }, "blocks_per_row", "cache_row must be 0"));
    Kernel odd = lower(softmax(2, 37));
    TracedSchedule so(odd);
    QVERIFY(failsNaming([&] { applyTemplate(so, {{"blocks_per_row", 2}, {"cache_row", 0}}); }, "blocks_per_row", "does not divide the row's 37 elements"));
  }
  void layerNormTemplate() {
    std::string t = scheduled(layernorm(), {{"cache_row", 1}});
    QVERIFY(has(t, "  for i0_i1 in 0..6 bind(blockIdx.x) {\n"));
    QVERIFY(has(t, "in0[i0_i1 / 3 + in0_shared_ax0, i0_i1 % 3 + in0_shared_ax1, in0_shared_ax2]"));
    QVERIFY(has(t, "      out0[i0_i1 / 3, i0_i1 % 3, j] = v2  # ln\n"));
  }
  void gemmTemplate() {
    const TemplateParams warpLevel = {{"block_m", 64}, {"block_n", 64}, {"warp_m", 32}, {"warp_n", 32}, {"thread_m", 4},
                                      {"thread_n", 8}, {"shared", 0}};
    std::string t = scheduled(gemm(128, 64, 32), warpLevel);
    QVERIFY(has(t, "  param block_k = 16\n  param block_m = 64\n  param block_n = 64\n  param column_run = 1\n  param ldmatrix = 1\n  param mma = 0\n  param pad = 0\n  param pad_b = 0\n  param shared = 0\n"
                   "  param split_k = 0\n  param stages = 2\n  param store_tile = 0\n  param tf32 = 0\n  param thread_m = 4\n  param thread_n = 8\n  param tma = 0\n"
                   "  param warp_m = 32\n  param warp_n = 32\n  param wgmma = 0\n"));
    // 2 x 2 warps of 32 x 32; lane l computes rows (l / 4) * 4 + 0..3 and columns (l % 4) * 8 + 0..7 of its warp tile.
    QVERIFY(has(t, "  for i_o in 0..2 bind(blockIdx.y) {\n    for j_o in 0..1 bind(blockIdx.x) {\n"
                   "      for i_i_o_j_i_o in 0..4 bind(warp) {\n        for i_i_i_o_j_i_i_o in 0..32 bind(threadIdx.x) {\n"
                   "          for i_i_i_i in 0..4 unrolled {\n            for j_i_i_i in 0..8 unrolled {\n"));
    QVERIFY(has(t, "for k_o in 0..2 reduce {\n                for k_i in 0..16 unrolled reduce {\n"));
    QVERIFY(has(t, "out0[i_o * 64 + i_i_o_j_i_o / 2 * 32 + i_i_i_o_j_i_i_o / 4 * 4 + i_i_i_i, "
                   "j_o * 64 + i_i_o_j_i_o % 2 * 32 + i_i_i_o_j_i_i_o % 4 * 8 + j_i_i_i] = v2  # relu"));
  }
  void gemmTemplateThreadGrid() {
    std::string t = scheduled(gemm(128, 64, 32), {{"block_m", 64}, {"block_n", 64}, {"warp_m", 0}, {"warp_n", 0}, {"thread_m", 4}, {"thread_n", 4}, {"shared", 0}});
    QVERIFY(has(t, "  for i_o in 0..2 bind(blockIdx.y) {\n    for j_o in 0..1 bind(blockIdx.x) {\n"
                   "      for i_i_o in 0..16 bind(threadIdx.y) {\n        for j_i_o in 0..16 bind(threadIdx.x) {\n"
                   "          for i_i_i in 0..4 unrolled {\n            for j_i_i in 0..4 unrolled {\n"));
    QVERIFY(has(t, "acc0[0] sum= in0[i_o * 64 + i_i_o * 4 + i_i_i, k_o * 16 + k_i] * in1[k_o * 16 + k_i, j_o * 64 + j_i_o * 4 + j_i_i]"));
    QVERIFY(has(t, "out0[i_o * 64 + i_i_o * 4 + i_i_i, j_o * 64 + j_i_o * 4 + j_i_i] = v2  # relu"));
  }
  void gemmWarpNeedsThirtyTwoLanes() {
    Kernel k = lower(gemm(128, 64, 32));
    TracedSchedule s(k);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"block_m", 64}, {"block_n", 64}, {"warp_m", 32}, {"warp_n", 32}, {"thread_m", 2}, {"thread_n", 2}, {"shared", 0}}); }, "i_i_i_o_j_i_i_o",
                        "step 8: extent 256 exceeds the 32 lanes of warp loop 'i_i_o_j_i_o'"));
  }
  void gemmTemplateBatched() {
    GraphBuilder b("bmm");
    Value* a = b.input("a", {DType::F32, {3, 32, 16}});
    Value* w = b.input("w", {DType::F32, {3, 16, 32}});
    b.output(b.op("MatMul", {a, w}, {}, "mm"));
    std::string t = scheduled({b.finish(), {"g", "gemm", {"mm"}}}, {{"block_m", 32}, {"block_n", 32}, {"warp_m", 0}, {"warp_n", 0}, {"thread_m", 2}, {"thread_n", 2}, {"shared", 0}});
    QVERIFY(has(t, "  for b0 in 0..3 bind(blockIdx.z) {\n    for i_o in 0..1 bind(blockIdx.y) {\n"));
    QVERIFY(has(t, "for i_i_o in 0..16 bind(threadIdx.y) {"));
  }
  void convAndPoolTemplates() {
    std::string t = scheduled(conv(), {{"gemm", 0}});  // the window form (the gemm form: test_conv.cpp)
    QVERIFY(has(t, "  for n in 0..1 bind(blockIdx.z) {\n    for oc in 0..4 bind(blockIdx.y) {\n"
                   "      for oh_ow_o in 0..1 bind(blockIdx.x) {\n        for oh_ow_i in 0..64 bind(threadIdx.x) {\n"));
    QVERIFY(has(t, "for kh in 0..3 unrolled reduce {"));
    std::string p = scheduled(maxpool(), {{"unroll_window", 0}});
    QVERIFY(has(p, "for c in 0..2 bind(blockIdx.y) {"));
    QVERIFY(has(p, "for kh in 0..2 reduce {"));
  }
  void transposeTemplate() {
    std::string t = scheduled(transpose());
    QVERIFY(has(t, "  for i0_o in 0..3 bind(blockIdx.y) {\n    for i1_o in 0..2 bind(blockIdx.x) {\n      alloc in0_shared\n"
                   "      for in0_shared_ax0 in 0..32 bind(threadIdx.y) {\n        for in0_shared_ax1 in 0..32 bind(threadIdx.x) {\n"
                   "          in0_shared[in0_shared_ax0, in0_shared_ax1] = in0[i1_o * 32 + in0_shared_ax0, i0_o * 32 + in0_shared_ax1]\n"));
    QVERIFY(has(t, "      sync block\n      for i0_i in 0..32 bind(threadIdx.y) {\n        for i1_i in 0..32 bind(threadIdx.x) {\n"
                   "          v0: f32 = in0_shared[i1_i, i0_i]  # transpose\n"));
    std::string direct = scheduled(transpose(), {{"shared_tile", 0}, {"tile", 16}});
    QVERIFY(has(direct, "v0: f32 = in0[i1_o * 16 + i1_i, i0_o * 16 + i0_i]  # transpose"));
  }
  void dataMovementTemplate() {
    GraphBuilder b("rs");
    Value* x = b.input("x", {DType::F32, {8, 64}});
    b.output(b.op("Reshape", {x, b.ints("shape", {16, 32})}, {}, "reshape"));
    std::string t = scheduled({b.finish(), {"g", "data-movement", {"reshape"}}});
    QVERIFY(has(t, "  for i0_i1_o in 0..2 bind(blockIdx.x) {\n    for i0_i1_i in 0..256 bind(threadIdx.x) {\n"));
  }
  void unknownParameterIsRefused() {
    Kernel k = lower(gemm());
    TracedSchedule s(k);
    try {
      applyTemplate(s, {{"tile_q", 4}});
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(std::string(e.what()).find("template gemm (kernel 'g0'): unknown parameter 'tile_q'") != std::string::npos);
    }
  }
  void nonPositiveSizeIsRefused() {
    Kernel k = lower(gemm());
    TracedSchedule s(k);
    try {
      applyTemplate(s, {{"block_k", 0}});
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("parameter 'block_k' = 0 (must be 1 or more)") != std::string::npos, e.what());
    }
    Kernel k2 = lower(gemm());
    TracedSchedule s2(k2);
    applyTemplate(s2, {{"warp_m", 0}, {"warp_n", 0}});  // 0 is the space's "no warp level"
  }
  void illegalParameterFailsNamingTheLoop() {
    Kernel k = lower(pointwise());
    TracedSchedule s(k);
    // 32 elements, vector width 2 and 1024 threads would fit; 3 lanes leave a guarded remainder.
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"vector_width", 3}}); }, "i0_i1_i", "body is guarded"));
  }
  void defaultScheduleReturnsTheTrace() {
    Kernel k = lower(gemm());
    Trace t = applyDefaultSchedule(k);
    Kernel fresh = lower(gemm());
    replay(fresh, Trace::load(t.save()));
    QCOMPARE(printKernel(fresh), printKernel(k));
    // nineteen parameters, twenty-four primitives, and for 2 stages a split and unroll of 4-element runs per fill
    // and the pipeline
    QCOMPARE(t.instructions.size(), size_t(19 + 24 + 5));
  }
};

QTEST_APPLESS_MAIN(TestTemplates)
#include "test_templates.moc"
