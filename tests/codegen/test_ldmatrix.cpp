// The tensor-core gemm's fragments by ldmatrix (docs/codegen.md, Tensor cores): the lane -> matrix mapping is
// checked lane by lane against the PTX ISA's mma.m16n8k16 fragment layout on the CPU (no GPU needed); the
// generated CUDA of bf16 and f16 gemms loads a warp's fragments once per k step with ldmatrix where the shared
// tile's layout allows and with scalar loads where it does not (a padded, odd row stride; ldmatrix = 0), NVRTC
// compiles each for sm_90, and on a GPU each runs verified against the reference.
#include <QtTest>
#include <nlohmann/json.hpp>

#include "codegen/codegen.h"
#include "codegen/mma_fragments.h"
#include "frontend/text/tsr.h"
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
using testing::scheduleWith;
using codegen::detail::ElementAt;
using codegen::detail::MmaOperand;

namespace {

execute::CompiledModel withSchedules(const CompileResult& cr, const execute::ScheduleSet& set) {
  return execute::compileKernels(cr, &set);
}

// The same schedule with A's shared cache (the cache_read of the model's input a) padded by `pad` elements a row.
execute::ScheduleSet withPaddedA(const execute::ScheduleSet& set, int64_t pad) {
  nlohmann::json j = nlohmann::json::parse(set.save());
  int padded = 0;
  for (auto& k : j["kernels"])
    for (auto& i : k["trace"]["instructions"])
      if (i["kind"] == "cache_read" && i["inputs"][1] == "in0") {
        i["attrs"]["pad"] = pad;
        ++padded;
      }
  if (padded != 1) qFatal("expected one cache_read of in0 in the schedule, found %d", padded);
  return execute::ScheduleSet::load(j.dump());
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// What ldmatrix gives lane `lane` in half `half` of register `reg` (the PTX ISA's m8n8 .b16 distribution):
// matrix `reg`'s row addresses come from lanes 8 reg .. 8 reg + 7, each the start of 8 consecutive elements
// (along the depth, or along the outer index with .trans); the lane receives row lane / 4, columns
// 2 (lane % 4) and the next of the matrix, or of its transpose with .trans.
ElementAt<int64_t> ldmatrixDelivers(MmaOperand op, bool trans, int lane, int reg, int half) {
  int64_t row = lane / 4, column = 2 * (lane % 4) + half;
  if (!trans) {
    ElementAt<int64_t> start = codegen::detail::ldmatrixRowStart<int64_t>(op, false, 8 * reg + row);
    return {start.outer, start.depth + column};
  }
  // Transposed: element (row, column) of the delivered matrix is element (column, row) of the stored one,
  // whose row `column` starts where lane 8 reg + column points and runs along the outer index.
  ElementAt<int64_t> start = codegen::detail::ldmatrixRowStart<int64_t>(op, true, 8 * reg + column);
  return {start.outer + row, start.depth};
}

}  // namespace

class TestLdmatrix : public QObject {
  Q_OBJECT
 private slots:
  // For A (x4) and B (x2), plain and .trans: every lane's every register half holds, through ldmatrix, the
  // element the scalar path loads into it (the mma.m16n8k16 layout).
  void ldmatrixDeliversTheMmaFragments() {
    for (MmaOperand op : {MmaOperand::A, MmaOperand::B})
      for (bool trans : {false, true})
        for (int lane = 0; lane < 32; ++lane)
          for (int reg = 0; reg < codegen::detail::fragmentRegisters(op); ++reg)
            for (int half = 0; half < 2; ++half) {
              ElementAt<int64_t> want = codegen::detail::fragmentElement<int64_t>(op, lane, reg, half);
              ElementAt<int64_t> got = ldmatrixDelivers(op, trans, lane, reg, half);
              QVERIFY2(got.outer == want.outer && got.depth == want.depth,
                       qPrintable(QString("%1%2 lane %3 reg %4 half %5: ldmatrix gives (%6, %7), mma needs (%8, %9)")
                                      .arg(op == MmaOperand::A ? "A" : "B")
                                      .arg(trans ? " trans" : "")
                                      .arg(lane).arg(reg).arg(half)
                                      .arg(got.outer).arg(got.depth).arg(want.outer).arg(want.depth)));
            }
  }

