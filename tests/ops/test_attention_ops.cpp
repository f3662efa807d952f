// Attention, RotaryEmbedding and RMSNormalization against values worked out by hand: softmax weights written as
// e^a / (e^a + e^b), rotations by 90 and 0 degrees, a root mean square of two numbers.
#include <QtTest>

#include <cmath>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;

// Softmax weight of score a against score b.
double weight(double a, double b) { return std::exp(a) / (std::exp(a) + std::exp(b)); }

}  // namespace

class TestAttentionOps : public QObject {
  Q_OBJECT
 private slots:
  void rmsNormalization() {
    // rms([3, 4]) = sqrt(12.5); scale [1, 2].
    double rms = std::sqrt(12.5);
    EXPECT_TENSOR(run1("RMSNormalization", {F32({1, 2}, {3, 4}), F32({2}, {1, 2})}, {{"epsilon", 0.0}}),
                  (TensorType{DType::F32, {1, 2}}), (V{3 / rms, 8 / rms}), 1e-6);
    // axis 0 over [2, 1]: one row of both elements.
    EXPECT_TENSOR(run1("RMSNormalization", {F32({2, 1}, {3, 4}), F32({1}, {1})}, {{"epsilon", 0.0}, {"axis", 0}}),
                  (TensorType{DType::F32, {2, 1}}), (V{3 / rms, 4 / rms}), 1e-6);
    EXPECT_ERROR(run1("RMSNormalization", {F32({1, 2}, {3, 4}), F32({3}, {1, 1, 1})}),
                 "node 'node1' (RMSNormalization)", "input 1 (scale)");
  }
  void rotaryEmbedding() {
    // One head of 4 features; the first pair rotates by 90 degrees (cos 0, sin 1), the second by 0.
    Tensor x = F32({1, 1, 1, 4}, {1, 2, 3, 4});
    Tensor cos = F32({1, 1, 2}, {0, 1}), sin = F32({1, 1, 2}, {1, 0});
    // Pairs (0, 2) and (1, 3): (1, 3) -> (-3, 1); (2, 4) unchanged.
    EXPECT_TENSOR(run1("RotaryEmbedding", {x, cos, sin}), (TensorType{DType::F32, {1, 1, 1, 4}}), (V{-3, 2, 1, 4}), 0);
    // Interleaved pairs (0, 1) and (2, 3): (1, 2) -> (-2, 1).
    EXPECT_TENSOR(run1("RotaryEmbedding", {x, cos, sin}, {{"interleaved", 1}}), (TensorType{DType::F32, {1, 1, 1, 4}}),
                  (V{-2, 1, 3, 4}), 0);
    // 3-D input with num_heads and position ids picking cache row 1 (the 90-degree row) of two.
    Tensor cache2c = F32({2, 2}, {1, 1, 0, 1}), cache2s = F32({2, 2}, {0, 0, 1, 0});
    Tensor y = run1("RotaryEmbedding", {F32({1, 1, 4}, {1, 2, 3, 4}), cache2c, cache2s, I64({1, 1}, {1})},
                    {{"num_heads", 1}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 4}}), (V{-3, 2, 1, 4}), 0);
    EXPECT_ERROR(run1("RotaryEmbedding", {F32({1, 1, 4}, {1, 2, 3, 4}), cos, sin}), "node 'node1' (RotaryEmbedding)",
                 "num_heads");
    EXPECT_ERROR(run1("RotaryEmbedding", {F32({1, 1, 4}, {1, 2, 3, 4}), cache2c, cache2s, I64({1, 1}, {2})},
                      {{"num_heads", 1}}),
                 "node 'node1' (RotaryEmbedding)", "position id 2 is outside");
  }
  void attention() {
    // One query [1, 0] against keys [1, 0] and [0, 1]: scores 1/sqrt(2) and 0; values 10 and 20.
    Tensor q = F32({1, 1, 1, 2}, {1, 0}), k = F32({1, 1, 2, 2}, {1, 0, 0, 1}), v = F32({1, 1, 2, 1}, {10, 20});
    double w = weight(1 / std::sqrt(2.0), 0);
    EXPECT_TENSOR(run1("Attention", {q, k, v}), (TensorType{DType::F32, {1, 1, 1, 1}}), (V{10 * w + 20 * (1 - w)}),
                  1e-5);
    // scale = 1: the score is 1.
    double w1 = weight(1, 0);
    EXPECT_TENSOR(run1("Attention", {q, k, v}, {{"scale", 1.0}}), (TensorType{DType::F32, {1, 1, 1, 1}}),
                  (V{10 * w1 + 20 * (1 - w1)}), 1e-5);
    // A boolean mask hides key 1; an additive mask of -inf does the same.
    EXPECT_TENSOR(run1("Attention", {q, k, v, T(DType::Bool, {1, 2}, {1, 0})}), (TensorType{DType::F32, {1, 1, 1, 1}}),
                  (V{10}), 1e-6);
    EXPECT_TENSOR(run1("Attention", {q, k, v, F32({1, 2}, {0, -INFINITY})}), (TensorType{DType::F32, {1, 1, 1, 1}}),
                  (V{10}), 1e-6);
  }
  void attentionCausalAndCache() {
    // Two queries [1,0], [0,1] over the same keys: causal, query 0 sees key 0 only.
    Tensor q = F32({1, 1, 2, 2}, {1, 0, 0, 1}), k = F32({1, 1, 2, 2}, {1, 0, 0, 1}), v = F32({1, 1, 2, 1}, {10, 20});
    double w = weight(1 / std::sqrt(2.0), 0);
    EXPECT_TENSOR(run1("Attention", {q, k, v}, {{"is_causal", 1}}), (TensorType{DType::F32, {1, 1, 2, 1}}),
                  (V{10, 10 * (1 - w) + 20 * w}), 1e-5);
    // The same keys split into a cache (key 0) and a new key (key 1): present_key holds both.
    Tensor q1 = F32({1, 1, 1, 2}, {0, 1});
    OpRun r = runOp("Attention", {q1, F32({1, 1, 1, 2}, {0, 1}), F32({1, 1, 1, 1}, {20}), Tensor(),
                                  F32({1, 1, 1, 2}, {1, 0}), F32({1, 1, 1, 1}, {10})},
                    {{"is_causal", 1}}, {}, 3);
    EXPECT_TENSOR(r.outputs[0], (TensorType{DType::F32, {1, 1, 1, 1}}), (V{10 * (1 - w) + 20 * w}), 1e-5);
    EXPECT_TENSOR(r.outputs[1], (TensorType{DType::F32, {1, 1, 2, 2}}), (V{1, 0, 0, 1}), 0);
    EXPECT_TENSOR(r.outputs[2], (TensorType{DType::F32, {1, 1, 2, 1}}), (V{10, 20}), 0);
  }
  void attentionGroupedAnd3d() {
    // Two query heads share one KV head; 3-D layout [batch, seq, heads * head].
    Tensor q = F32({1, 1, 4}, {1, 0, 0, 1}), k = F32({1, 2, 2}, {1, 0, 0, 1}), v = F32({1, 2, 1}, {10, 20});
    double w = weight(1 / std::sqrt(2.0), 0);
    Tensor y = run1("Attention", {q, k, v}, {{"q_num_heads", 2}, {"kv_num_heads", 1}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 2}}), (V{10 * w + 20 * (1 - w), 10 * (1 - w) + 20 * w}), 1e-5);
    EXPECT_ERROR(run1("Attention", {q, k, v}), "node 'node1' (Attention)", "q_num_heads and kv_num_heads");
    EXPECT_ERROR(
        run1("Attention", {F32({1, 3, 1, 2}, V(6, 0)), F32({1, 2, 1, 2}, V(4, 0)), F32({1, 2, 1, 1}, V(2, 0))}),
        "node 'node1' (Attention)", "3 query heads are not a multiple of 2 KV heads");
  }
};

QTEST_GUILESS_MAIN(TestAttentionOps)
#include "test_attention_ops.moc"
