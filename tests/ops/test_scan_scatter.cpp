// Trilu, CumSum/CumProd, TopK, ScatterElements, ScatterND and GatherND against values worked out by hand (the
// ONNX operator examples where they exist), with the errors naming the node.
#include <QtTest>

#include <cmath>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;
Tensor scalarI64(int64_t v) { return I64({}, {v}); }

}  // namespace

class TestScanScatter : public QObject {
  Q_OBJECT
 private slots:
  void trilu() {
    // [[0,1,2],[3,4,5],[6,7,8]]
    EXPECT_TENSOR(run1("Trilu", {iota({3, 3})}), (TensorType{DType::F32, {3, 3}}), (V{0, 1, 2, 0, 4, 5, 0, 0, 8}), 0);
    EXPECT_TENSOR(run1("Trilu", {iota({3, 3}), scalarI64(-1)}, {{"upper", 0}}), (TensorType{DType::F32, {3, 3}}),
                  (V{0, 0, 0, 3, 0, 0, 6, 7, 0}), 0);
    EXPECT_TENSOR(run1("Trilu", {iota({3, 3}), scalarI64(1)}), (TensorType{DType::F32, {3, 3}}),
                  (V{0, 1, 2, 0, 0, 5, 0, 0, 0}), 0);
    // A batch of two 2x3 matrices, lower triangle: each keeps j <= i.
    EXPECT_TENSOR(run1("Trilu", {iota({2, 2, 3})}, {{"upper", 0}}), (TensorType{DType::F32, {2, 2, 3}}),
                  (V{0, 0, 0, 3, 4, 0, 6, 0, 0, 9, 10, 0}), 0);
    EXPECT_ERROR(run1("Trilu", {iota({3})}), "node 'node1' (Trilu)", "rank >= 2");
    EXPECT_ERROR(run1("Trilu", {iota({2, 2}), F32({}, {1})}), "node 'node1' (Trilu)",
                 "input 1 (k) must be one integer");
  }
  void cumSum() {
    Tensor x = F32({4}, {1, 2, 3, 4});
    TensorType t{DType::F32, {4}};
    EXPECT_TENSOR(run1("CumSum", {x, scalarI64(0)}), t, (V{1, 3, 6, 10}), 0);
    EXPECT_TENSOR(run1("CumSum", {x, scalarI64(0)}, {{"exclusive", 1}}), t, (V{0, 1, 3, 6}), 0);
    EXPECT_TENSOR(run1("CumSum", {x, scalarI64(0)}, {{"reverse", 1}}), t, (V{10, 9, 7, 4}), 0);
    EXPECT_TENSOR(run1("CumSum", {x, scalarI64(0)}, {{"reverse", 1}, {"exclusive", 1}}), t, (V{9, 7, 4, 0}), 0);
    // Along the last axis of [[1,2,3],[4,5,6]], with a negative axis and an i32 axis tensor.
    Tensor m = T(DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
    Tensor axis = T(DType::I32, {1}, {-1});
    EXPECT_TENSOR(run1("CumSum", {m, axis}), (TensorType{DType::I32, {2, 3}}), (V{1, 3, 6, 4, 9, 15}), 0);
    // Integers are exact beyond 2^53: 2^60 + 1 + 1.
    Tensor big = I64({2}, {(int64_t(1) << 60) + 1, 1});
    QCOMPARE(run1("CumSum", {big, scalarI64(0)}).getInt(1), (int64_t(1) << 60) + 2);
    EXPECT_TENSOR(run1("CumProd", {x, scalarI64(0)}), t, (V{1, 2, 6, 24}), 0);
    EXPECT_TENSOR(run1("CumProd", {x, scalarI64(0)}, {{"exclusive", 1}, {"reverse", 1}}), t, (V{24, 12, 4, 1}), 0);
    EXPECT_ERROR(run1("CumSum", {x, scalarI64(1)}, {}, {1}), "node 'node1' (CumSum)", "out of range");
    EXPECT_ERROR(run1("CumSum", {x, F32({}, {0})}), "node 'node1' (CumSum)", "input 1 (axis) must be one integer");
  }
  void topK() {
    Tensor x = F32({2, 4}, {1, 4, 2, 3, 8, 5, 7, 6});
    OpRun r = runOp("TopK", {x, I64({1}, {2})}, {}, {1}, 2);
    EXPECT_TENSOR(r.outputs[0], (TensorType{DType::F32, {2, 2}}), (V{4, 3, 8, 7}), 0);
    EXPECT_TENSOR(r.outputs[1], (TensorType{DType::I64, {2, 2}}), (V{1, 3, 0, 2}), 0);
    OpRun s = runOp("TopK", {x, I64({1}, {2})}, {{"largest", 0}}, {1}, 2);
    EXPECT_TENSOR(s.outputs[0], (TensorType{DType::F32, {2, 2}}), (V{1, 2, 5, 6}), 0);
    EXPECT_TENSOR(s.outputs[1], (TensorType{DType::I64, {2, 2}}), (V{0, 2, 1, 3}), 0);
    // Along axis 0, and equal values keep the lower index first.
    OpRun c = runOp("TopK", {F32({3, 1}, {3, 1, 3}), I64({1}, {2})}, {{"axis", 0}}, {1}, 2);
    EXPECT_TENSOR(c.outputs[0], (TensorType{DType::F32, {2, 1}}), (V{3, 3}), 0);
    EXPECT_TENSOR(c.outputs[1], (TensorType{DType::I64, {2, 1}}), (V{0, 2}), 0);
    // NaN orders after +inf, as PyTorch orders it: first with largest, last without; NaNs keep their order.
    const double nan = std::nan(""), inf = INFINITY;
    Tensor odd = F32({5}, {1, nan, inf, -inf, nan});
    OpRun hi = runOp("TopK", {odd, I64({1}, {5})}, {}, {1}, 2);
    EXPECT_TENSOR(hi.outputs[1], (TensorType{DType::I64, {5}}), (V{1, 4, 2, 0, 3}), 0);
    OpRun lo = runOp("TopK", {odd, I64({1}, {5})}, {{"largest", 0}}, {1}, 2);
    EXPECT_TENSOR(lo.outputs[1], (TensorType{DType::I64, {5}}), (V{3, 0, 2, 1, 4}), 0);
    std::vector<double> low = lo.outputs[0].toDoubles();
    QVERIFY(low[0] == -inf && low[1] == 1 && low[2] == inf && std::isnan(low[3]) && std::isnan(low[4]));
    EXPECT_ERROR(runOp("TopK", {x, I64({1}, {5})}, {}, {1}, 2), "node 'node1' (TopK)", "K = 5 is out of range");
    EXPECT_ERROR(runOp("TopK", {x, I64({1}, {2})}, {}, {}, 2), "node 'node1' (TopK)", "input 1 (K) must be a constant");
  }
  void scatterElements() {
    // The ONNX example: rows picked by indices along axis 0.
    Tensor data = F32({3, 3}, V(9, 0.0));
    Tensor idx = I64({2, 3}, {1, 0, 2, 0, 2, 1});
    Tensor upd = F32({2, 3}, {1.0, 1.1, 1.2, 2.0, 2.1, 2.2});
    EXPECT_TENSOR(run1("ScatterElements", {data, idx, upd}), (TensorType{DType::F32, {3, 3}}),
                  (V{2.0, 1.1, 0, 1.0, 0, 2.2, 0, 2.1, 1.2}), 1e-7);
    // Duplicate indices add up with reduction = add; a negative index counts from the end.
    Tensor row = F32({1, 5}, {1, 2, 3, 4, 5});
    EXPECT_TENSOR(run1("ScatterElements", {row, I64({1, 2}, {1, -4}), F32({1, 2}, {1.1, 2.1})},
                       {{"axis", 1}, {"reduction", "add"}}),
                  (TensorType{DType::F32, {1, 5}}), (V{1, 5.2, 3, 4, 5}), 1e-6);
    EXPECT_TENSOR(run1("Scatter", {row, I64({1, 1}, {0}), F32({1, 1}, {9})}, {{"axis", 1}}),
                  (TensorType{DType::F32, {1, 5}}), (V{9, 2, 3, 4, 5}), 0);
    EXPECT_ERROR(run1("ScatterElements", {row, I64({1, 1}, {5}), F32({1, 1}, {9})}, {{"axis", 1}}),
                 "node 'node1' (ScatterElements)", "holds 5 at [0, 0], out of range for axis 1 of extent 5");
    EXPECT_ERROR(run1("ScatterElements", {row, I64({1, 1}, {0}), F32({1, 2}, {9, 9})}),
                 "node 'node1' (ScatterElements)", "input 2 (updates)");
    EXPECT_ERROR(run1("ScatterElements", {row, I64({1, 1}, {0}), F32({1, 1}, {9})}, {{"reduction", "avg"}}),
                 "node 'node1'", "'reduction' = 'avg'");
  }
  void scatterND() {
    // The ONNX example: elements 4, 3, 1 and 7 of [1..8] replaced.
    Tensor data = F32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
    Tensor idx = I64({4, 1}, {4, 3, 1, 7});
    EXPECT_TENSOR(run1("ScatterND", {data, idx, F32({4}, {9, 10, 11, 12})}), (TensorType{DType::F32, {8}}),
                  (V{1, 11, 3, 10, 9, 6, 7, 12}), 0);
    // Whole rows of a 2x2, multiplied in.
    EXPECT_TENSOR(run1("ScatterND", {F32({2, 2}, {1, 2, 3, 4}), I64({1, 1}, {1}), F32({1, 2}, {10, 100})},
                       {{"reduction", "mul"}}),
                  (TensorType{DType::F32, {2, 2}}), (V{1, 2, 30, 400}), 0);
    EXPECT_ERROR(run1("ScatterND", {data, I64({1, 1}, {8}), F32({1}, {0})}), "node 'node1' (ScatterND)",
                 "holds 8 at [0, 0], out of range for axis 0 of extent 8");
  }
  void gatherND() {
    Tensor data = F32({2, 2}, {0, 1, 2, 3});
    EXPECT_TENSOR(run1("GatherND", {data, I64({2, 2}, {0, 0, 1, 1})}), (TensorType{DType::F32, {2}}), (V{0, 3}), 0);
    EXPECT_TENSOR(run1("GatherND", {data, I64({2, 1}, {1, 0})}), (TensorType{DType::F32, {2, 2}}), (V{2, 3, 0, 1}), 0);
    // batch_dims = 1: each batch picks its own row.
    Tensor cube = iota({2, 2, 2});
    EXPECT_TENSOR(run1("GatherND", {cube, I64({2, 1}, {1, 0})}, {{"batch_dims", 1}}), (TensorType{DType::F32, {2, 2}}),
                  (V{2, 3, 4, 5}), 0);
    EXPECT_ERROR(run1("GatherND", {data, I64({1, 3}, {0, 0, 0})}), "node 'node1' (GatherND)", "last dim 3");
    EXPECT_ERROR(run1("GatherND", {data, I64({1, 2}, {0, -3})}), "node 'node1' (GatherND)",
                 "holds -3 at [0, 1], out of range for axis 1 of extent 2");
  }
};

QTEST_GUILESS_MAIN(TestScanScatter)
#include "test_scan_scatter.moc"