  // ldmatrix = 2: one .x4 (plain or .trans) loads B's fragments of n-tiles j and j + 1, lanes 16..31 giving
  // tile j + pairedTile(lane)'s rows: its registers 2 and 3 hold tile j + 1's registers 0 and 1.
  void pairedLdmatrixDeliversTwoBFragments() {
    for (bool trans : {false, true})
      for (int lane = 0; lane < 32; ++lane)
        for (int reg = 0; reg < 4; ++reg)
          for (int half = 0; half < 2; ++half) {
            // As ldmatrixDelivers, with the supplying lane's tile.
            int64_t row = lane / 4, column = 2 * (lane % 4) + half;
            int supplier = 8 * reg + int(trans ? column : row);
            ElementAt<int64_t> start = codegen::detail::ldmatrixRowStart<int64_t>(MmaOperand::B, trans, supplier);
            ElementAt<int64_t> got = trans ? ElementAt<int64_t>{start.outer + row, start.depth} : ElementAt<int64_t>{start.outer, start.depth + column};
            int64_t tile = codegen::detail::pairedTile<int64_t>(supplier);
            ElementAt<int64_t> want = codegen::detail::fragmentElement<int64_t>(MmaOperand::B, lane, reg % 2, half);
            QVERIFY2(tile == reg / 2 && got.outer == want.outer && got.depth == want.depth,
                     qPrintable(QString("B%1 x4 lane %2 reg %3 half %4: tile %5 (%6, %7), mma needs tile %8 (%9, %10)")
                                    .arg(trans ? " trans" : "").arg(lane).arg(reg).arg(half)
                                    .arg(tile).arg(got.outer).arg(got.depth).arg(reg / 2).arg(want.outer).arg(want.depth)));
          }
  }

  // The fragment layout itself, spot-checked against the PTX ISA's table: A's register 1 of lane 5 holds row
  // 1 + 8, depths 2 and 3; B's register 1 of lane 30 holds depths 8 + 4 and 8 + 5, column 7.
  void fragmentLayoutFollowsThePtxIsa() {
    ElementAt<int64_t> a = codegen::detail::fragmentElement<int64_t>(MmaOperand::A, 5, 1, 1);
    QCOMPARE(a.outer, int64_t(9));
    QCOMPARE(a.depth, int64_t(3));
    ElementAt<int64_t> b = codegen::detail::fragmentElement<int64_t>(MmaOperand::B, 30, 1, 0);
    QCOMPARE(b.outer, int64_t(7));
    QCOMPARE(b.depth, int64_t(12));
    // The .x2 form's lanes 16..31 point where lanes 0..15 do (their addresses are ignored, yet stay valid).
    for (int lane = 16; lane < 32; ++lane) {
      ElementAt<int64_t> hi = codegen::detail::ldmatrixRowStart<int64_t>(MmaOperand::B, true, lane);
      ElementAt<int64_t> lo = codegen::detail::ldmatrixRowStart<int64_t>(MmaOperand::B, true, lane - 16);
      QVERIFY(hi.outer == lo.outer && hi.depth == lo.depth);
    }
  }

