// Op traits in the registry against the ONNX definitions: what passes, fusion and kernel lowering ask of an op
// (commutative, neutral operand, shape-only, movement, reduce and pool kinds), and the invariants between traits
// and categories that keep a newly registered op from half-declaring itself.
#include <QtTest>

#include <map>

#include "ops/builder.h"
#include "ops/registry.h"
#include "ops/stats.h"

using namespace tessera;

class TestOpTraits : public QObject {
  Q_OBJECT
 private slots:
  void arithmeticFollowsOnnx() {
    const OpTraits& add = opTraits("Add");
    QVERIFY(add.commutative);
    QCOMPARE(add.neutral, std::optional<double>(0.0));
    QCOMPARE(OpRegistry::instance().find("Add")->category, OpCategory::Pointwise);  // elementwise
    QVERIFY(!opTraits("Sub").commutative);  // a - b != b - a
    QCOMPARE(opTraits("Sub").neutral, std::optional<double>(0.0));
    QVERIFY(opTraits("Mul").commutative);
    QCOMPARE(opTraits("Mul").neutral, std::optional<double>(1.0));
    QVERIFY(!opTraits("Div").commutative);
    QVERIFY(!opTraits("Pow").commutative);
    QCOMPARE(opTraits("Pow").neutral, std::optional<double>(1.0));
    QVERIFY(!opTraits("Max").neutral);  // no finite neutral element
    for (const char* op : {"Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal", "BitwiseAnd"})
      QVERIFY2(opTraits(op).commutative, op);
    for (const char* op : {"Less", "Greater", "Mod", "BitShift", "MatMul", "Concat"})
      QVERIFY2(!opTraits(op).commutative, op);
    QVERIFY(opTraits("Sum").identityWhenUnary);
    QVERIFY(!opTraits("Add").identityWhenUnary);
  }
  // The work a node does, which the run report divides by the kernel's time (GFLOP/s): 2 per multiply-add of the
  // products, one a produced element for pointwise ops and scans.
  void flopsCountEachOpsWork() {
    GraphBuilder b("flops");
    Value* x = b.input("x", {DType::F32, {1, 4, 5, 5}});
    Value* w = b.constant("w", Tensor(DType::F32, {4, 3, 3, 3}));  // ConvTranspose: [Cin, Cout, kh, kw]
    Value* up = b.op("ConvTranspose", {x, w});                     // [1, 3, 7, 7]
    Value* wc = b.constant("wc", Tensor(DType::F32, {6, 3, 3, 3}));
    Value* conv = b.op("Conv", {up, wc});                           // [1, 6, 5, 5]
    Value* scan = b.op("CumSum", {conv, b.ints("axis", {3})});
    b.output(b.op("Relu", {scan}));
    Graph g = b.finish();
    std::map<std::string, int64_t> flops;
    for (Node* n : g.nodes()) flops[n->op()] = nodeFlops(*n);
    QCOMPARE(flops["ConvTranspose"], int64_t(2 * 100 * 27));  // 100 input elements, 3 x 3 x 3 outputs each
    QCOMPARE(flops["Conv"], int64_t(2 * 150 * 27));          // 150 outputs, 3 x 3 x 3 products each
    QCOMPARE(flops["CumSum"], int64_t(150));
    QCOMPARE(flops["Relu"], int64_t(150));
  }
  void shapeOnlyOps() {
    QVERIFY(opTraits("Shape").shapeOnly);
    QVERIFY(opTraits("Size").shapeOnly);
    QVERIFY(!opTraits("Identity").shapeOnly);
    QVERIFY(!opTraits("ConstantOfShape").shapeOnly);  // reads its input's data
  }
  void movementKinds() {
    for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
      QVERIFY2(opTraits(op).movement == MovementKind::View, op);
    for (const char* op : {"Transpose", "Slice", "Gather", "Concat", "Expand", "Tile", "Split"})
      QVERIFY2(opTraits(op).movement == MovementKind::Reindex, op);
    QVERIFY(opTraits("Pad").movement == MovementKind::None);       // writes fill values
    QVERIFY(opTraits("Identity").movement == MovementKind::None);  // a pointwise copy
    QVERIFY(opTraits("Expand").identityWhenTypeKept);
    QVERIFY(!opTraits("Transpose").identityWhenTypeKept);  // same type, permuted data
  }
  void reductionsAndPools() {
    QVERIFY(opTraits("ReduceSum").reduce == ReduceKind::Sum);
    QVERIFY(opTraits("ReduceMean").reduce == ReduceKind::Mean);
    QVERIFY(opTraits("ReduceProd").reduce == ReduceKind::Other);
    QVERIFY(opTraits("ReduceSum").pool == PoolKind::None);
    QVERIFY(opTraits("MaxPool").pool == PoolKind::Window && opTraits("MaxPool").reduce == ReduceKind::Max);
    QVERIFY(opTraits("GlobalAveragePool").pool == PoolKind::Global);
    QVERIFY(opTraits("MaxPool").hasNhwcForm && opTraits("Conv").hasNhwcForm);
    QVERIFY(!opTraits("LpPool").hasNhwcForm);
    QVERIFY(opTraits("Softmax").rowNormalization && opTraits("LayerNormalization").rowNormalization);
    QVERIFY(!opTraits("Hardmax").rowNormalization);  // one pass: the arg max of the row
    QVERIFY(opTraits("Dropout").randomInTraining && !opTraits("Dropout").random);
  }
  void unknownOpHasNoTraits() {
    const OpTraits& t = opTraits("NoSuchOp");
    QVERIFY(!t.commutative && !t.neutral && !t.shapeOnly && t.movement == MovementKind::None);
  }
  // Every Reduce* op and every pool says what it accumulates; movement ops are data-movement; commutative and
  // neutral-operand ops are pointwise.
  void traitsAgreeWithCategories() {
    const OpRegistry& r = OpRegistry::instance();
    for (const std::string& name : r.names()) {
      const OpSchema& s = *r.find(name);
      const OpTraits& t = s.traits;
      QByteArray n = QByteArray::fromStdString(name);
      if (name.starts_with("Reduce")) QVERIFY2(t.reduce != ReduceKind::None, n);
      if (t.pool != PoolKind::None) QVERIFY2(t.reduce != ReduceKind::None, n);
      if (t.movement != MovementKind::None) QVERIFY2(s.category == OpCategory::DataMovement, n);
      if (t.commutative || t.neutral) QVERIFY2(s.category == OpCategory::Pointwise, n);
    }
  }
};

QTEST_GUILESS_MAIN(TestOpTraits)
#include "test_op_traits.moc"
