// Which rows a gemm kernel runs over: a batched MatMul by a weight without batch axes merged into one gemm of
// batch·M rows (its operands viewed as matrices), and block tiles that overhang M where no side divides it.
#include <QtTest>

#include "cpu_run.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

// x [3, 7, 16] · w [16, 12] + bias [1, 1, 12] + r (of the output's shape unless `extra` says otherwise).
Case batchedLinear(Shape extra = {3, 7, 12}) {
  GraphBuilder b("linear");
  Value* x = b.input("x", {DType::F32, {3, 7, 16}});
  Value* w = b.input("w", {DType::F32, {16, 12}});
  Value* bias = b.input("bias", {DType::F32, {1, 1, 12}});
  Value* r = b.input("r", {DType::F32, extra});
  Value* y = b.op("Add", {b.op("MatMul", {x, w}, {}, "matmul"), bias}, {}, "bias");
  b.output(b.op("Add", {y, r}, {}, "res"));
  return {b.finish(), {"g0", "gemm", {"matmul", "bias", "res"}}};
}


}  // namespace

class TestGemmRows : public QObject {
  Q_OBJECT
 private slots:
  // The operands of the output's shape are viewed as [batch·M, columns], the bias broadcast over the rows as
  // its last axis; one loop runs over the 21 rows.
  void batchMergedIntoRows() {
    Case c = batchedLinear();
    std::string t = printKernel(lower(c));
    QVERIFY2(has(t, "in  in0: global f32[21, 16]  # value 'x' of shape [3, 7, 16]"), t.c_str());
    QVERIFY(has(t, "in  in2: global f32[12]  # value 'bias' of shape [1, 1, 12]"));
    QVERIFY(has(t, "out out0: global f32[21, 12]  # value"));
    QVERIFY(has(t, "for i in 0..21 {"));
    QVERIFY(!has(t, "for b0"));
    QCOMPARE(agreesEverywhere(c, "gemm", 3), std::string());
  }
  // An operand that varies per batch but not per row has no [batch·M, N] view: the batch loop stays.
  void batchKeptWhereAnOperandVariesPerBatchOnly() {
    Case c = batchedLinear({3, 1, 12});
    std::string t = printKernel(lower(c));
    QVERIFY(has(t, "for b0 in 0..3 {"));
    QVERIFY(!has(t, "of shape"));
    QCOMPARE(agreesEverywhere(c, "gemm", 4), std::string());
  }
  // ViT's 32 x 197 token rows take 128-row tiles (the last overhanging), not the 32-row ones that divide 6304;
  // such a tile, guarded past M in the fill, the reduction and the stores, computes what the reference does.
  void blockTileOverhangsRows() {
    TemplateParams p = defaultParams(lower(gemmWithoutEpilogue(197 * 32, 768, 64)));
    QCOMPARE(p.at("block_m"), int64_t(128));
    QCOMPARE(p.at("block_n"), int64_t(128));
    Case c = gemmWithoutEpilogue(197, 100, 24);
    for (int64_t stages : {1, 2}) {
      Kernel k = lower(c);
      TracedSchedule s(k);
      applyTemplate(s, {{"block_m", 128}, {"block_n", 64}, {"block_k", 8}, {"thread_m", 8}, {"thread_n", 4}, {"stages", stages}});
      QCOMPARE(agreesWithReference(c.graph, k), std::string());
    }
  }
};

QTEST_APPLESS_MAIN(TestGemmRows)
#include "test_gemm_rows.moc"
