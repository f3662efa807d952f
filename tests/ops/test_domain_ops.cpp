// The ops of ai.onnx.ml (ml.cpp: Binarizer, ArrayFeatureExtractor, TreeEnsemble; LabelEncoder is in
// test_strings) and ai.onnx.preview.training (training.cpp: Adagrad, Adam, Momentum) against values worked out by
// hand, and their errors naming the node. The ONNX node suite runs them through files too.
#include <QtTest>

#include <cmath>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;
using I = std::vector<int64_t>;
Tensor scalarF32(double v) { return F32({}, {v}); }
Tensor steps(int64_t t) { return I64({}, {t}); }

// One tree over 2 features: node 0 asks x0 <= 1 (true: leaf 0, false: node 1); node 1 asks x1 in {3, 5}
// (true: leaf 1, false: leaf 2); NaN in x0 goes the true way. Leaves: target 0 weight 10, target 1 weight 20,
// target 1 weight 30.
Attributes oneTree() {
  return {{"n_targets", int64_t(2)},
          {"tree_roots", I{0}},
          {"nodes_featureids", I{0, 1}},
          {"nodes_modes", T(DType::U8, {2}, {0, 6})},
          {"nodes_splits", F32({2}, {1, 0})},
          {"nodes_truenodeids", I{0, 1}},
          {"nodes_trueleafs", I{1, 1}},
          {"nodes_falsenodeids", I{1, 2}},
          {"nodes_falseleafs", I{0, 1}},
          {"nodes_missing_value_tracks_true", I{1, 0}},
          {"membership_values", F32({3}, {3, 5, NAN})},
          {"leaf_targetids", I{0, 1, 1}},
          {"leaf_weights", F32({3}, {10, 20, 30})}};
}

}  // namespace

class TestDomainOps : public QObject {
  Q_OBJECT
 private slots:
  void binarizerAndFeatureExtractor() {
    QCOMPARE(run1("ai.onnx.ml::Binarizer", {F32({3}, {-1, 0.5, 2})}, {{"threshold", 0.5}}).toDoubles(), (V{0, 0, 1}));
    Tensor rows = run1("ai.onnx.ml::ArrayFeatureExtractor", {iota({2, 3}), I64({2}, {2, 0})});
    QCOMPARE(rows.shape(), (Shape{2, 2}));
    QCOMPARE(rows.toDoubles(), (V{2, 0, 5, 3}));
    QCOMPARE(run1("ai.onnx.ml::ArrayFeatureExtractor", {iota({3}), I64({1}, {1})}).shape(), (Shape{1, 1}));
    EXPECT_ERROR(run1("ai.onnx.ml::ArrayFeatureExtractor", {iota({2, 3}), I64({1}, {3})}), "holds 3", "extent 3");
  }

  void treeEnsembleWalksEveryRow() {
    Tensor x = F32({4, 2}, {0, 0, 2, 5, 2, 4, NAN, 9});
    Tensor y = run1("ai.onnx.ml::TreeEnsemble", {x}, oneTree());
    QCOMPARE(y.shape(), (Shape{4, 2}));
    QCOMPARE(y.toDoubles(), (V{10, 0, 0, 20, 0, 30, 10, 0}));  // NaN in x0 takes the true way: leaf 0
    Attributes two = oneTree();
    two["tree_roots"] = I{0, 1};  // the subtree at node 1 as a second tree; averaged
    two["aggregate_function"] = int64_t(0);
    QCOMPARE(run1("ai.onnx.ml::TreeEnsemble", {F32({1, 2}, {2, 3})}, two).toDoubles(), (V{0, 20}));
  }

