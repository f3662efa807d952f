// The tiled gemm: hoist_reduction (round trip, meaning, preconditions), the shared-memory, mma and tf32 forms of
// the gemm template, and that every point of the template's parameter space either schedules to a kernel that
// means the same as the reference or is refused with a ScheduleError.
#include <QtTest>

#include "codegen/codegen.h"
#include "kernel/interpret.h"
#include "kernel/templates/templates.h"
#include "runtime/reference/compare.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/reference/interpreter.h"
#include "reference_check.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;


namespace {

// NVRTC's error compiling `source` for sm_90 ("" when it compiles).
std::string nvrtcError(const std::string& source) {
  cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(source, "gemm.cu", {}, "sm_90");
  return r.ok ? "" : r.error;
}

}  // namespace

class TestGemm : public QObject {
  Q_OBJECT
 private slots:
  void hoistReductionRoundTrip() {
    Case c = gemm(32, 16, 8);
    std::string t = roundTrip(c, [](TracedSchedule& s) {
      s.tile({"i", "j"}, {16, 8});
      auto copies = s.hoistReduction("k", "j_o");
      QCOMPARE(copies, (std::vector<std::string>{"i_i_init", "j_i_init", "i_i_epi", "j_i_epi"}));
    });
    // The accumulator becomes the block's tile; the reduction runs outside the tile's loops.
    QVERIFY(has(t, "tmp acc0: register f32[16, 8, 1]"));
    QVERIFY(has(t, "    for j_o in 0..2 {\n      alloc acc0  # matmul\n      for i_i_init in 0..16 {\n        for j_i_init in 0..8 {\n"
                   "          acc0[i_i_init, j_i_init, 0] = 0.0"));
    QVERIFY(has(t, "      for k in 0..8 reduce {\n        for i_i in 0..16 {\n          for j_i in 0..8 {\n"
                   "            acc0[i_i, j_i, 0] sum= in0[i_o * 16 + i_i, k] * "));
    QVERIFY(has(t, "out0[i_o * 16 + i_i_epi, j_o * 8 + j_i_epi] = v2  # relu"));
    Kernel k = lower(c);
    TracedSchedule s(k);
    s.tile({"i", "j"}, {16, 8});
    s.hoistReduction("k", "j_o");
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  void hoistReductionKeepsGuards() {
    Case c = gemm(20, 12, 6);
    Kernel k = lower(c);
    TracedSchedule s(k);
    s.tile({"i", "j"}, {8, 8});
    s.split("k", 4);
    s.hoistReduction("k_o", "j_o");
    s.reorder({"k_i", "i_i", "j_i"});
    std::string t = printKernel(k);
    QVERIFY(has(t, "if i_o * 8 + i_i_epi < 20 && j_o * 8 + j_i_epi < 12 {"));
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  void hoistReductionPreconditions() {
    Kernel k = lower(gemm(32, 16, 8));
    QVERIFY(failsNaming([&] { sched::hoistReduction(k, "j", "i"); }, "j", "step 2: is not a reduction loop"));
    QVERIFY(failsNaming([&] { sched::hoistReduction(k, "k", "nope"); }, "nope", "step 3: no loop named 'nope'"));
    QVERIFY(failsNaming([&] { sched::hoistReduction(k, "k", "j"); }, "j", "step 5: no loops lie between"));
    sched::split(k, "k", 4);
    QVERIFY(failsNaming([&] { sched::hoistReduction(k, "k_i", "j"); }, "k_o", "step 6: is a reduction loop between"));
    Kernel wide = lower(gemm(32, 300, 8));
    QVERIFY(failsNaming([&] { sched::hoistReduction(wide, "k", "i"); }, "k", "would need 300 registers per thread"));
  }
  void sharedTemplateForm() {
    Case c = gemm(128, 128, 64);
    std::string t = roundTrip(c, [](TracedSchedule& s) {
      applyTemplate(s, {{"block_m", 64}, {"block_n", 64}, {"block_k", 16}, {"thread_m", 4}, {"thread_n", 4}, {"stages", 1}});
    });
    // 16 x 16 threads, 4 x 4 outputs each, a thread apart; A and B tiles staged at k_o by all 256 threads.
    QVERIFY(has(t, "tmp acc0: register f32[16, 16, 4, 4, 1]"));
    QVERIFY(has(t, "tmp in0_shared: shared f32[64, 16]  # read cache of in0"));
    QVERIFY(has(t, "tmp in1_shared: shared f32[16, 64]  # read cache of in1"));
    QVERIFY(has(t, "      for k_o in 0..4 reduce {\n        alloc in1_shared\n"));
    QVERIFY(has(t, "bind(threadIdx.y) {"));
    QVERIFY(has(t, "sync block\n"));
    QVERIFY(has(t, "for k_i in 0..16 unrolled reduce {"));
    QVERIFY(has(t, "sum= in0_shared[i_i_i + i_i_o * 16, k_i] * in1_shared[k_i, j_i_i + j_i_o * 16]"));
    Kernel k = lower(c);
    TracedSchedule s(k);
    applyTemplate(s, {{"block_m", 64}, {"block_n", 64}, {"block_k", 16}, {"thread_m", 4}, {"thread_n", 4}, {"stages", 1}});
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  // column_run = 4: a thread's 8 columns are two runs of 4 consecutive ones, a run per thread side by side, so its
  // reads of B's shared row and its stores are runs of 16 bytes; the kernel means the same and compiles for sm_90.
  void columnRunsAreConsecutiveColumns() {
    Case c = gemm(128, 128, 64);
    const TemplateParams p = {{"block_m", 128}, {"block_n", 128}, {"block_k", 16}, {"thread_m", 8}, {"thread_n", 8}, {"column_run", 4}};
    std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
    QVERIFY(has(t, "sum= in0_shared[i_i_i + i_i_o * 16, k_i] * in1_shared[k_i, j_i_i + j_i_o_i * 4 + j_i_o_o * 64]"));
    QVERIFY(has(t, "for j_i_i in 0..4 unrolled {"));
    Kernel k = lower(c);
    TracedSchedule s(k);
    applyTemplate(s, p);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    QCOMPARE(nvrtcError(codegen::generateCuda(k).source), std::string());
    // Runs that overhang the tile (20 columns: 8 a thread, in runs of 4) are guarded.
    Case odd = gemm(40, 20, 20);
    Kernel ko = lower(odd);
    TracedSchedule so(ko);
    applyTemplate(so, {{"block_m", 32}, {"block_n", 32}, {"thread_m", 4}, {"thread_n", 8}, {"column_run", 4}});
    QCOMPARE(agreesWithReference(odd.graph, ko), std::string());
  }
  void defaultsFillTheMachine() {
    // 4096 x 4096: 128 x 128 tiles still give 1024 blocks; 128 x 256 (the transformer's fc2): 16 x 16 tiles.
    TemplateParams big = defaultParams(lower(gemmWithoutEpilogue(4096, 4096, 64)));
    QCOMPARE(big.at("block_m"), int64_t(128));
    QCOMPARE(big.at("block_n"), int64_t(128));
    QCOMPARE(big.at("thread_m"), int64_t(8));
    QCOMPARE(big.at("shared"), int64_t(1));
    TemplateParams fc2 = defaultParams(lower(gemmWithoutEpilogue(128, 256, 64)));
    QCOMPARE(fc2.at("block_m"), int64_t(16));
    QCOMPARE(fc2.at("block_n"), int64_t(16));
    QCOMPARE(fc2.at("thread_m"), int64_t(1));
    // The CUDA-core form wants two blocks an SM: GPT-2's second MLP matmul (2048 x 768 outputs) takes 64 x 64
    // tiles (768 blocks), not 128 x 64 (192), and so needs no split-K.
    TemplateParams out = defaultParams(lower(gemmWithoutEpilogue(2048, 768, 3072)));
    QCOMPARE(out.at("block_m"), int64_t(64));
    QCOMPARE(out.at("block_n"), int64_t(64));
    QCOMPARE(out.at("mma"), int64_t(0));
  }
  // split_k's default (0) is the template's choice: a long reduction over few tiles is split, into the fewest parts
  // giving 4 blocks an SM; a short one, or one whose tiles fill the GPU, is not; a form without split-K keeps one
  // part, so changing the form needs no split_k (measured over ResNet-50's gemms: template_gemm.cpp pickSplitK).
  void defaultSplitKForLongReductionsOnly() {
    QCOMPARE(defaultParams(lower(gemmWithoutEpilogue(512, 49, 2048))).at("split_k"), int64_t(0));
    auto splitOf = [](const Case& c, const TemplateParams& p) {
      std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
      const std::string workspace = "acc0_parts: global f32[";  // [parts, ...]: the partial sums of each part
      const size_t at = t.find(workspace);
      return at == std::string::npos ? int64_t(1) : int64_t(std::stoll(t.substr(at + workspace.size())));
    };
    QCOMPARE(splitOf(gemmWithoutEpilogue(512, 49, 2048), {}), int64_t(8));  // 128 tiles of 16 x 16: 8 parts make 1024 blocks
    QCOMPARE(splitOf(gemmWithoutEpilogue(2048, 49, 512), {}), int64_t(1));  // 32 k steps: one part
    QCOMPARE(splitOf(gemmWithoutEpilogue(512, 49, 2048), {{"shared", 0}}), int64_t(1));  // no split-K form: one part
    Kernel k = lower(gemmWithoutEpilogue(64, 16, 1024));  // the default schedule, split, agrees with the reference
    TracedSchedule s(k);
    applyTemplate(s, {});
    QCOMPARE(agreesWithReference(gemmWithoutEpilogue(64, 16, 1024).graph, k), std::string());
  }
  void warpTilesAndSharedAreExclusive() {
    Kernel k = lower(gemm(64, 64, 16));
    TracedSchedule s(k);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"warp_m", 32}, {"warp_n", 32}, {"shared", 1}}); }, "warp_m", "exclusive"));
    Kernel k2 = lower(gemm(128, 128, 16));
    TracedSchedule s2(k2);
    QVERIFY(failsNaming([&] { applyTemplate(s2, {{"block_m", 128}, {"block_n", 128}, {"thread_m", 1}, {"thread_n", 2}}); },
                        "thread_m", "a block of 8192 threads exceeds 1024"));
  }
  // Every (block, thread) combination of the space with shared tiles, on a shape no tile divides, with the
  // block_k and stages candidates in turn (pipelined where the k steps and shared memory allow).
  void everySharedPointIsCorrectOrRefused() {
    Case c = gemm(40, 24, 20);
    Kernel plain = lower(c);
    std::map<std::string, std::vector<int64_t>> space;
    for (const TemplateParam& p : parameterSpace(plain)) space[p.name] = p.candidates;
    int scheduled = 0, refused = 0, pipelined = 0, n = 0;
    for (int64_t bm : space["block_m"])
      for (int64_t bn : space["block_n"])
        for (int64_t tm : space["thread_m"])
          for (int64_t tn : space["thread_n"]) {
            int64_t bk = space["block_k"][size_t(n) % space["block_k"].size()];
            int64_t stages = space["stages"][size_t(n++ / 3) % space["stages"].size()];
            Kernel k = lower(c);
            TracedSchedule s(k);
            try {
              applyTemplate(s, {{"block_m", bm}, {"block_n", bn}, {"block_k", bk}, {"thread_m", tm}, {"thread_n", tn},
                                {"column_run", space["column_run"][size_t(n / 7) % space["column_run"].size()]},
                                {"warp_m", 0}, {"warp_n", 0}, {"shared", 1}, {"stages", stages}});
            } catch (const ScheduleError&) {
              ++refused;
              continue;
            }
            std::string why = interpretedInSweep(scheduled) ? agreesWithReference(c.graph, k) : "";
            QVERIFY2(why.empty(), (std::to_string(bm) + "x" + std::to_string(bn) + "/" + std::to_string(tm) + "x" +
                                   std::to_string(tn) + " k " + std::to_string(bk) + " stages " + std::to_string(stages) +
                                   ": " + why).c_str());
            pipelined += printKernel(k).find(" pipeline(") != std::string::npos;
            ++scheduled;
          }
    qInfo() << scheduled << "scheduled and checked," << pipelined << "of them pipelined," << refused << "refused";
    QVERIFY(scheduled >= 200);
    QVERIFY(pipelined >= 40);
  }
  void mmaTemplateForm() {
    Case c = gemmWithoutEpilogue(64, 64, 64, DType::BF16);
    TemplateParams d = defaultParams(lower(c));
    QCOMPARE(d.at("mma"), int64_t(1));
    QCOMPARE(d.at("block_k"), int64_t(32));
    const TemplateParams p = {{"block_m", 64}, {"block_n", 64}, {"warp_m", 32}, {"warp_n", 32}, {"block_k", 32}};
    std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
    // 2 x 2 warps; each warp 2 x 4 tiles of 16 x 8 on the mma lanes; two 16-deep mma steps per k tile.
    QVERIFY(has(t, "tmp acc0: register f32[2, 2, 2, 4, 16, 8, 1]"));
    QVERIFY(has(t, "bind(threadIdx.z) {"));
    QVERIFY(has(t, "for i_i_i_o in 0..2 unrolled {\n                for j_i_i_o in 0..4 unrolled {\n"
                   "                  for i_i_i_i in 0..16 bind(mma.row) {\n                    for j_i_i_i in 0..8 bind(mma.col) {\n"
                   "                      for k_i_i in 0..16 unrolled reduce {"));
    Kernel k = lower(c);
    TracedSchedule s(k);
    applyTemplate(s, p);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  void paddedCacheRoundTrip() {
    Case c = gemm(40, 24, 20);
    auto steps = [](TracedSchedule& s) {
      s.tile({"i", "j"}, {16, 8});
      s.split("k", 8);
      s.hoistReduction("k_o", "j_o");
      s.cacheRead("k_o", "in0", MemScope::Shared, 4);
    };
    std::string t = roundTrip(c, steps);
    QVERIFY(has(t, "tmp in0_shared: shared f32[16, 12]  # read cache of in0, rows padded by 4"));
    Kernel k = lower(c);
    TracedSchedule s(k);
    steps(s);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
    QVERIFY(failsNaming([&] { sched::cacheRead(k, "k_o", "in1", MemScope::Shared, "", 65); }, "k_o", "pad 65 must be between 0 and 64"));
    // Rows added to a plane (pad_rows): replayed, equal to the reference, and a padded cache takes no other
    // storage layout (swizzle, deinterleave, permute refuse it).
    auto rows = [](TracedSchedule& s) {
      s.tile({"i", "j"}, {16, 8});
      s.split("k", 8);
      s.hoistReduction("k_o", "j_o");
      s.cacheRead("k_o", "in0", MemScope::Shared, 0, 3);
    };
    QVERIFY(has(roundTrip(c, rows), "tmp in0_shared: shared f32[19, 8]  # read cache of in0, 3 rows of padding a plane"));
    Kernel r = lower(c);
    TracedSchedule rs(r);
    rows(rs);
    QCOMPARE(agreesWithReference(c.graph, r), std::string());
    QVERIFY(failsNaming([&] { sched::permute(r, "in0_shared", {1, 0}); }, "in0_shared", "already has a storage layout (padded)"));
    QVERIFY(failsNaming([&] { sched::swizzle(r, "in0_shared", 128); }, "in0_shared", "is padded"));
    QVERIFY(failsNaming([&] { sched::cacheRead(r, "k_o", "in1", MemScope::Shared, "", 0, 65); }, "k_o", "pad_rows 65 must be between 0 and 64"));
    QVERIFY(failsNaming([&] { sched::cacheRead(r, "k_o", "in1", MemScope::Shared, "", 0, 0, 17); }, "k_o", "align 17 must be 0 or between 2 and 16"));
  }
  void mmaNeedsSixteenBitOperandsAndShapes() {
    Kernel f32 = lower(gemmWithoutEpilogue(64, 64, 64));
    TracedSchedule s(f32);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"mma", 1}, {"warp_m", 32}, {"warp_n", 32}}); }, "mma", "f16 or bf16"));
    Kernel bf = lower(gemmWithoutEpilogue(64, 64, 64, DType::BF16));
    TracedSchedule b(bf);
    QVERIFY(failsNaming([&] { applyTemplate(b, {{"block_k", 8}}); }, "block_k", "multiple of 16"));
    QVERIFY(failsNaming([&] { applyTemplate(b, {{"warp_m", 0}}); }, "warp_m", "multiple of 16"));
  }
  // tf32 = 1: the f32 operands' tensor-core form, off by default; refused without mma, on 16-bit operands, and
  // with a k tile that is not whole 8-deep steps.
  void tf32IsAnF32MmaChoice() {
    Case c = gemmWithoutEpilogue(64, 64, 64);
    QCOMPARE(defaultParams(lower(c)).at("tf32"), int64_t(0));
    QCOMPARE(defaultParams(lower(gemmWithoutEpilogue(64, 64, 64, DType::BF16))).at("tf32"), int64_t(0));
    const TemplateParams mma = {{"mma", 1}, {"tf32", 1}, {"warp_m", 32}, {"warp_n", 32}, {"block_k", 16}};
    Kernel noMma = lower(c);
    TracedSchedule s(noMma);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"tf32", 1}}); }, "tf32", "set mma = 1"));
    Kernel bf = lower(gemmWithoutEpilogue(64, 64, 64, DType::BF16));
    TracedSchedule b(bf);
    QVERIFY(failsNaming([&] { applyTemplate(b, mma); }, "tf32", "not f32"));
    Kernel shallow = lower(c);
    TracedSchedule k4(shallow);
    TemplateParams p = mma;
    p["block_k"] = 4;
    QVERIFY(failsNaming([&] { applyTemplate(k4, p); }, "block_k", "multiple of 8"));
    // The form: 8-deep mma steps (m16n8k8), the choice recorded in the kernel's parameters for the generator.
    std::string t = roundTrip(c, [&](TracedSchedule& sched) { applyTemplate(sched, mma); });
    QVERIFY(has(t, "param tf32 = 1"));
    QVERIFY(has(t, "for i_i_i_i in 0..16 bind(mma.row) {\n                    for j_i_i_i in 0..8 bind(mma.col) {\n"
                   "                      for k_i_i in 0..8 unrolled reduce {"));
    Kernel k = lower(c);
    TracedSchedule sched(k);
    applyTemplate(sched, mma);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  // store_tile = 1: the epilogue writes the block's tile into shared memory; after a barrier each thread copies
  // 8 consecutive bf16 (16 bytes) of it out, a vectorized loop, or, where edge tiles guard the lanes, an
  // unrolled one. Correct on both; refused without the tensor-core form.
  void storeTileGoesThroughShared() {
    const TemplateParams p = {{"block_m", 64}, {"block_n", 32}, {"warp_m", 32}, {"warp_n", 16}, {"block_k", 16},
                              {"mma", 1}, {"store_tile", 1}};
    for (auto [m, vectorized] : {std::pair{128, true}, std::pair{72, false}}) {
      Case c = gemmWithoutEpilogue(m, m == 128 ? 64 : 40, 32, DType::BF16);
      std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
      QVERIFY(has(t, "tmp out0_shared: shared bf16[64, 32]"));
      QCOMPARE(t.find(" in 0..8 vectorized {") != std::string::npos, vectorized);
      Kernel k = lower(c);
      TracedSchedule s(k);
      applyTemplate(s, p);
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
    }
    Kernel f32 = lower(gemm(64, 64, 16));
    TracedSchedule s2(f32);
    QVERIFY(failsNaming([&] { applyTemplate(s2, {{"store_tile", 1}}); }, "store_tile", "set mma = 1"));
  }
  // split_k: a tile's reduction over several blocks, in the shared form (f32, 16 rows, the bias and ReLU in the
  // epilogue) and the mma form (bf16): two phases, equal to the reference, compiled by NVRTC for sm_90; refused
  // with the output tile through shared memory, and where the parts do not divide the steps.
  void splitKSpreadsTheReduction() {
    const TemplateParams shared = {{"block_m", 16}, {"block_n", 32}, {"block_k", 16}, {"shared", 1}, {"mma", 0}, {"split_k", 4}};
    const TemplateParams mma = {{"block_m", 32}, {"block_n", 32}, {"warp_m", 16}, {"warp_n", 16}, {"block_k", 32}, {"mma", 1},
                                {"wgmma", 0}, {"tma", 0}, {"store_tile", 0}, {"split_k", 2}};
    for (const auto& [c, params] : {std::pair{gemm(16, 64, 512), shared}, std::pair{gemmWithoutEpilogue(32, 64, 256, DType::BF16), mma}}) {
      const TemplateParams& p = params;  // a structured binding cannot be captured by a lambda in C++20 under clang 14
      std::string t = roundTrip(c, [&](TracedSchedule& s) { applyTemplate(s, p); });
      QVERIFY(has(t, "sync grid"));
      QVERIFY(has(t, "acc0_parts"));
      Kernel k = lower(c);
      TracedSchedule s(k);
      applyTemplate(s, p);
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
      codegen::GeneratedKernel g = codegen::generateCuda(k);
      QCOMPARE(g.phases, 2);
      QCOMPARE(nvrtcError(g.source), std::string());
    }
    Kernel odd = lower(gemm(16, 64, 512));
    TracedSchedule s(odd);
    TemplateParams three = shared;
    three["split_k"] = 3;
    QVERIFY(failsNaming([&] { applyTemplate(s, three); }, "split_k", "3 parts do not divide the 32 k steps"));
    Kernel tile = lower(gemmWithoutEpilogue(32, 64, 256, DType::BF16));
    TracedSchedule st(tile);
    TemplateParams stored = mma;
    stored["store_tile"] = 1;
    QVERIFY(failsNaming([&] { applyTemplate(st, stored); }, "split_k", "store_tile = 0"));
  }
  // Every point of the mma form's space on a bf16 shape no tile divides, and of its tf32 form on f32: correct
  // (the interpreter runs in double: tf32's rounding is the code generator's), or refused.
  void everyMmaPointIsCorrectOrRefused_data() {
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("tf32");
    QTest::newRow("bf16") << int(DType::BF16) << 0;
    QTest::newRow("f32 tf32") << int(DType::F32) << 1;
  }
  void everyMmaPointIsCorrectOrRefused() {
    QFETCH(int, dtype);
    QFETCH(int, tf32);
    Case c = gemmWithoutEpilogue(48, 40, 32, DType(dtype));
    std::map<std::string, std::vector<int64_t>> space;
    for (const TemplateParam& p : parameterSpace(lower(c))) space[p.name] = p.candidates;
    int scheduled = 0, refused = 0, pipelined = 0, n = 0;
    for (int64_t bm : space["block_m"])
      for (int64_t bn : space["block_n"])
        for (int64_t wm : space["warp_m"])
          for (int64_t wn : space["warp_n"]) {
            {
              int64_t bk = space["block_k"][size_t(n) % space["block_k"].size()];
              int64_t stages = space["stages"][size_t(n++ / 5) % space["stages"].size()];
              Kernel k = lower(c);
              TracedSchedule s(k);
              try {
                applyTemplate(s, {{"block_m", bm}, {"block_n", bn}, {"block_k", bk}, {"warp_m", wm}, {"warp_n", wn},
                                  {"mma", 1}, {"tf32", tf32}, {"stages", stages}});
              } catch (const ScheduleError&) {
                ++refused;
                continue;
              }
              std::string why = interpretedInSweep(scheduled) ? agreesWithReference(c.graph, k) : "";
              QVERIFY2(why.empty(), (std::to_string(bm) + "x" + std::to_string(bn) + " warps " + std::to_string(wm) + "x" +
                                     std::to_string(wn) + " k " + std::to_string(bk) + " stages " + std::to_string(stages) +
                                     ": " + why).c_str());
              ++scheduled;
              pipelined += printKernel(k).find(" pipeline(") != std::string::npos;
            }
          }
    qInfo() << scheduled << "scheduled and checked," << pipelined << "of them pipelined," << refused << "refused";
    QVERIFY(scheduled >= 40);
    QVERIFY(pipelined >= 10);
  }
};

QTEST_APPLESS_MAIN(TestGemm)
#include "test_gemm.moc"
