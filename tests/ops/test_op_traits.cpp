// Op traits in the registry against the ONNX definitions: what passes, fusion and kernel lowering ask of an op
// (commutative, neutral operand, shape-only, movement, reduce and pool kinds), and the invariants between traits
// and categories that keep a newly registered op from half-declaring itself.
#include <QtTest>

#include "ops/registry.h"

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
