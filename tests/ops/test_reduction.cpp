// Reductions and ArgMax/ArgMin against hand-checked values: axes as a constant input, keepdims,
// noop_with_empty_axes, empty reduction sets, dtypes, and errors that name the node.
#include <limits>

#include "op_harness.h"
#include "ops/registry.h"

using namespace tessera;
using namespace tessera::test;

namespace {
TensorType ty(DType t, Shape s) { return {t, std::move(s)}; }
Tensor x23() { return T(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}); }
// Runs a reduction with constant axes (pass an empty list to omit the axes input).
Tensor reduce(const std::string& op, const Tensor& x, std::vector<int64_t> axes, Attributes attrs = {},
              bool omitAxes = false) {
  if (omitAxes) return run1(op, {x}, std::move(attrs));
  return run1(op, {x, I64({int64_t(axes.size())}, axes)}, std::move(attrs), {1});
}
}  // namespace

class TestReduction : public QObject {
  Q_OBJECT
 private slots:
  void sumOverAxes() {
    EXPECT_TENSOR(reduce("ReduceSum", x23(), {1}), ty(DType::F32, {2, 1}), (std::vector<double>{6, 15}), 0);
    EXPECT_TENSOR(reduce("ReduceSum", x23(), {-2}, {{"keepdims", 0}}), ty(DType::F32, {3}),
                  (std::vector<double>{5, 7, 9}), 0);
    EXPECT_TENSOR(reduce("ReduceSum", x23(), {}, {}, true), ty(DType::F32, {1, 1}), std::vector<double>{21}, 0);
    EXPECT_TENSOR(reduce("ReduceSum", x23(), {}), ty(DType::F32, {1, 1}), std::vector<double>{21}, 0);
    EXPECT_TENSOR(reduce("ReduceSum", x23(), {0, 1}, {{"keepdims", 0}}), ty(DType::F32, {}), std::vector<double>{21},
                  0);
  }
  void noopWithEmptyAxesReturnsInput() {
    EXPECT_TENSOR(reduce("ReduceSum", x23(), {}, {{"noop_with_empty_axes", 1}}), ty(DType::F32, {2, 3}),
                  (std::vector<double>{1, 2, 3, 4, 5, 6}), 0);
    EXPECT_TENSOR(reduce("ReduceMax", x23(), {}, {{"noop_with_empty_axes", 1}}, true), ty(DType::F32, {2, 3}),
                  (std::vector<double>{1, 2, 3, 4, 5, 6}), 0);
  }
  void otherReductions() {
    EXPECT_TENSOR(reduce("ReduceMean", x23(), {0}), ty(DType::F32, {1, 3}), (std::vector<double>{2.5, 3.5, 4.5}), 0);
    EXPECT_TENSOR(reduce("ReduceMax", x23(), {1}, {{"keepdims", 0}}), ty(DType::F32, {2}), (std::vector<double>{3, 6}),
                  0);
    EXPECT_TENSOR(reduce("ReduceMin", x23(), {1}, {{"keepdims", 0}}), ty(DType::F32, {2}), (std::vector<double>{1, 4}),
                  0);
    EXPECT_TENSOR(reduce("ReduceProd", x23(), {}, {{"keepdims", 0}}), ty(DType::F32, {}), std::vector<double>{720}, 0);
    EXPECT_TENSOR(reduce("ReduceSumSquare", x23(), {1}), ty(DType::F32, {2, 1}), (std::vector<double>{14, 77}), 0);
    EXPECT_TENSOR(reduce("ReduceL2", T(DType::F64, {2, 2}, {3, 4, 5, 12}), {1}), ty(DType::F64, {2, 1}),
                  (std::vector<double>{5, 13}), 0);
    EXPECT_TENSOR(reduce("ReduceL1", T(DType::F32, {3}, {-1, 2, -4}), {0}), ty(DType::F32, {1}), std::vector<double>{7},
                  0);
    EXPECT_TENSOR(reduce("ReduceLogSum", T(DType::F64, {2}, {1, std::exp(1.0) - 1}), {0}), ty(DType::F64, {1}),
                  std::vector<double>{1}, 1e-15);
  }
  void logSumExpIsStable() {
    // exp(1000) overflows a double; shifting by the max keeps the result 1000 + ln 2.
    EXPECT_TENSOR(reduce("ReduceLogSumExp", T(DType::F64, {2}, {1000, 1000}), {0}), ty(DType::F64, {1}),
                  std::vector<double>{1000 + std::log(2.0)}, 1e-12);
    EXPECT_TENSOR(reduce("ReduceLogSumExp", T(DType::F64, {2}, {0, std::log(3.0)}), {0}), ty(DType::F64, {1}),
                  std::vector<double>{std::log(4.0)}, 1e-15);
  }
  void emptySetGivesIdentity() {
    Tensor e = T(DType::F32, {2, 0}, {});
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_TENSOR(reduce("ReduceSum", e, {1}), ty(DType::F32, {2, 1}), (std::vector<double>{0, 0}), 0);
    EXPECT_TENSOR(reduce("ReduceProd", e, {1}), ty(DType::F32, {2, 1}), (std::vector<double>{1, 1}), 0);
    EXPECT_TENSOR(reduce("ReduceMax", e, {1}), ty(DType::F32, {2, 1}), (std::vector<double>{-inf, -inf}), 0);
    EXPECT_TENSOR(reduce("ReduceMin", e, {1}), ty(DType::F32, {2, 1}), (std::vector<double>{inf, inf}), 0);
    EXPECT_TENSOR(reduce("ReduceMean", e, {1}), ty(DType::F32, {2, 1}), (std::vector<double>{NAN, NAN}), 0);
    EXPECT_TENSOR(reduce("ReduceLogSumExp", e, {1}), ty(DType::F32, {2, 1}), (std::vector<double>{-inf, -inf}), 0);
    EXPECT_TENSOR(reduce("ReduceMax", T(DType::I8, {0}, {}), {0}), ty(DType::I8, {1}), std::vector<double>{-128}, 0);
    EXPECT_TENSOR(reduce("ReduceMin", T(DType::I32, {0}, {}), {0}), ty(DType::I32, {1}),
                  std::vector<double>{2147483647}, 0);
    // Reducing the non-empty axis of an empty tensor gives an empty result.
    EXPECT_TENSOR(reduce("ReduceSum", e, {0}), ty(DType::F32, {1, 0}), std::vector<double>{}, 0);
  }
  void integerReductionsAreExact() {
    int64_t big = (int64_t(1) << 53) + 1;
    Tensor s = reduce("ReduceSum", I64({2}, {big, 2}), {0});
    QCOMPARE(s.getInt(0), big + 2);
    EXPECT_TENSOR(reduce("ReduceMean", T(DType::I32, {2}, {1, 2}), {0}), ty(DType::I32, {1}), std::vector<double>{1},
                  0);  // 1.5 truncates
    EXPECT_TENSOR(reduce("ReduceProd", T(DType::U8, {3}, {4, 8, 9}), {0}), ty(DType::U8, {1}), std::vector<double>{32},
                  0);  // 288 wraps to 32
    EXPECT_TENSOR(reduce("ReduceMax", T(DType::Bool, {2, 2}, {0, 1, 0, 0}), {1}), ty(DType::Bool, {2, 1}),
                  (std::vector<double>{1, 0}), 0);
  }
  void halfPrecisionAccumulatesInDouble() {
    // Summed in f16, 1 + 2^-11 rounds back to 1 (a tie to even) twice; in double the sum is 1 + 2^-10, exact.
    double h = std::ldexp(1.0, -11);
    EXPECT_TENSOR(reduce("ReduceSum", T(DType::F16, {3}, {1, h, h}), {0}), ty(DType::F16, {1}),
                  std::vector<double>{1.0009765625}, 0);
    EXPECT_TENSOR(reduce("ReduceMean", T(DType::BF16, {2}, {1, 2}), {0}), ty(DType::BF16, {1}),
                  std::vector<double>{1.5}, 0);
  }
  void argMaxArgMin() {
    Tensor x = T(DType::F32, {2, 3}, {1, 3, 3, 5, 0, 5});
    EXPECT_TENSOR(run1("ArgMax", {x}, {{"axis", 1}}), ty(DType::I64, {2, 1}), (std::vector<double>{1, 0}), 0);
    EXPECT_TENSOR(run1("ArgMax", {x}, {{"axis", 1}, {"select_last_index", 1}, {"keepdims", 0}}), ty(DType::I64, {2}),
                  (std::vector<double>{2, 2}), 0);
    EXPECT_TENSOR(run1("ArgMin", {x}), ty(DType::I64, {1, 3}), (std::vector<double>{0, 1, 0}), 0);
    EXPECT_TENSOR(run1("ArgMin", {x}, {{"axis", -1}, {"keepdims", 0}}), ty(DType::I64, {2}),
                  (std::vector<double>{0, 1}), 0);
    int64_t big = (int64_t(1) << 53);
    EXPECT_TENSOR(run1("ArgMax", {I64({2}, {big + 1, big})}), ty(DType::I64, {1}), std::vector<double>{0}, 0);
  }
  void categories() {
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin", "Softmax",
                           "LogSoftmax", "LayerNormalization"}) {
      const OpSchema* s = OpRegistry::instance().find(op);
      QVERIFY2(s && s->category == OpCategory::Reduction, op);
    }
    QCOMPARE(OpRegistry::instance().find("ReduceSum")->shapeInputs, std::vector<int>{1});
    QVERIFY(OpRegistry::instance().find("BatchNormalization")->category == OpCategory::Pointwise);
  }
  void errorsNameTheNode() {
    EXPECT_ERROR(reduce("ReduceSum", x23(), {2}), "node 'node1' (ReduceSum)", "axis 2 is out of range", "rank 2");
    EXPECT_ERROR(reduce("ReduceMean", x23(), {1, -1}), "node 'node1' (ReduceMean)", "repeated");
    EXPECT_ERROR(run1("ReduceSum", {x23(), I64({1}, {1})}), "node 'node1' (ReduceSum)", "input 1 (axes)",
                 "must be a constant");
    EXPECT_ERROR(reduce("ReduceSum", T(DType::Bool, {2}, {1, 0}), {0}), "node 'node1' (ReduceSum)", "input 0 is bool");
    EXPECT_ERROR(run1("ReduceSum", {x23(), T(DType::F32, {1}, {1})}, {}, {1}), "node 'node1' (ReduceSum)",
                 "1-D i64");
    EXPECT_ERROR(run1("ArgMax", {x23()}, {{"axis", 5}}), "node 'node1' (ArgMax)", "'axis' = 5 is out of range");
    EXPECT_ERROR(run1("ArgMax", {T(DType::F32, {0}, {})}), "node 'node1' (ArgMax)", "empty axis");
  }
};

QTEST_GUILESS_MAIN(TestReduction)
#include "test_reduction.moc"
