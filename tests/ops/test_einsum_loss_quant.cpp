// Einsum, NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, ConvTranspose, QuantizeLinear and
// DequantizeLinear against values worked out by hand, with the errors naming the node.
#include <QtTest>

#include <cmath>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;

}  // namespace

class TestEinsumLossQuant : public QObject {
  Q_OBJECT
 private slots:
  void einsum() {
    Tensor a = F32({2, 2}, {1, 2, 3, 4}), b = F32({2, 2}, {5, 6, 7, 8});
    EXPECT_TENSOR(run1("Einsum", {a, b}, {{"equation", "ij,jk->ik"}}), (TensorType{DType::F32, {2, 2}}),
                  (V{19, 22, 43, 50}), 0);
    EXPECT_TENSOR(run1("Einsum", {a}, {{"equation", "ii->i"}}), (TensorType{DType::F32, {2}}), (V{1, 4}), 0);
    EXPECT_TENSOR(run1("Einsum", {a}, {{"equation", "ij->"}}), (TensorType{DType::F32, {}}), (V{10}), 0);
    // No arrow: labels used twice are summed, so "ij,ij" is the sum of the elementwise products.
    EXPECT_TENSOR(run1("Einsum", {a, b}, {{"equation", "ij, ij"}}), (TensorType{DType::F32, {}}), (V{70}), 0);
    // The ellipsis keeps a batch dim: a batched transpose of [2,1,2].
    EXPECT_TENSOR(run1("Einsum", {F32({2, 1, 2}, {1, 2, 3, 4})}, {{"equation", "...ij->...ji"}}),
                  (TensorType{DType::F32, {2, 2, 1}}), (V{1, 2, 3, 4}), 0);
    EXPECT_ERROR(run1("Einsum", {a, F32({3, 1}, {1, 2, 3})}, {{"equation", "ij,jk->ik"}}), "node 'node1' (Einsum)",
                 "label size mismatch");
    EXPECT_ERROR(run1("Einsum", {a}, {{"equation", "ijk->i"}}), "node 'node1' (Einsum)",
                 "3 labels for an input of rank 2");
  }
  void negativeLogLikelihood() {
    // Log-probabilities [[-1,-2,-3],[-4,-5,-6]], targets 0 and 2: losses 1 and 6.
    Tensor x = F32({2, 3}, {-1, -2, -3, -4, -5, -6});
    Tensor t = I64({2}, {0, 2});
    EXPECT_TENSOR(run1("NegativeLogLikelihoodLoss", {x, t}), (TensorType{DType::F32, {}}), (V{3.5}), 0);
    EXPECT_TENSOR(run1("NegativeLogLikelihoodLoss", {x, t}, {{"reduction", "sum"}}), (TensorType{DType::F32, {}}),
                  (V{7}), 0);
    EXPECT_TENSOR(run1("NegativeLogLikelihoodLoss", {x, t}, {{"reduction", "none"}}), (TensorType{DType::F32, {2}}),
                  (V{1, 6}), 0);
    // Class weights [1, 1, 2]: the mean divides by the weights used, (1 + 12) / 3.
    EXPECT_TENSOR(run1("NegativeLogLikelihoodLoss", {x, t, F32({3}, {1, 1, 2})}), (TensorType{DType::F32, {}}),
                  (V{13.0 / 3}), 1e-6);
    // ignore_index 2 drops the second element from the sum and the count.
    EXPECT_TENSOR(run1("NegativeLogLikelihoodLoss", {x, t}, {{"ignore_index", 2}}), (TensorType{DType::F32, {}}),
                  (V{1}), 0);
    EXPECT_ERROR(run1("NegativeLogLikelihoodLoss", {x, I64({2}, {0, 3})}), "node 'node1' (NegativeLogLikelihoodLoss)",
                 "target 3 is outside the 3 classes");
    EXPECT_ERROR(run1("NegativeLogLikelihoodLoss", {x, I64({3}, {0, 0, 0})}), "node 'node1'", "input 1 (target)");
  }
  void softmaxCrossEntropy() {
    // Equal scores over 3 classes: every log-probability is -ln 3, and so is the loss.
    OpRun r = runOp("SoftmaxCrossEntropyLoss", {F32({1, 3}, {0, 0, 0}), I64({1}, {1})}, {}, {}, 2);
    EXPECT_TENSOR(r.outputs[0], (TensorType{DType::F32, {}}), (V{std::log(3.0)}), 1e-6);
    EXPECT_TENSOR(r.outputs[1], (TensorType{DType::F32, {1, 3}}), (V(3, -std::log(3.0))), 1e-6);
    // Scores [0, ln 3] for class 1: p = 3/4, loss = ln(4/3).
    EXPECT_TENSOR(run1("SoftmaxCrossEntropyLoss", {F32({1, 2}, {0, std::log(3.0)}), I64({1}, {1})}),
                  (TensorType{DType::F32, {}}), (V{std::log(4.0 / 3)}), 1e-6);
  }
  void convTranspose() {
    Tensor x = F32({1, 1, 2}, {1, 2}), w = F32({1, 1, 2}, {1, 1});
    // Each input scatters [x, x]: stride 1 overlaps ([1, 1+2, 2]), stride 2 does not.
    EXPECT_TENSOR(run1("ConvTranspose", {x, w}), (TensorType{DType::F32, {1, 1, 3}}), (V{1, 3, 2}), 0);
    EXPECT_TENSOR(run1("ConvTranspose", {x, w}, {{"strides", std::vector<int64_t>{2}}}),
                  (TensorType{DType::F32, {1, 1, 4}}), (V{1, 1, 2, 2}), 0);
    EXPECT_TENSOR(run1("ConvTranspose", {x, w}, {{"pads", std::vector<int64_t>{1, 1}}}),
                  (TensorType{DType::F32, {1, 1, 1}}), (V{3}), 0);
    // Two output channels (W [1, 2, 2]) and a bias per channel.
    Tensor y = run1("ConvTranspose", {x, F32({1, 2, 2}, {1, 1, 1, -1}), F32({2}, {10, 20})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 2, 3}}), (V{11, 13, 12, 21, 21, 18}), 0);
    // output_shape wider than the full result: the extra position gets only the bias (none here).
    EXPECT_TENSOR(run1("ConvTranspose", {x, w}, {{"output_shape", std::vector<int64_t>{4}}}),
                  (TensorType{DType::F32, {1, 1, 4}}), (V{1, 3, 2, 0}), 0);
    EXPECT_ERROR(run1("ConvTranspose", {x, F32({2, 1, 2}, {1, 1, 1, 1})}), "node 'node1' (ConvTranspose)",
                 "must have X's 1 channels first");
  }
  void quantize() {
    Tensor x = F32({5}, {0, 1.5, 2.5, -3, 300});
    // Half to even, then saturated: u8 clamps to [0, 255], i8 to [-128, 127].
    EXPECT_TENSOR(run1("QuantizeLinear", {x, F32({}, {1}), T(DType::U8, {}, {0})}), (TensorType{DType::U8, {5}}),
                  (V{0, 2, 2, 0, 255}), 0);
    EXPECT_TENSOR(run1("QuantizeLinear", {x, F32({}, {1}), T(DType::I8, {}, {0})}), (TensorType{DType::I8, {5}}),
                  (V{0, 2, 2, -3, 127}), 0);
    // No zero point: u8; scale 2 and zero point 10 per tensor.
    EXPECT_TENSOR(run1("QuantizeLinear", {F32({2}, {4, 7}), F32({}, {2})}), (TensorType{DType::U8, {2}}), (V{2, 4}), 0);
    EXPECT_TENSOR(run1("QuantizeLinear", {F32({2}, {4, 7}), F32({}, {2}), T(DType::U8, {}, {10})}),
                  (TensorType{DType::U8, {2}}), (V{12, 14}), 0);
    // Per axis 1: columns scaled by 1 and 2.
    EXPECT_TENSOR(run1("QuantizeLinear", {F32({2, 2}, {1, 2, 3, 4}), F32({2}, {1, 2})}),
                  (TensorType{DType::U8, {2, 2}}), (V{1, 1, 3, 2}), 0);
    EXPECT_TENSOR(run1("DequantizeLinear", {T(DType::U8, {3}, {0, 3, 255}), F32({}, {2}), T(DType::U8, {}, {1})}),
                  (TensorType{DType::F32, {3}}), (V{-2, 4, 508}), 0);
    // Blocked: block_size 2 along axis 0 of [4]: scales 1 and 10.
    EXPECT_TENSOR(run1("DequantizeLinear", {T(DType::I8, {4}, {1, 2, 3, 4}), F32({2}, {1, 10})},
                       {{"axis", 0}, {"block_size", 2}}),
                  (TensorType{DType::F32, {4}}), (V{1, 2, 30, 40}), 0);
    EXPECT_ERROR(run1("QuantizeLinear", {F32({2, 2}, {1, 2, 3, 4}), F32({3}, {1, 2, 3})}),
                 "node 'node1' (QuantizeLinear)", "scale [3] must be a scalar or [2]");
    EXPECT_ERROR(run1("DequantizeLinear", {F32({2}, {1, 2}), F32({}, {1})}), "node 'node1' (DequantizeLinear)",
                 "input 0 is f32");
    EXPECT_ERROR(run1("QuantizeLinear", {F32({2, 2}, {1, 2, 3, 4}), F32({2}, {1, 2}), T(DType::U8, {}, {0})}),
                 "node 'node1' (QuantizeLinear)", "must have the scale's shape");
  }
};

QTEST_GUILESS_MAIN(TestEinsumLossQuant)
#include "test_einsum_loss_quant.moc"
