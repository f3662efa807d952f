// Sequence and optional values (ir/shape.h ValueKind) and their ops: the types' text, the values, the sequence
// ops (SequenceInsert/At/Erase/Length, SplitToSequence, ConcatFromSequence) and the optional ops against values
// worked out by hand, and the errors naming the node. The ONNX node suite runs them through files too
// (tests/cli, onnx_node_packed_*).
#include <QtTest>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;
Tensor seqOf(std::vector<Tensor> elements) {
  DType dtype = elements.at(0).dtype();  // before the move: arguments are evaluated in no set order
  return Tensor::sequence(dtype, std::move(elements));
}
Tensor scalarI64(int64_t v) { return I64({}, {v}); }
const TensorType kSeqF32 = TensorType::container(ValueKind::Sequence, DType::F32);

}  // namespace

class TestContainers : public QObject {
  Q_OBJECT
 private slots:
  void typesReadBackFromTheirText() {
    for (ValueKind k : {ValueKind::Sequence, ValueKind::Optional, ValueKind::OptionalSequence}) {
      TensorType t = TensorType::container(k, DType::I32);
      QCOMPARE(TensorType::fromString(t.toString()), std::optional<TensorType>(t));
      QCOMPARE(t.numElements(), int64_t(0));
    }
    QCOMPARE(TensorType::container(ValueKind::OptionalSequence, DType::F16).toString(), std::string("opt<seq<f16>>"));
    for (const char* bad : {"seq<f32", "seq<>", "opt<seq<f32>", "seq<f32[2]>", "opt<opt<f32>>", "seq<zz>"})
      QVERIFY2(!TensorType::fromString(bad), bad);
    QVERIFY((TensorType{DType::F32, {}} != kSeqF32));  // a scalar is not an empty-shaped sequence
  }

  void valuesCompareByTheirElements() {
    Tensor a = seqOf({F32({2}, {1, 2}), F32({1}, {3})});
    Tensor b = seqOf({F32({2}, {1, 2}), F32({1}, {4})});
    QVERIFY(a.identical(seqOf({F32({2}, {1, 2}), F32({1}, {3})})));
    QVERIFY(!a.identical(b));
    QVERIFY(a.hash() != b.hash());
    QVERIFY(!a.identical(seqOf({F32({2}, {1, 2})})));
    EXPECT_ERROR(Tensor::sequence(DType::F32, {I64({1}, {1})}), "cannot hold element 0 of type i64[1]");
    TensorType opt = TensorType::container(ValueKind::Optional, DType::F32);
    QVERIFY(Tensor::optional(opt, std::nullopt).elements().empty());
    EXPECT_ERROR(Tensor::optional(opt, a), "opt<f32> cannot hold a value of type seq<f32>");
  }

  void insertEraseAndLength() {
    Tensor s = seqOf({F32({1}, {1}), F32({2}, {2, 3})});
    Tensor at0 = run1("SequenceInsert", {s, F32({}, {9}), scalarI64(0)});
    QCOMPARE(at0.type(), kSeqF32);
    QCOMPARE(at0.elements().size(), size_t(3));
    QCOMPARE(at0.elements()[0].toDoubles(), V{9});
    Tensor atEnd = run1("SequenceInsert", {s, F32({}, {9})});
    QCOMPARE(atEnd.elements()[2].toDoubles(), V{9});
    Tensor beforeLast = run1("SequenceInsert", {s, F32({}, {9}), scalarI64(-1)});
    QCOMPARE(beforeLast.elements()[1].toDoubles(), V{9});
    EXPECT_ERROR(run1("SequenceInsert", {s, F32({}, {9}), scalarI64(3)}), "node 'node1' (SequenceInsert)",
                 "position 3 is out of range for a sequence of 2 elements (-2..2 are valid)");
    EXPECT_ERROR(run1("SequenceInsert", {s, I64({}, {9})}), "node 'node1' (SequenceInsert)", "input 1 is i64[]");
    Tensor erased = run1("SequenceErase", {s});
    QCOMPARE(erased.elements().size(), size_t(1));
    QCOMPARE(erased.elements()[0].toDoubles(), V{1});
    QCOMPARE(run1("SequenceErase", {s, scalarI64(-2)}).elements()[0].toDoubles(), (V{2, 3}));
    EXPECT_ERROR(run1("SequenceErase", {Tensor::sequence(DType::F32, {})}), "cannot erase from an empty sequence");
    QCOMPARE(run1("SequenceLength", {s}).getInt(0), int64_t(2));
    QCOMPARE(run1("SequenceEmpty", {}, {{"dtype", 7}}).type(), TensorType::container(ValueKind::Sequence, DType::I64));
    QCOMPARE(run1("SequenceConstruct", {F32({1}, {1}), F32({3}, {1, 2, 3})}).elements()[1].shape(), (Shape{3}));
  }

