// Every primitive: a round trip (apply, save JSON, replay on a fresh lowering, compare printed IR) with the
// expected IR fragments, and its precondition failures naming the loop at fault.
#include <QtTest>

#include "kernel/launch.h"
#include "reference_check.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {
size_t at(const std::string& text, const std::string& fragment) { return text.find(fragment); }

// `trace` replayed on a fresh lowering of `c`, run by the kernel interpreter against the reference: "" when
// they agree, else why.
std::string replayAgrees(const Case& c, const Trace& trace) {
  Kernel k = lower(c);
  replay(k, trace);
  return agreesWithReference(c.graph, k);
}
}  // namespace

class TestSchedule : public QObject {
  Q_OBJECT
 private slots:
  // ---- round trips
  void splitDivisible() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) {
      auto out = s.split("i1", 4);
      QCOMPARE(out, (std::vector<std::string>{"i1_o", "i1_i"}));
    });
    QVERIFY(has(t, "for i1_o in 0..2 {"));
    QVERIFY(has(t, "for i1_i in 0..4 {"));
    QVERIFY(has(t, "v0: f32 = in0[i0, i1_o * 4 + i1_i] * in0[i0, i1_o * 4 + i1_i]  # mul"));
    QVERIFY(t.find("if ") == std::string::npos);
  }
  void splitGuarded() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) { s.split("i1", 3); });
    QVERIFY(has(t, "for i1_o in 0..3 {"));
    QVERIFY(has(t, "if i1_o * 3 + i1_i < 8 {"));
  }
  void tileGemm() {
    std::string t = roundTrip(gemm(), [](TracedSchedule& s) {
      auto out = s.tile({"i", "j"}, {32, 16});
      QCOMPARE(out, (std::vector<std::string>{"i_o", "j_o", "i_i", "j_i"}));
    });
    QVERIFY(has(t, "for i_o in 0..2 {"));
    QVERIFY(has(t, "for j_o in 0..4 {"));
    QVERIFY(at(t, "for j_o") < at(t, "for i_i in 0..32"));
    QVERIFY(at(t, "for i_i in 0..32") < at(t, "for j_i in 0..16"));
    QVERIFY(has(t, "out0[i_o * 32 + i_i, j_o * 16 + j_i] = v2  # relu"));
  }
  void reorder() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) { s.reorder({"i1", "i0"}); });
    QVERIFY(at(t, "for i1 in 0..8 {") < at(t, "for i0 in 0..4 {"));
  }
  void reorderSinksGuards() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) {
      s.split("i0", 3);
      s.reorder({"i1", "i0_o"});
    });
    // i1 moved outermost; the split's guard now sits inside the innermost loop.
    QVERIFY(at(t, "for i1 in 0..8") < at(t, "for i0_o in 0..2"));
    QVERIFY(at(t, "for i0_i in 0..3") < at(t, "if i0_o * 3 + i0_i < 4 {"));
  }
  void fuse() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) { QCOMPARE(s.fuse("i0", "i1"), std::string("i0_i1")); });
    QVERIFY(has(t, "for i0_i1 in 0..32 {"));
    QVERIFY(has(t, "out0[i0_i1 / 8, i0_i1 % 8] = v2"));
    QVERIFY(has(t, "in1[i0_i1 % 8]"));
  }
  void vectorize() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) {
      s.split("i1", 4);
      s.vectorize("i1_i");
    });
    QVERIFY(has(t, "for i1_i in 0..4 vectorized {"));
    // A reduction loop's lanes accumulate in order (every backend keeps the order), so it may be vectorized.
    std::string r = roundTrip(softmax(), [](TracedSchedule& s) {
      s.split("k0", 4);
      s.vectorize("k0_i");
    });
    QVERIFY(has(r, "for k0_o in 0..16 reduce {\n      for k0_i in 0..4 vectorized reduce {\n"));
  }
  void unroll() {
    std::string t = roundTrip(gemm(), [](TracedSchedule& s) { s.unroll("k"); });
    QVERIFY(has(t, "for k in 0..32 unrolled reduce {"));
  }
  void parallel() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) { s.parallel("i0"); });
    QVERIFY(has(t, "for i0 in 0..4 parallel {"));
  }
  void bind() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) {
      s.bind("i0", ThreadTag::BlockX);
      s.bind("i1", ThreadTag::ThreadX);
    });
    QVERIFY(has(t, "for i0 in 0..4 bind(blockIdx.x) {"));
    QVERIFY(has(t, "for i1 in 0..8 bind(threadIdx.x) {"));
  }
  void bindWarp() {
    std::string t = roundTrip(softmax(4, 256), [](TracedSchedule& s) {
      s.bind("i0", ThreadTag::BlockX);
      auto parts = s.split("j", 32);
      s.bind(parts[0], ThreadTag::Warp);
      s.bind(parts[1], ThreadTag::ThreadX);
    });
    QVERIFY(has(t, "for j_o in 0..8 bind(warp) {"));
    QVERIFY(has(t, "for j_i in 0..32 bind(threadIdx.x) {"));
  }
  void cacheRead() {
    std::string t = roundTrip(transpose(), [](TracedSchedule& s) {
      s.tile({"i0", "i1"}, {32, 32});
      auto out = s.cacheRead("i1_o", "in0", MemScope::Shared);
      QCOMPARE(out, (std::vector<std::string>{"in0_shared", "in0_shared_ax0", "in0_shared_ax1"}));
    });
    QVERIFY(has(t, "tmp in0_shared: shared f32[32, 32]  # read cache of in0"));
    QVERIFY(has(t, "in0_shared[in0_shared_ax0, in0_shared_ax1] = in0[i1_o * 32 + in0_shared_ax0, i0_o * 32 + in0_shared_ax1]"));
    QVERIFY(has(t, "v0: f32 = in0_shared[i1_i, i0_i]  # transpose"));
    QVERIFY(at(t, "alloc in0_shared") < at(t, "sync block"));
    QVERIFY(at(t, "sync block") < at(t, "for i0_i in 0..32"));
  }
  void cacheReadGuardsPartialTiles() {
    std::string t = roundTrip(transpose(40, 40), [](TracedSchedule& s) {
      s.tile({"i0", "i1"}, {32, 32});
      s.cacheRead("i1_o", "in0", MemScope::Shared);
    });
    QVERIFY(has(t, "if i1_o * 32 + in0_shared_ax0 < 40 && i0_o * 32 + in0_shared_ax1 < 40 {"));
  }
  void cacheReadRegister() {
    std::string t = roundTrip(gemm(), [](TracedSchedule& s) {
      s.split("k", 8);
      s.cacheRead("k_o", "in0", MemScope::Register);
    });
    QVERIFY(has(t, "tmp in0_local: register f32[1, 8]  # read cache of in0"));
    QVERIFY(has(t, "acc0[0] sum= in0_local[0, k_i] * in1[k_o * 8 + k_i, j]"));
  }
  void onlineSoftmax() {
    std::string t = roundTrip(softmax(4, 64), [](TracedSchedule& s) { QCOMPARE(s.onlineSoftmax("k0"), std::vector<std::string>{"acc0_pair"}); });
    QVERIFY(has(t, "tmp acc0_pair: register f32[2]\n"));
    QVERIFY(has(t, "    acc0_pair[0] = -inf  # softmax\n    acc0_pair[1] = 0.0  # softmax\n"
                   "    for k0 in 0..64 reduce {\n      acc0_pair[0] maxsumexp= in0[i0, k0]  # softmax\n    }\n"));
    QVERIFY(!has(t, "for k1 ") && !has(t, "acc1"));
    QVERIFY(has(t, "exp(in0[i0, j] - acc0_pair[0])"));
  }
  void keepInRegisters() {
    std::string t = roundTrip(softmax(4, 64), [](TracedSchedule& s) {
      s.bind("i0", ThreadTag::BlockX);
      for (const char* l : {"k0", "k1", "j"}) s.bind(s.split(l, 32)[1], ThreadTag::ThreadX);
      s.keepInRegisters("i0", "in0");
    });
    QVERIFY(has(t, "tmp in0_regs: register f32[2, 32]  # read cache of in0, by iteration\n"));
    QVERIFY(has(t, "    alloc in0_regs  # softmax\n    for in0_regs_ax0 in 0..2 {\n      for in0_regs_ax1 in 0..32 bind(threadIdx.x) {\n"
                   "        in0_regs[in0_regs_ax0, in0_regs_ax1] = in0[i0, in0_regs_ax0 * 32 + in0_regs_ax1]  # softmax\n"));
    QVERIFY(has(t, "acc0[0] max= in0_regs[k0_o, k0_i]"));
    QVERIFY(has(t, "exp(in0_regs[k1_o, k1_i] - acc0[0])"));
    QVERIFY(has(t, "exp(in0_regs[j_o, j_i] - acc0[0])"));
  }
  void splitReduction() {
    std::string t = roundTrip(softmax(2, 64), [](TracedSchedule& s) {
      QCOMPARE(s.splitReduction("i0", 4), (std::vector<std::string>{"i0", "part0", "i0_1", "part1", "i0_2", "part2", "ws0", "ws1"}));
    });
    QVERIFY(has(t, "tmp ws0: global f32[2, 4, 1]\n  tmp ws1: global f32[2, 4, 1]\n  alloc ws0\n  alloc ws1\n"));
    // Phase 0: the max over part0's 16 columns, to the workspace.
    QVERIFY(has(t, "  for i0 in 0..2 {\n    for part0 in 0..4 {\n      alloc acc0  # softmax\n      acc0[0] = -inf  # softmax\n"
                   "      for k0 in 0..16 reduce {\n        acc0[0] max= in0[i0, part0 * 16 + k0]  # softmax\n      }\n"
                   "      ws0[i0, part0, 0] = acc0[0]  # softmax\n    }\n  }\n  sync grid\n"));
    // Phase 1: the parts' maxima combined, then the sum over part1's columns.
    QVERIFY(has(t, "      for ws0_part in 0..4 reduce {\n        acc0[0] max= ws0[i0_1, ws0_part, 0]  # softmax\n      }\n"));
    QVERIFY(has(t, "acc1[0] sum= exp(in0[i0_1, part1 * 16 + k1] - acc0[0])"));
    // Phase 2: both combined, the outputs of part2's columns.
    QVERIFY(has(t, "        out0[i0_2, part2 * 16 + j] = v1  # softmax\n"));
  }
  // split-K: a gemm's k loop over 2 blocks; phase 0 stores each part's sums, phase 1 adds them in the epilogue.
  void splitK() {
    std::string t = roundTrip(gemm(4, 8, 32), [](TracedSchedule& s) {
      s.bind("i", ThreadTag::BlockY);
      s.bind("j", ThreadTag::BlockX);
      QCOMPARE(s.splitK("k", 2), (std::vector<std::string>{"k_part", "acc0_parts"}));
    });
    QVERIFY(has(t, "tmp acc0_parts: global f32[2, 4, 8, 1]"));
    QVERIFY(has(t, "  alloc acc0_parts\n  for k_part in 0..2 bind(blockIdx.z) {\n"));
    QVERIFY(has(t, "for k in 0..16 reduce {"));
    QVERIFY(has(t, "in0[i, k_part * 16 + k]"));
    QVERIFY(has(t, "acc0_parts[k_part, i, j, 0] = acc0[0]"));
    QVERIFY(has(t, "  sync grid\n  for i_sum in 0..4 bind(blockIdx.y) {\n    for j_sum in 0..8 bind(blockIdx.x) {\n"));
    QVERIFY(has(t, "acc0_parts[0, i_sum, j_sum, 0] + acc0_parts[1, i_sum, j_sum, 0]"));
    QCOMPARE(count(t, "out0["), size_t(1));  // the output written once, by phase 1
  }
  void cacheWrite() {
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) {
      auto out = s.cacheWrite("i0", "out0", MemScope::Register);
      QCOMPARE(out, (std::vector<std::string>{"out0_local", "out0_local_ax0", "out0_local_ax1"}));
    });
    QVERIFY(has(t, "tmp out0_local: register f32[1, 8]  # write cache of out0"));
    QVERIFY(has(t, "out0_local[0, i1] = v2  # relu"));
    QVERIFY(has(t, "out0[i0 + out0_local_ax0, out0_local_ax1] = out0_local[out0_local_ax0, out0_local_ax1]"));
    QVERIFY(at(t, "out0_local[0, i1] = v2") < at(t, "out0[i0 + out0_local_ax0"));
  }
  void computeAt() {
    std::string t = roundTrip(transpose(), [](TracedSchedule& s) {
      s.tile({"i0", "i1"}, {32, 32});
      s.cacheRead("i1_o", "in0", MemScope::Shared);
      auto out = s.computeAt("in0_shared", "i0_i");
      QCOMPARE(out, (std::vector<std::string>{"in0_shared", "in0_shared_ax0", "in0_shared_ax1"}));
    });
    QVERIFY(has(t, "tmp in0_shared: shared f32[32, 1]  # read cache of in0"));
    QVERIFY(at(t, "for i0_i in 0..32") < at(t, "alloc in0_shared"));
    QVERIFY(has(t, "= in0[i1_o * 32 + in0_shared_ax0, i0_o * 32 + i0_i + in0_shared_ax1]"));
    QVERIFY(t.find("alloc in0_shared") == t.rfind("alloc in0_shared"));  // moved, not copied
  }
  void pipeline() {
    std::string t = roundTrip(softmax(4, 64), [](TracedSchedule& s) {
      s.split("k0", 16);
      s.cacheRead("k0_o", "in0", MemScope::Shared);
      s.pipeline("k0_o", 3);
    });
    QVERIFY(has(t, "for k0_o in 0..4 reduce pipeline(3) {"));
    QVERIFY(has(t, "in0_shared[in0_shared_ax0, in0_shared_ax1] <- async in0[i0 + in0_shared_ax0, k0_o * 16 + in0_shared_ax1]"));
    QVERIFY(at(t, "<- async") < at(t, "pipeline commit"));
    QVERIFY(at(t, "pipeline commit") < at(t, "pipeline wait(2)"));
    QVERIFY(at(t, "pipeline wait(2)") < at(t, "sync block"));
    // Two caches filled at one loop: one commit and wait after both fills (the allocation between them is part
    // of the run of fills).
    std::string two = roundTrip(gemm(32, 16, 32), [](TracedSchedule& s) {
      s.tile({"i", "j"}, {16, 8});
      s.split("k", 8);
      s.hoistReduction("k_o", "j_o");
      s.cacheRead("k_o", "in0", MemScope::Shared);
      s.cacheRead("k_o", "in1", MemScope::Shared);
      s.pipeline("k_o", 2);
    });
    QCOMPARE(two.find("pipeline commit"), two.rfind("pipeline commit"));
    QVERIFY(two.rfind("<- async") < at(two, "pipeline commit"));
  }
  // 13 rows in 16-row tiles: the accumulation reads a cache (whose box spans the tile), so overcompute drops
  // its guard and the init's; the stores keep theirs. Reading x itself at the guarded row, only the init's goes,