  void treeEnsembleRefusesBrokenTrees() {
    Attributes a = oneTree();
    a["nodes_featureids"] = I{0, 7};
    EXPECT_ERROR(run1("ai.onnx.ml::TreeEnsemble", {F32({1, 2}, {2, 3})}, a), "node 1 reads feature 7 of 2");
    a = oneTree();
    a["nodes_falsenodeids"] = I{1, 0};  // node 1's false branch back to node 0, never a leaf
    a["nodes_falseleafs"] = I{0, 0};
    EXPECT_ERROR(run1("ai.onnx.ml::TreeEnsemble", {F32({1, 2}, {2, 4})}, a), "has a cycle");
    a = oneTree();
    a.erase("membership_values");
    EXPECT_ERROR(run1("ai.onnx.ml::TreeEnsemble", {F32({1, 2}, {2, 4})}, a), "no set for set-membership node 1");
    a = oneTree();
    a["post_transform"] = int64_t(2);
    EXPECT_ERROR(run1("ai.onnx.ml::TreeEnsemble", {F32({1, 2}, {2, 4})}, a), "post_transform");
  }

  void adagradStep() {
    // r = 0.1 / (1 + 2 * 0.5) = 0.05; g' = 0.5 * 2 + 1 = 2; h = 1 + 4 = 5; x = 2 - 0.05 * 2 / (sqrt 5 + 0).
    OpRun r = runOp("ai.onnx.preview.training::Adagrad", {scalarF32(0.1), steps(2), F32({1}, {2}), F32({1}, {1}), F32({1}, {1})},
                    {{"decay_factor", 0.5}, {"norm_coefficient", 0.5}, {"epsilon", 0.0}}, {}, 2);
    QVERIFY(std::abs(r.outputs[0].getDouble(0) - (2 - 0.05 * 2 / std::sqrt(5.0))) < 1e-6);
    QCOMPARE(r.outputs[1].toDoubles(), V{5});
  }

  void momentumStandardAndNesterov() {
    std::vector<Tensor> in = {scalarF32(0.5), steps(1), F32({2}, {1, 1}), F32({2}, {2, 0}), F32({2}, {1, 1})};
    Attributes a{{"alpha", 0.5}, {"beta", 2.0}, {"norm_coefficient", 0.0}, {"mode", "standard"}};
    OpRun s = runOp("ai.onnx.preview.training::Momentum", in, a, {}, 2);
    QCOMPARE(s.outputs[1].toDoubles(), (V{4.5, 0.5}));  // v = 0.5 v + 2 g
    QCOMPARE(s.outputs[0].toDoubles(), (V{1 - 0.5 * 4.5, 1 - 0.5 * 0.5}));
    a["mode"] = "nesterov";
    OpRun n = runOp("ai.onnx.preview.training::Momentum", in, a, {}, 2);
    QCOMPARE(n.outputs[0].toDoubles(), (V{1 - 0.5 * (2 + 0.5 * 4.5), 1 - 0.5 * (0 + 0.5 * 0.5)}));
    in[1] = steps(0);  // the first step takes g whole (beta' = 1)
    QCOMPARE(runOp("ai.onnx.preview.training::Momentum", in, a, {}, 2).outputs[1].toDoubles(), (V{2.5, 0.5}));
    a["mode"] = "heavy";
    EXPECT_ERROR(runOp("ai.onnx.preview.training::Momentum", in, a, {}, 2), "mode = 'heavy'");
  }

  void adamRefusesUnevenOperands() {
    std::vector<Tensor> five(5, F32({1}, {1}));
    five.insert(five.begin(), {scalarF32(0.1), steps(1)});
    EXPECT_ERROR(runOp("ai.onnx.preview.training::Adam", five, {}, {}, 3), "7 inputs: expected R, T and 4 tensors");
    EXPECT_ERROR(runOp("ai.onnx.preview.training::Adam", {scalarF32(0.1), steps(1), F32({1}, {1}), F32({2}, {1, 1}), F32({1}, {1}), F32({1}, {1})}, {}, {}, 3),
                 "input 3 is f32[2]; it must match X f32[1]");
  }
};

QTEST_MAIN(TestDomainOps)
#include "test_domain_ops.moc"