  void gemms_data() {
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("pad");       // the template parameter: elements added to each row of both shared tiles
    QTest::addColumn<int>("padA");      // elements added to each row of A's shared tile, by editing the schedule
    QTest::addColumn<int>("ldmatrix");  // the template parameter
    QTest::addColumn<int>("x4");        // ldmatrix .x4 (A) instructions expected in the CUDA
    QTest::addColumn<int>("x2trans");   // ldmatrix .x2.trans (B)
    QTest::addColumn<int>("x4trans");   // ldmatrix .x4.trans (B, ldmatrix = 2: n-tiles in pairs)
    // Default tiles (128 x 128 blocks of 64 x 64 warps, block_k 32): per k step 4 A loads and 8 B loads,
    // written once each in loops.
    QTest::newRow("bf16 256x128x192") << "bf16" << 256 << 128 << 192 << 0 << 0 << 1 << 1 << 1 << 0;
    QTest::newRow("f16 256x128x192") << "f16" << 256 << 128 << 192 << 0 << 0 << 1 << 1 << 1 << 0;
    // Smaller shapes: the default tiles of 96 x 128 x 80, and 64 x 64 blocks of 32 x 32 warps (block_k 16)
    // over 3 x 5 blocks. (Shapes the block tiles do not divide keep plain loops on their edge tiles, no mma.)
    QTest::newRow("bf16 96x128x80") << "bf16" << 96 << 128 << 80 << 0 << 0 << 1 << 1 << 1 << 0;
    QTest::newRow("f16 192x48x320 tiles 64") << "f16" << 192 << 48 << 320 << 0 << 0 << 1 << 1 << 1 << 0;
    // Both tiles' rows padded by 8 elements (pad = 8: conflict-free ldmatrix rows), still aligned.
    QTest::newRow("bf16 pad 8") << "bf16" << 256 << 128 << 192 << 8 << 0 << 1 << 1 << 1 << 0;
    QTest::newRow("f16 pad 8 tiles 64") << "f16" << 192 << 48 << 320 << 8 << 0 << 1 << 1 << 1 << 0;
    // A's rows padded by 8 elements (16 bytes): still aligned, still ldmatrix.
    QTest::newRow("bf16 A pad 8") << "bf16" << 128 << 64 << 128 << 0 << 8 << 1 << 1 << 1 << 0;
    // Padded by 1: A's rows start at odd elements, so A keeps the scalar loads; B is still ldmatrix.
    QTest::newRow("bf16 A pad 1") << "bf16" << 128 << 64 << 128 << 0 << 1 << 1 << 0 << 1 << 0;
    // ldmatrix = 2: B's n-tiles in pairs, one .x4.trans a pair (8 and 4 n-tiles a warp, 2 and 4 in a loop).
    QTest::newRow("bf16 ldmatrix 2") << "bf16" << 256 << 128 << 192 << 0 << 0 << 2 << 1 << 0 << 1;
    QTest::newRow("f16 ldmatrix 2 pad 8 tiles 64") << "f16" << 192 << 48 << 320 << 8 << 0 << 2 << 1 << 0 << 1;
    // ldmatrix = 0: every tile its own scalar loads, as before.
    QTest::newRow("bf16 ldmatrix 0") << "bf16" << 128 << 64 << 128 << 0 << 0 << 0 << 0 << 0 << 0;
  }
  void gemms() {
    QFETCH(QString, dtype);
    QFETCH(int, m);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, pad);
    QFETCH(int, padA);
    QFETCH(int, ldmatrix);
    QFETCH(int, x4);
    QFETCH(int, x2trans);
    QFETCH(int, x4trans);
    CompileResult cr = gemmModel(dtype.toStdString(), m, k, n);
    kernel::TemplateParams params = {{"ldmatrix", ldmatrix}, {"pad", pad}};
    if (QByteArray(QTest::currentDataTag()).endsWith("tiles 64")) params.insert({{"block_m", 64}, {"block_n", 64}, {"warp_m", 32}, {"warp_n", 32}, {"block_k", 16}, {"mma", 1}});
    execute::ScheduleSet set = scheduleWith(cr, params);
    if (padA) set = withPaddedA(set, padA);
    execute::CompiledModel model = withSchedules(cr, set);
    QCOMPARE(model.kernels.size(), size_t(1));
    QVERIFY2(!model.kernels[0].onHost() && model.kernels[0].replayed, model.kernels[0].placement.reason.c_str());
    codegen::GeneratedKernel g = codegen::generateCuda(model.kernels[0].kernel);
    QVERIFY(count(g.source, "mma.sync.aligned.m16n8k16") > 0);
    QCOMPARE(int(count(g.source, "ldmatrix.sync.aligned.m8n8.x4.shared.b16")), x4);
    QCOMPARE(int(count(g.source, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16")), x2trans);
    QCOMPARE(int(count(g.source, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16")), x4trans);
    // Fragments loaded once per k step (tsr_fa, tsr_fb) unless ldmatrix = 0.
    QCOMPARE(count(g.source, "unsigned tsr_fa[") > 0, ldmatrix != 0);
    QCOMPARE(count(g.source, "tsr_pack2(in0_shared") > 0, x4 == 0);
    QCOMPARE(count(g.source, "tsr_pack2(in1_shared") > 0, x2trans + x4trans == 0);
    QCOMPARE(g.lineNodes.size(), size_t(std::count(g.source.begin(), g.source.end(), '\n')));
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "gemm.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    QCOMPARE(count(r.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16") > 0, x4 > 0);
    QCOMPARE(count(r.ptx, "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16") > 0, x2trans > 0);
    QCOMPARE(count(r.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") > 0, x4trans > 0);
    // With both operands by ldmatrix, the product loop reads shared memory only through it: the other shared
    // reads are the output tile's 16-byte write-back (store_tile, a default of the mma form).
    if (x4 && x2trans + x4trans) QCOMPARE(count(r.ptx, "ld.shared"), count(r.ptx, "ld.shared.v4"));
    // The schedule's meaning (padded caches included) on the CPU, where the mma tiles are plain loops.
    if (pad || padA) {
      execute::RunReport cpu = execute::executeModel(model, execute::BackendKind::Cpu, once());
      QVERIFY2(cpu.outputsVerified, messages(cpu).c_str());
    }
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the ldmatrix gemm on: " + gpu.reason).c_str());
    execute::RunReport run = execute::executeModel(model, execute::BackendKind::Cuda, once());
    QVERIFY2(run.outputsVerified, messages(run).c_str());
  }
};

QTEST_GUILESS_MAIN(TestLdmatrix)
#include "test_ldmatrix.moc"