  // SequenceAt's output shape is its element's: known when the sequence is (a constant here); a sequence known only
  // when the graph runs needs its node specialized, and plain inference says so.
  void sequenceAtNeedsTheSequence() {
    Tensor s = seqOf({F32({1}, {1}), F32({2}, {2, 3})});
    OpRun r = runOp("SequenceAt", {s, scalarI64(-1)}, {}, {0, 1});
    QCOMPARE(r.inferred[0], (TensorType{DType::F32, {2}}));
    QCOMPARE(r.outputs[0].toDoubles(), (V{2, 3}));
    EXPECT_ERROR(runOp("SequenceAt", {s, scalarI64(2)}, {}, {0, 1}), "position 2 is out of range");
    EXPECT_ERROR(runOp("SequenceAt", {s, scalarI64(0)}, {}, {1}), "node 'node1' (SequenceAt)",
                 "input 0 (input_sequence) must be a constant");
  }

  void splitToSequence() {
    Tensor x = iota({2, 5});
    Tensor byTwo = run1("SplitToSequence", {x, scalarI64(2)}, {{"axis", 1}});
    QCOMPARE(byTwo.elements().size(), size_t(3));  // 2 + 2 + 1
    QCOMPARE(byTwo.elements()[1].toDoubles(), (V{2, 3, 7, 8}));
    QCOMPARE(byTwo.elements()[2].shape(), (Shape{2, 1}));
    Tensor listed = run1("SplitToSequence", {x, I64({2}, {1, 4})}, {{"axis", -1}});
    QCOMPARE(listed.elements()[1].toDoubles(), (V{1, 2, 3, 4, 6, 7, 8, 9}));
    Tensor rows = run1("SplitToSequence", {x}, {{"keepdims", 0}});
    QCOMPARE(rows.elements()[1].shape(), (Shape{5}));
    QCOMPARE(rows.elements()[1].toDoubles(), (V{5, 6, 7, 8, 9}));
    EXPECT_ERROR(run1("SplitToSequence", {x, I64({2}, {1, 3})}, {{"axis", 1}}), "node 'node1' (SplitToSequence)",
                 "split [1,3] sums to 4, not the axis extent 5");
    EXPECT_ERROR(run1("SplitToSequence", {x, scalarI64(0)}), "split = 0 must be positive");
  }

  void concatFromSequence() {
    Tensor s = seqOf({iota({2, 1}), F32({2, 2}, {10, 11, 12, 13})});
    OpRun cat = runOp("ConcatFromSequence", {s}, {{"axis", 1}}, {0});
    QCOMPARE(cat.inferred[0], (TensorType{DType::F32, {2, 3}}));
    QCOMPARE(cat.outputs[0].toDoubles(), (V{0, 10, 11, 1, 12, 13}));
    Tensor same = seqOf({F32({2}, {1, 2}), F32({2}, {3, 4})});
    OpRun stacked = runOp("ConcatFromSequence", {same}, {{"axis", -1}, {"new_axis", 1}}, {0});
    QCOMPARE(stacked.inferred[0], (TensorType{DType::F32, {2, 2}}));
    QCOMPARE(stacked.outputs[0].toDoubles(), (V{1, 3, 2, 4}));
    EXPECT_ERROR(runOp("ConcatFromSequence", {s}, {{"axis", 0}}, {0}), "node 'node1' (ConcatFromSequence)",
                 "element 1 is f32[2,2] but element 0 is f32[2,1]");
  }

  void optionals() {
    Tensor x = F32({2}, {1, 2});
    Tensor held = run1("Optional", {x});
    QCOMPARE(held.type(), TensorType::container(ValueKind::Optional, DType::F32));
    QCOMPARE(run1("OptionalHasElement", {held}).getInt(0), int64_t(1));
    Tensor none = run1("Optional", {}, {{"type", std::string("seq<i32>")}});
    QCOMPARE(none.type(), TensorType::container(ValueKind::OptionalSequence, DType::I32));
    QCOMPARE(run1("OptionalHasElement", {none}).getInt(0), int64_t(0));
    QCOMPARE(run1("OptionalHasElement", {x}).getInt(0), int64_t(1));  // a tensor always has its value
    QCOMPARE(run1("OptionalHasElement", {}).getInt(0), int64_t(0));   // no input: nothing
    OpRun got = runOp("OptionalGetElement", {held}, {}, {0});
    QCOMPARE(got.inferred[0], x.type());
    QCOMPARE(got.outputs[0].toDoubles(), (V{1, 2}));
    QVERIFY(run1("OptionalGetElement", {x}).identical(x));
    EXPECT_ERROR(run1("OptionalGetElement", {none}), "node 'node1' (OptionalGetElement)", "input 0 is an empty optional");
    EXPECT_ERROR(run1("Optional", {}, {{"type", std::string("opt<f32>")}}), "is not the type of a tensor or a sequence");
  }

  // Every op that does not take containers says so, instead of reading a sequence as a scalar.
  void tensorOpsRefuseContainers() {
    Tensor s = seqOf({F32({1}, {1})});
    EXPECT_ERROR(run1("Relu", {s}), "node 'node1' (Relu)", "input 0 is a seq<f32>; Relu takes tensors");
    EXPECT_ERROR(run1("Add", {F32({}, {1}), s}), "input 1 is a seq<f32>");
    QVERIFY(run1("Identity", {s}).identical(s));  // Identity passes any value through
  }
};

QTEST_MAIN(TestContainers)
#include "test_containers.moc"