// and a guard around stores to memory stays.
  void overcomputeTileOverhang() {
    Case c = gemm(13, 16, 32);
    auto tiles = [](TracedSchedule& s) {
      s.tile({"i", "j"}, {16, 8});
      s.hoistReduction("k", "j_o");
    };
    Kernel direct = lower(c);  // x read at the guarded row: only the accumulators' initialization is unguarded
    TracedSchedule sd(direct);
    tiles(sd);
    sd.overcompute("j_o");
    std::string kept = printKernel(direct);
    QVERIFY2(at(kept, "if ") < at(kept, "j_i_epi") && at(kept, "if ") > at(kept, "for k "), kept.c_str());
    Kernel stores = lower(pointwise());  // a guard around stores to memory
    sched::split(stores, "i1", 16);
    QVERIFY(failsNaming([&] { sched::overcompute(stores, "i0"); }, "i0", "step 2: no guard inside only leaves out work on registers"));
    Trace trace;
    std::string t = roundTrip(c, [&](TracedSchedule& s) {
      tiles(s);
      s.cacheRead("j_o", "in0", MemScope::Shared);
      s.overcompute("j_o");
      s.vectorize("j_i");  // refused while the accumulation was guarded
    }, &trace);
    std::string accumulation = t.substr(at(t, "alloc acc0"), at(t, "j_i_epi") - at(t, "alloc acc0"));
    QVERIFY2(!has(accumulation, "if ") && has(accumulation, "vectorized"), t.c_str());
    QVERIFY2(t.find("if ", at(t, "j_i_epi")) != std::string::npos, t.c_str());  // the stores keep their guard
    QCOMPARE(replayAgrees(c, trace), std::string());
  }
  // A loop whose body is an overhanging tile's guard: whole tiles take an unguarded copy (which, innermost,
  // may be vectorized), the last tile the guarded loop.
  void versionWholeTiles() {
    Case c = gemm(13, 16, 32);
    Trace trace;
    std::string t = roundTrip(c, [&](TracedSchedule& s) {
      s.split("i", 8);  // 13 rows: the second tile overhangs
      QCOMPARE(s.version("i_i"), std::string("i_i_whole"));
    }, &trace);
    QVERIFY(has(t, "if i_o * 8 + 7 < 13 {"));
    QVERIFY(has(t, "for i_i_whole in 0..8 {"));
    QVERIFY(has(t, "if not(i_o * 8 + 7 < 13) {"));
    QVERIFY(at(t, "if not(") < at(t, "if i_o * 8 + i_i < 13 {"));  // the guarded loop, for the last tile
    QCOMPARE(replayAgrees(c, trace), std::string());
    Kernel plain = lower(c);  // no guard in the body
    QVERIFY(failsNaming([&] { sched::version(plain, "j"); }, "j", "step 3: its body is not one guarded statement"));
  }
  // A stride-2 read of a cache stored by phase reads consecutive elements: x[2*j + 1] is phase 1, element j.
  void deinterleaveByPhase() {
    Case c = gemm(16, 16, 32);
    Trace trace;
    std::string t = roundTrip(c, [&](TracedSchedule& s) {
      s.cacheRead("i", "in0", MemScope::Shared);
      s.deinterleave("in0_shared", 2);
    }, &trace);
    QVERIFY(has(t, "tmp in0_shared: shared f32[1, 32]"));
    QVERIFY(has(t, "in0_shared[0, k % 2 * 16 + k / 2]"));
    QCOMPARE(replayAgrees(c, trace), std::string());
    Kernel odd = lower(gemm(16, 16, 31));  // 31 columns: two phases of 16, the last one short
    sched::cacheRead(odd, "i", "in0", MemScope::Shared);
    sched::deinterleave(odd, "in0_shared", 2);
    QCOMPARE(agreesWithReference(gemm(16, 16, 31).graph, odd), std::string());
    QVERIFY(failsNaming([&] { sched::deinterleave(odd, "in1", 2); }, "in1", "step 2: 'in1' is not a cache"));
    QVERIFY(failsNaming([&] { sched::deinterleave(odd, "in0_shared", 17); }, "in0_shared", "step 3"));
  }
  // An input stored packed: B [8, 32] in blocks of 16 along its columns is [8, 2, 16], read at in1[k, j_o, j_i]
  // once j is split by 16 (the divisions simplified); the interpreter packs the value, so the results agree.
  void packInputInBlocks() {
    Case c = gemm(16, 32, 8);
    Trace trace;
    std::string t = roundTrip(c, [&](TracedSchedule& s) {
      s.split("j", 16);
      s.pack("in1", 1, 16);
    }, &trace);
    QVERIFY2(has(t, "in  in1: global f32[8, 2, 16]"), t.c_str());
    QVERIFY2(has(t, "of shape [8, 32], packed in blocks of 16 along axis 1"), t.c_str());
    QVERIFY2(has(t, "in1[k, j_o, j_i]"), t.c_str());
    QCOMPARE(replayAgrees(c, trace), std::string());
    Kernel k = lower(c);
    QVERIFY(failsNaming([&] { sched::pack(k, "out0", 0, 2); }, "out0", "step 2"));
    QVERIFY(failsNaming([&] { sched::pack(k, "in1", 2, 2); }, "in1", "step 4"));
    QVERIFY(failsNaming([&] { sched::pack(k, "in1", 1, 5); }, "in1", "step 5"));
    sched::pack(k, "in1", 0, 4);  // unsplit: in1[k / 4, j, k % 4]
    QVERIFY(failsNaming([&] { sched::pack(k, "in1", 1, 2); }, "in1", "step 3"));
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  // A cache's axes in another order: every access follows, the values do not change.
  void permuteCacheAxes() {
    Case c = gemm(16, 16, 32);
    Trace trace;
    std::string t = roundTrip(c, [&](TracedSchedule& s) {
      s.cacheRead("i", "in0", MemScope::Shared);
      s.permute("in0_shared", {1, 0});
    }, &trace);
    QVERIFY(has(t, "tmp in0_shared: shared f32[32, 1]"));
    QVERIFY(has(t, "in0_shared[k, 0]"));
    QCOMPARE(replayAgrees(c, trace), std::string());
    Kernel k = lower(c);
    replay(k, trace);
    QVERIFY(failsNaming([&] { sched::permute(k, "in0_shared", {0, 0}); }, "in0_shared", "step 3: the axes are not a permutation"));
    QVERIFY(failsNaming([&] { sched::permute(k, "in1", {1, 0}); }, "in1", "step 2: 'in1' is not a cache"));
  }
  void setParam() {
    Trace trace;
    std::string t = roundTrip(pointwise(), [](TracedSchedule& s) { QCOMPARE(s.setParam("block_size", 128), int64_t(128)); }, &trace);
    QVERIFY(has(t, "param block_size = 128"));
    QCOMPARE(trace.instructions.at(0).decision.get<int64_t>(), int64_t(128));
  }

  // ---- the trace itself
  void traceJsonShape() {
    Trace trace;
    roundTrip(pointwise(), [](TracedSchedule& s) { s.split("i1", 4); }, &trace);
    nlohmann::json j = nlohmann::json::parse(trace.save());
    QCOMPARE(j["format"].get<std::string>(), std::string("tessera-trace"));
    const auto& ins = j["instructions"][0];
    QCOMPARE(ins["kind"].get<std::string>(), std::string("split"));
    QCOMPARE(ins["inputs"][0].get<std::string>(), std::string("i1"));
    QCOMPARE(ins["attrs"]["factor"].get<int64_t>(), int64_t(4));
    QCOMPARE(ins["outputs"][1].get<std::string>(), std::string("i1_i"));
    QVERIFY(ins["decision"].is_null());
  }
  void replaySwapsDecision() {
    Trace trace;
    roundTrip(pointwise(), [](TracedSchedule& s) { s.setParam("vector_width", 4); }, &trace);
    trace.instructions[0].decision = 2;
    Kernel k = lower(pointwise());
    replay(k, trace);
    QCOMPARE(k.params.at("vector_width"), int64_t(2));
  }
  void replayOnOtherKernelFails() {
    Trace trace;
    roundTrip(pointwise(), [](TracedSchedule& s) { s.fuse("i0", "i1"); }, &trace);
    Kernel other = lower(gemm());
    QVERIFY(failsNaming([&] { replay(other, trace); }, "i0", "no loop named 'i0'"));
  }
  void malformedTraces() {
    auto fails = [](const std::string& text, const std::string& fragment) {
      try {
        Kernel k = lower(pointwise());
        replay(k, Trace::load(text));
      } catch (const ScheduleError&) {
        return false;
      } catch (const Error& e) {
        return std::string(e.what()).find(fragment) != std::string::npos;
      }
      return false;
    };
    QVERIFY(fails("{", "malformed JSON"));
    QVERIFY(fails(R"({"format":"x"})", "not a tessera-trace"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"spin"}]})", "unknown primitive 'spin'"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"split","inputs":["i1"]}]})", "lacks attribute 'factor'"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"split","inputs":["i1"],"attrs":{"factor":"4"}}]})", "wrong type"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"bind","inputs":["i1"],"attrs":{"thread":"lane"}}]})", "unknown thread tag"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"split","inputs":["i1"],"attrs":{"factor":4},"outputs":["a","b"]}]})", "created other names"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"split_reduction","inputs":["i0"]}]})", "lacks attribute 'blocks'"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"keep_in_registers","inputs":["i0"]}]})", "needs input 1"));
    QVERIFY(fails(R"({"format":"tessera-trace","instructions":[{"kind":"online_softmax"}]})", "needs input 0"));
    // Values a hand-edited session could hold: refused by the primitive's checks, naming the loop.
    Kernel k = lower(softmax(2, 64));
    QVERIFY(failsNaming([&] { replay(k, Trace::load(R"({"format":"tessera-trace","instructions":[{"kind":"split_reduction","inputs":["i0"],"attrs":{"blocks":1000000000000}}]})")); },
                        "i0", "must be between 2 and 64"));
    Kernel wide = lower(softmax(2, 512));
    QVERIFY(failsNaming([&] { replay(wide, Trace::load(R"({"format":"tessera-trace","instructions":[{"kind":"keep_in_registers","inputs":["i0","in0"]}]})")); },
                        "i0", "each thread would keep 512 elements"));
  }

  // ---- preconditions, each naming the loop at fault
  void splitPreconditions() {
    Kernel k = lower(pointwise());
    QVERIFY(failsNaming([&] { sched::split(k, "zz", 2); }, "zz", "step 1: no loop named 'zz'"));
    QVERIFY(failsNaming([&] { sched::split(k, "i1", 0); }, "i1", "step 2: factor 0 must be at least 1"));
    QVERIFY(failsNaming([&] { sched::split(k, "i1", 17); }, "i1", "step 4: factor 17 exceeds the extent 8 rounded up to 16 lanes (16)"));
    sched::parallel(k, "i0");
    QVERIFY(failsNaming([&] { sched::split(k, "i0", 2); }, "i0", "step 3: loop is parallel, not serial"));
  }
  void reorderPreconditions() {
    Kernel k = lower(gemm());
    QVERIFY(failsNaming([&] { sched::reorder(k, {"j"}); }, "j", "needs at least two loops"));
    QVERIFY(failsNaming([&] { sched::reorder(k, {"i", "i"}); }, "i", "appears twice"));
    QVERIFY(failsNaming([&] { sched::reorder(k, {"k", "i"}); }, "k", "is not in the perfect loop nest under 'i'"));
  }
  void tilePreconditions() {
    Kernel k = lower(conv());
    QVERIFY(failsNaming([&] { sched::tile(k, {"oh", "ow"}, {4}); }, "oh", "needs one factor per loop"));
    QVERIFY(failsNaming([&] { sched::tile(k, {"n", "oh"}, {1, 4}); }, "oh", "is not directly inside 'n'"));
  }
  void fusePreconditions() {
    Kernel k = lower(pointwise());
    QVERIFY(failsNaming([&] { sched::fuse(k, "i1", "i0"); }, "i0", "is not directly inside 'i1'"));
    sched::vectorize(k, "i1");
    QVERIFY(failsNaming([&] { sched::fuse(k, "i0", "i1"); }, "i1", "must be serial"));
    Kernel c = lower(conv());
    QVERIFY(failsNaming([&] { sched::fuse(c, "ow", "ic"); }, "ic", "is not directly inside 'ow'"));
  }
  void vectorizePreconditions() {
    Kernel k = lower(pointwise());
    QVERIFY(failsNaming([&] { sched::vectorize(k, "i0"); }, "i0", "step 3: is not innermost"));
    Kernel t = lower(transpose());
    QVERIFY(failsNaming([&] { sched::vectorize(t, "i1"); }, "i1", "extent 64 exceeds 16 lanes"));
    Kernel r = lower(softmax());
    QVERIFY(failsNaming([&] { sched::vectorize(r, "k0"); }, "k0", "step 4: extent 64 exceeds 16 lanes"));
    sched::split(k, "i1", 3);
    QVERIFY(failsNaming([&] { sched::vectorize(k, "i1_i"); }, "i1_i", "body is guarded"));
  }
  void unrollAndParallelPreconditions() {
    Kernel r = lower(softmax(4, 512));
    QVERIFY(failsNaming([&] { sched::unroll(r, "k0"); }, "k0", "extent 512 exceeds 256"));
    QVERIFY(failsNaming([&] { sched::parallel(r, "k0"); }, "k0", "is a reduction loop"));
    sched::parallel(r, "i0");
    QVERIFY(failsNaming([&] { sched::parallel(r, "j"); }, "j", "inside 'i0', which is already parallel"));
  }
  void bindPreconditions() {
    Kernel k = lower(pointwise());
    sched::bind(k, "i0", ThreadTag::BlockX);
    QVERIFY(failsNaming([&] { sched::bind(k, "i1", ThreadTag::BlockX); }, "i1", "'i0' around it is already bound to blockIdx.x"));
    QVERIFY(failsNaming([&] { sched::bind(k, "i0", ThreadTag::ThreadX); }, "i0", "loop is bound, not serial"));
    Kernel t = lower(pointwise());
    sched::bind(t, "i0", ThreadTag::ThreadX);
    QVERIFY(failsNaming([&] { sched::bind(t, "i1", ThreadTag::BlockY); }, "i1", "inside 'i0', which is bound to a thread index"));
    Kernel r = lower(softmax(4, 2048));
    QVERIFY(failsNaming([&] { sched::bind(r, "k0", ThreadTag::ThreadY); }, "k0", "can only be bound to threadIdx.x"));
    QVERIFY(failsNaming([&] { sched::bind(r, "k0", ThreadTag::ThreadX); }, "k0", "extent 2048 exceeds the threadIdx.x limit 1024"));
    QVERIFY(failsNaming([&] { sched::bind(r, "j", ThreadTag::Warp); }, "j", "exceeds the warp limit 32"));
  }
  void cacheReadPreconditions() {
    Kernel k = lower(pointwise());
    QVERIFY(failsNaming([&] { sched::cacheRead(k, "i0", "nope", MemScope::Shared); }, "i0", "no global buffer named 'nope'"));
    QVERIFY(failsNaming([&] { sched::cacheRead(k, "i0", "in0", MemScope::Global); }, "i0", "shared memory or registers"));
    QVERIFY(failsNaming([&] { sched::cacheRead(k, "i0", "out0", MemScope::Shared); }, "i0", "'out0' is not read inside the loop"));
    std::string f = sched::fuse(k, "i0", "i1");
    sched::split(k, f, 4);
    QVERIFY(failsNaming([&] { sched::cacheRead(k, "i0_i1_o", "in0", MemScope::Shared); }, "i0_i1_o", "is not affine in the loops inside"));
    Kernel big = lower(softmax(4, 65536));  // a 256 KiB row, over the 227 KiB a block may have
    QVERIFY(failsNaming([&] { sched::cacheRead(big, "i0", "in0", MemScope::Shared); }, "i0",
                        "needs 262144 bytes of shared memory (limit 227 KiB)"));
    Kernel g = lower(gemm());
    QVERIFY(failsNaming([&] { sched::cacheRead(g, "i", "in1", MemScope::Register); }, "i", "needs 2048 registers"));
  }
  void cacheWritePreconditions() {
    Kernel k = lower(pointwise());
    QVERIFY(failsNaming([&] { sched::cacheWrite(k, "i0", "in0", MemScope::Register); }, "i0", "'in0' is not stored inside the loop"));
    QVERIFY(failsNaming([&] { sched::cacheWrite(k, "i0", "out0", MemScope::Global); }, "i0", "shared memory or registers"));
  }
  void computeAtPreconditions() {
    Kernel k = lower(transpose());
    sched::tile(k, {"i0", "i1"}, {32, 32});
    QVERIFY(failsNaming([&] { sched::computeAt(k, "in0", "i0_i"); }, "i0_i", "'in0' is not a read cache"));
    sched::cacheRead(k, "i1_o", "in0", MemScope::Shared);
    QVERIFY(failsNaming([&] { sched::computeAt(k, "in0_shared", "nope"); }, "nope", "no loop named 'nope'"));
    std::string before = printKernel(k);
    Kernel s = lower(softmax(4, 64));
    sched::split(s, "k0", 16);
    sched::cacheRead(s, "k0_o", "in0", MemScope::Shared);
    sched::pipeline(s, "k0_o", 2);
    QVERIFY(failsNaming([&] { sched::computeAt(s, "in0_shared", "k0_i"); }, "k0_i", "is in a pipelined loop"));
    QCOMPARE(printKernel(k), before);  // a refused primitive leaves the kernel as it was
  }
  void pipelinePreconditions() {
    Kernel k = lower(softmax(4, 64));
    QVERIFY(failsNaming([&] { sched::pipeline(k, "k0", 2); }, "k0", "fills no shared read cache"));
    QVERIFY(failsNaming([&] { sched::pipeline(k, "k0", 9); }, "k0", "stages 9 must be between 2 and 8"));
    sched::split(k, "k0", 32);
    QVERIFY(failsNaming([&] { sched::pipeline(k, "k0_o", 3); }, "k0_o", "extent 2 is less than the stages"));
    // 64 KiB rows of 16384 f32: three copies fit the 227 KiB a block may opt in to, four do not.
    Kernel wide = lower(softmax(4, 65536));
    sched::split(wide, "k0", 16384);
    sched::cacheRead(wide, "k0_o", "in0", MemScope::Shared);
    QVERIFY(failsNaming([&] { sched::pipeline(wide, "k0_o", 4); }, "k0_o", "step 7: 4 stages need 262144 bytes"));
    sched::pipeline(wide, "k0_o", 3);
    QCOMPARE(sharedBytesPerBlock(wide), int64_t(3 * 16384 * 4));
  }
  void onlineSoftmaxPreconditions() {
    Kernel ln = lower(layernorm());
    QVERIFY(failsNaming([&] { sched::onlineSoftmax(ln, "k0"); }, "k0", "step 3: its body is not computes and one max="));
    Kernel k = lower(softmax(4, 64));
    QVERIFY(failsNaming([&] { sched::onlineSoftmax(k, "j"); }, "j", "step 2: is not a serial reduction loop"));
    sched::split(k, "k1", 16);
    QVERIFY(failsNaming([&] { sched::onlineSoftmax(k, "k0"); }, "k1_o", "step 6: is not a serial reduction loop of the same extent"));
    Kernel m = lower(reduceMean());
    QVERIFY(failsNaming([&] { sched::onlineSoftmax(m, "k0"); }, "k0", "step 3"));
  }
  void keepInRegistersPreconditions() {
    Kernel k = lower(softmax(4, 64));
    QVERIFY(failsNaming([&] { sched::keepInRegisters(k, "i0", "nope"); }, "i0", "step 2: no global buffer named 'nope'"));
    QVERIFY(failsNaming([&] { sched::keepInRegisters(k, "i0", "out0"); }, "i0", "step 3: 'out0' is written inside the loop"));
    sched::split(k, "k1", 16);
    QVERIFY(failsNaming([&] { sched::keepInRegisters(k, "i0", "in0"); }, "i0", "step 6: the pass at 'k1_o' has 2 loops, not 1"));
    Kernel wide = lower(softmax(2, 512));
    QVERIFY(failsNaming([&] { sched::keepInRegisters(wide, "i0", "in0"); }, "i0", "step 8: each thread would keep 512 elements"));
    Kernel c = lower(conv());  // the padding's select guards the input's reads
    QVERIFY(failsNaming([&] { sched::keepInRegisters(c, "n", "in0"); }, "n", "step 4"));
  }
  void splitKPreconditions() {
    Kernel k = lower(gemm(4, 8, 32));
    QVERIFY(failsNaming([&] { sched::splitK(k, "k", 2); }, "k", "step 3: loop 'i' around it is not bound to blocks"));
    sched::bind(k, "i", ThreadTag::BlockY);
    sched::bind(k, "j", ThreadTag::BlockX);
    QVERIFY(failsNaming([&] { sched::splitK(k, "k", 3); }, "k", "step 2: parts 3 does not divide its 32 iterations"));
    QVERIFY(failsNaming([&] { sched::splitK(k, "k", 64); }, "k", "step 2: parts 64 must be between 2 and 16"));
    QVERIFY(failsNaming([&] { sched::splitK(k, "j", 2); }, "j", "step 2: is not a serial reduction loop"));
    Kernel m = lower(softmax(2, 64));
    sched::bind(m, "i0", ThreadTag::BlockX);
    QVERIFY(failsNaming([&] { sched::splitK(m, "k0", 2); }, "k0", "step 4: it folds 'acc0' by max, not sum"));
  }
  void splitReductionPreconditions() {
    Kernel k = lower(softmax(2, 64));
    QVERIFY(failsNaming([&] { sched::splitReduction(k, "i0", 1); }, "i0", "step 2: blocks 1 must be between 2 and 64"));
    QVERIFY(failsNaming([&] { sched::splitReduction(k, "i0", 3); }, "i0", "step 8: blocks 3 does not divide the row's 64 elements"));
    QVERIFY(failsNaming([&] { sched::splitReduction(k, "k0", 2); }, "k0", "step 3: is not the kernel's only top-level statement"));
    sched::split(k, "k1", 16);
    QVERIFY(failsNaming([&] { sched::splitReduction(k, "i0", 2); }, "k1_o", "step 5: is not one serial loop"));
    Kernel c = lower(softmax(2, 64));
    sched::cacheRead(c, "i0", "in0", MemScope::Shared);
    QVERIFY(failsNaming([&] { sched::splitReduction(c, "i0", 2); }, "in0_shared_ax0", "step 5: is not one serial loop"));
    Kernel g = lower(gemm());
    QVERIFY(failsNaming([&] { sched::splitReduction(g, "i", 2); }, "j", "step 5: is not one serial loop"));
  }
  void setParamPreconditions() {
    Kernel k = lower(pointwise());
    QVERIFY(failsNaming([&] { sched::setParam(k, "Block", 1); }, "Block", "lower-case letters"));
    QVERIFY(failsNaming([&] { sched::setParam(k, "tile", -1); }, "tile", "value -1 is negative"));
  }
};

QTEST_APPLESS_MAIN(TestSchedule)
#include "test_schedule.moc"
