// Data-movement ops against hand-checked values: rank 0, zero-size axes, negative axes, and error messages.
#include <QtTest>

#include <limits>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

Tensor ints(std::vector<int64_t> v) { return I64({int64_t(v.size())}, v); }


using V = std::vector<double>;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();

}  // namespace

class TestShapeOps : public QObject {
  Q_OBJECT
 private slots:
  void reshape() {
    EXPECT_TENSOR(run1("Reshape", {iota({2, 3}), ints({3, -1})}, {}, {1}), (TensorType{DType::F32, {3, 2}}),
                  (V{0, 1, 2, 3, 4, 5}), 0);
    Tensor z = run1("Reshape", {iota({2, 3, 4}, DType::I64), ints({0, -1})}, {}, {1});
    QCOMPARE(z.type(), (TensorType{DType::I64, {2, 12}}));
    QCOMPARE(z.getInt(23), int64_t(23));
    Tensor a = run1("Reshape", {F32({0, 3}, {}), ints({3, 0})}, {{"allowzero", 1}}, {1});
    QCOMPARE(a.type(), (TensorType{DType::F32, {3, 0}}));
    EXPECT_TENSOR(run1("Reshape", {F32({}, {7}), ints({1, 1})}, {}, {1}), (TensorType{DType::F32, {1, 1}}), (V{7}), 0);
    EXPECT_TENSOR(run1("Reshape", {F32({1}, {7}), ints({})}, {}, {1}), (TensorType{DType::F32, {}}), (V{7}), 0);
  }
  void reshapeErrors() {
    EXPECT_ERROR(run1("Reshape", {iota({2, 3}), ints({-1, -1})}, {}, {1}), "node 'node1' (Reshape)",
                 "more than one -1");
    EXPECT_ERROR(run1("Reshape", {iota({2, 3}), ints({4, 2})}, {}, {1}), "node 'node1'", "cannot reshape [2,3]");
    EXPECT_ERROR(run1("Reshape", {iota({2, 3}), ints({6})}), "node 'node1'", "input 1 (shape) must be a constant");
    EXPECT_ERROR(run1("Reshape", {iota({2, 3}), F32({1}, {6})}, {}, {1}), "node 'node1'", "integer tensor");
  }
  void flatten() {
    QCOMPARE(run1("Flatten", {iota({2, 3, 4})}, {{"axis", 2}}).shape(), (Shape{6, 4}));
    QCOMPARE(run1("Flatten", {iota({2, 3, 4})}, {{"axis", -1}}).shape(), (Shape{6, 4}));
    QCOMPARE(run1("Flatten", {iota({2, 3, 4})}, {{"axis", 0}}).shape(), (Shape{1, 24}));
    QCOMPARE(run1("Flatten", {iota({2, 3, 4})}, {{"axis", 3}}).shape(), (Shape{24, 1}));
    QCOMPARE(run1("Flatten", {F32({}, {1})}, {{"axis", 0}}).shape(), (Shape{1, 1}));
    EXPECT_ERROR(run1("Flatten", {iota({2, 3})}, {{"axis", 3}}), "node 'node1' (Flatten)", "axis 3 is out of range");
  }
  void transpose() {
    EXPECT_TENSOR(run1("Transpose", {iota({2, 3})}), (TensorType{DType::F32, {3, 2}}), (V{0, 3, 1, 4, 2, 5}), 0);
    // perm [1,2,0] of [2,3,4]: out[j,k,i] = in[i,j,k] = 12i + 4j + k.
    Tensor y = run1("Transpose", {iota({2, 3, 4}, DType::I16)}, {{"perm", std::vector<int64_t>{1, 2, 0}}});
    QCOMPARE(y.type(), (TensorType{DType::I16, {3, 4, 2}}));
    QCOMPARE(y.getInt(1), int64_t(12));         // out[0,0,1] = in[1,0,0]
    QCOMPARE(y.getInt(2 * 4 * 2 + 3 * 2), int64_t(11));  // out[2,3,0] = in[0,2,3]
    EXPECT_TENSOR(run1("Transpose", {F32({}, {5})}), (TensorType{DType::F32, {}}), (V{5}), 0);
    EXPECT_TENSOR(run1("Transpose", {F32({2, 0}, {})}), (TensorType{DType::F32, {0, 2}}), (V{}), 0);
    EXPECT_ERROR(run1("Transpose", {iota({2, 3})}, {{"perm", std::vector<int64_t>{0, 0}}}), "node 'node1' (Transpose)",
                 "not a permutation");
  }
  void concat() {
    Tensor y = run1("Concat", {F32({2, 1}, {1, 2}), F32({2, 2}, {3, 4, 5, 6}), F32({2, 0}, {})}, {{"axis", -1}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 3}}), (V{1, 3, 4, 2, 5, 6}), 0);
    Tensor b = run1("Concat", {T(DType::Bool, {1}, {1}), T(DType::Bool, {2}, {0, 1})}, {{"axis", 0}});
    EXPECT_TENSOR(b, (TensorType{DType::Bool, {3}}), (V{1, 0, 1}), 0);
    EXPECT_ERROR(run1("Concat", {F32({2, 1}, {1, 2}), F32({3, 1}, {1, 2, 3})}, {{"axis", 1}}),
                 "node 'node1' (Concat)", "input 1 [3,1] differs from input 0 [2,1]");
    EXPECT_ERROR(run1("Concat", {F32({1}, {1}), F32({1}, {1})}), "node 'node1'", "axis is required");
    EXPECT_ERROR(run1("Concat", {F32({1}, {1}), T(DType::I32, {1}, {1})}, {{"axis", 0}}), "node 'node1'",
                 "dtypes must match");
  }
  void split() {
    OpRun r = runOp("Split", {iota({6}), ints({1, 2, 3})}, {}, {1}, 3);
    EXPECT_TENSOR(r.outputs[0], (TensorType{DType::F32, {1}}), (V{0}), 0);
    EXPECT_TENSOR(r.outputs[1], (TensorType{DType::F32, {2}}), (V{1, 2}), 0);
    EXPECT_TENSOR(r.outputs[2], (TensorType{DType::F32, {3}}), (V{3, 4, 5}), 0);
    OpRun n = runOp("Split", {iota({7})}, {{"num_outputs", 4}}, {}, 4);
    QCOMPARE(n.outputs[3].shape(), (Shape{1}));
    QCOMPARE(n.outputs[3].getDouble(0), 6.0);
    OpRun e = runOp("Split", {iota({2, 4})}, {{"axis", -1}}, {}, 2);
    EXPECT_TENSOR(e.outputs[1], (TensorType{DType::F32, {2, 2}}), (V{2, 3, 6, 7}), 0);
    OpRun z = runOp("Split", {iota({2}), ints({0, 2})}, {}, {1}, 2);
    QCOMPARE(z.outputs[0].shape(), (Shape{0}));
    EXPECT_ERROR(runOp("Split", {iota({6}), ints({1, 2})}, {}, {1}, 2), "node 'node1' (Split)",
                 "does not add up to the extent 6");
    EXPECT_ERROR(runOp("Split", {iota({6}), ints({1, 5})}, {}, {1}, 3), "node 'node1'", "has 3 outputs");
    EXPECT_ERROR(runOp("Split", {iota({5})}, {{"num_outputs", 4}}, {}, 4), "node 'node1'",
                 "cannot be split into 4 parts");
  }
  void slice() {
    Tensor x = iota({3, 4});
    EXPECT_TENSOR(run1("Slice", {x, ints({0, 1}), ints({2, 3})}, {}, {1, 2}), (TensorType{DType::F32, {2, 2}}),
                  (V{1, 2, 5, 6}), 0);
    // Negative step from the end to "before the start" reverses an axis; negative axis.
    Tensor r = run1("Slice", {x, ints({-1}), ints({kMin}), ints({-1}), ints({-1})}, {}, {1, 2, 3, 4});
    EXPECT_TENSOR(r, (TensorType{DType::F32, {3, 4}}), (V{3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8}), 0);
    // Ends past the extent clamp; step 2.
    Tensor s = run1("Slice", {x, ints({1}), ints({1000}), ints({1}), ints({2})}, {}, {1, 2, 3, 4});
    EXPECT_TENSOR(s, (TensorType{DType::F32, {3, 2}}), (V{1, 3, 5, 7, 9, 11}), 0);
    // Starts past the extent give an empty axis; step -2 from a clamped start.
    QCOMPARE(run1("Slice", {x, ints({10}), ints({kMax}), ints({0})}, {}, {1, 2, 3}).shape(), (Shape{0, 4}));
    Tensor b = run1("Slice", {x, ints({100}), ints({0}), ints({1}), ints({-2})}, {}, {1, 2, 3, 4});
    EXPECT_TENSOR(b, (TensorType{DType::F32, {3, 2}}), (V{3, 1, 7, 5, 11, 9}), 0);
    QCOMPARE(run1("Slice", {F32({0, 2}, {}), ints({0}), ints({-1}), ints({0}), ints({-1})}, {}, {1, 2, 3, 4}).shape(),
             (Shape{0, 2}));
    EXPECT_ERROR(run1("Slice", {x, ints({0}), ints({1}), ints({0}), ints({0})}, {}, {1, 2, 3, 4}),
                 "node 'node1' (Slice)", "zero step");
    EXPECT_ERROR(run1("Slice", {x, ints({0}), ints({1}), ints({2})}, {}, {1, 2, 3}), "node 'node1'",
                 "out of range or repeated");
  }
  void gather() {
    Tensor data = F32({3, 2}, {1, 2, 3, 4, 5, 6});
    Tensor y = run1("Gather", {data, I64({2, 2}, {0, 2, -1, 1})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 2, 2}}), (V{1, 2, 5, 6, 5, 6, 3, 4}), 0);
    Tensor s = run1("Gather", {data, T(DType::I32, {}, {1})}, {{"axis", -1}});
    EXPECT_TENSOR(s, (TensorType{DType::F32, {3}}), (V{2, 4, 6}), 0);
    EXPECT_TENSOR(run1("Gather", {data, I64({0}, {})}), (TensorType{DType::F32, {0, 2}}), (V{}), 0);
    EXPECT_ERROR(run1("Gather", {data, I64({1}, {3})}), "node 'node1' (Gather)", "holds 3 at [0]",
                 "out of range for axis 0 of extent 3 (-3..2 are valid)");
    EXPECT_ERROR(run1("Gather", {data, F32({1}, {0})}), "node 'node1'", "input 1 is f32");
    EXPECT_ERROR(run1("Gather", {data, I64({1}, {0})}, {{"axis", 2}}), "node 'node1'", "axis 2 is out of range");
  }
  void gatherElements() {
    Tensor y = run1("GatherElements", {F32({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, 0})}, {{"axis", 1}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 2}}), (V{1, 1, 4, 3}), 0);
    Tensor z = run1("GatherElements", {iota({3, 3}), I64({2, 3}, {1, 2, 0, 2, 0, -3})});
    EXPECT_TENSOR(z, (TensorType{DType::F32, {2, 3}}), (V{3, 7, 2, 6, 1, 2}), 0);
    EXPECT_ERROR(run1("GatherElements", {iota({2, 2}), I64({3, 1}, {0, 0, 0})}, {{"axis", 1}}),
                 "node 'node1' (GatherElements)", "exceed data");
  }
  void squeezeUnsqueeze() {
    QCOMPARE(run1("Squeeze", {iota({1, 3, 1, 2})}).shape(), (Shape{3, 2}));
    QCOMPARE(run1("Squeeze", {iota({1, 3, 1, 2}), ints({-2})}, {}, {1}).shape(), (Shape{1, 3, 2}));
    QCOMPARE(run1("Squeeze", {F32({1}, {4})}).shape(), (Shape{}));
    EXPECT_ERROR(run1("Squeeze", {iota({1, 3}), ints({1})}, {}, {1}), "node 'node1' (Squeeze)", "not 1");
    Tensor u = run1("Unsqueeze", {iota({3}), ints({0, -1})}, {}, {1});
    EXPECT_TENSOR(u, (TensorType{DType::F32, {1, 3, 1}}), (V{0, 1, 2}), 0);
    QCOMPARE(run1("Unsqueeze", {F32({}, {2}), ints({0})}, {}, {1}).shape(), (Shape{1}));
    QCOMPARE(run1("Unsqueeze", {iota({2, 2}), ints({3, 1})}, {}, {1}).shape(), (Shape{2, 1, 2, 1}));
    EXPECT_ERROR(run1("Unsqueeze", {iota({3}), ints({1, -2})}, {}, {1}), "node 'node1' (Unsqueeze)", "repeated");
    EXPECT_ERROR(run1("Unsqueeze", {iota({3}), ints({3})}, {}, {1}), "node 'node1'", "out of range");
  }
  void expand() {
    Tensor y = run1("Expand", {F32({3, 1}, {1, 2, 3}), ints({2, 1, 2})}, {}, {1});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 3, 2}}), (V{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}), 0);
    // The shape may be smaller than the input: broadcasting goes both ways.
    EXPECT_TENSOR(run1("Expand", {F32({3}, {1, 2, 3}), ints({1})}, {}, {1}), (TensorType{DType::F32, {3}}),
                  (V{1, 2, 3}), 0);
    EXPECT_TENSOR(run1("Expand", {F32({}, {4}), ints({2, 0})}, {}, {1}), (TensorType{DType::F32, {2, 0}}), (V{}), 0);
    EXPECT_ERROR(run1("Expand", {F32({3}, {1, 2, 3}), ints({2})}, {}, {1}), "node 'node1' (Expand)",
                 "does not broadcast");
  }
  void tile() {
    EXPECT_TENSOR(run1("Tile", {F32({2}, {1, 2}), ints({3})}, {}, {1}), (TensorType{DType::F32, {6}}),
                  (V{1, 2, 1, 2, 1, 2}), 0);
    EXPECT_TENSOR(run1("Tile", {F32({2, 2}, {1, 2, 3, 4}), ints({2, 1})}, {}, {1}), (TensorType{DType::F32, {4, 2}}),
                  (V{1, 2, 3, 4, 1, 2, 3, 4}), 0);
    EXPECT_TENSOR(run1("Tile", {F32({1, 2}, {1, 2}), ints({2, 2})}, {}, {1}), (TensorType{DType::F32, {2, 4}}),
                  (V{1, 2, 1, 2, 1, 2, 1, 2}), 0);
    QCOMPARE(run1("Tile", {F32({2}, {1, 2}), ints({0})}, {}, {1}).shape(), (Shape{0}));
    EXPECT_ERROR(run1("Tile", {F32({2}, {1, 2}), ints({1, 1})}, {}, {1}), "node 'node1' (Tile)", "one value per axis");
    // An element count past int64 is refused at inference, naming the node.
    EXPECT_ERROR(run1("Tile", {F32({2, 2}, {1, 2, 3, 4}), ints({kMax / 2, kMax / 2})}, {}, {1}), "node 'node1' (Tile)",
                 "too many elements");
  }
  void pad() {
    Tensor x = F32({3}, {1, 2, 3});
    EXPECT_TENSOR(run1("Pad", {x, ints({2, 1}), F32({}, {9})}, {}, {1}), (TensorType{DType::F32, {6}}),
                  (V{9, 9, 1, 2, 3, 9}), 0);
    EXPECT_TENSOR(run1("Pad", {x, ints({2, 2})}, {{"mode", "reflect"}}, {1}), (TensorType{DType::F32, {7}}),
                  (V{3, 2, 1, 2, 3, 2, 1}), 0);
    EXPECT_TENSOR(run1("Pad", {x, ints({2, 2})}, {{"mode", "edge"}}, {1}), (TensorType{DType::F32, {7}}),
                  (V{1, 1, 1, 2, 3, 3, 3}), 0);
    EXPECT_TENSOR(run1("Pad", {x, ints({1, 2})}, {{"mode", "wrap"}}, {1}), (TensorType{DType::F32, {6}}),
                  (V{3, 1, 2, 3, 1, 2}), 0);
    EXPECT_TENSOR(run1("Pad", {x, ints({-1, 0})}, {}, {1}), (TensorType{DType::F32, {2}}), (V{2, 3}), 0);
    // Only axis -1 of a [2,2] is padded, through the axes input; the constant defaults to 0.
    Tensor y = run1("Pad", {F32({2, 2}, {1, 2, 3, 4}), ints({1, 0}), Tensor(), ints({-1})}, {}, {1, 3});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 3}}), (V{0, 1, 2, 0, 3, 4}), 0);
    // Integer data keeps its dtype and exact values; reflect on a 2-D input mirrors each axis.
    Tensor big = run1("Pad", {I64({2}, {int64_t(1) << 60, 5}), ints({1, 0}), I64({}, {-7})}, {}, {1});
    QCOMPARE(big.type(), (TensorType{DType::I64, {3}}));
    QCOMPARE(big.getInt(0), int64_t(-7));
    QCOMPARE(big.getInt(1), int64_t(1) << 60);
    Tensor m = run1("Pad", {F32({2, 2}, {1, 2, 3, 4}), ints({1, 1, 0, 0})}, {{"mode", "reflect"}}, {1});
    EXPECT_TENSOR(m, (TensorType{DType::F32, {3, 3}}), (V{4, 3, 4, 2, 1, 2, 4, 3, 4}), 0);
    EXPECT_ERROR(run1("Pad", {x, ints({1})}, {}, {1}), "node 'node1' (Pad)", "2 values per padded axis");
    EXPECT_ERROR(run1("Pad", {x, ints({-2, -2})}, {}, {1}), "node 'node1'", "below zero");
    EXPECT_ERROR(run1("Pad", {x, ints({1, 1})}, {{"mode", "mirror"}}, {1}), "node 'node1'", "mode 'mirror'");
  }
};

QTEST_GUILESS_MAIN(TestShapeOps)
#include "test_shape_ops.moc"
