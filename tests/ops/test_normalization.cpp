// Softmax, LogSoftmax, LayerNormalization, BatchNormalization and LRN against hand-checked values, and errors that
// name the node.
#include "ir/random.h"
#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {
TensorType ty(DType t, Shape s) { return {t, std::move(s)}; }
}  // namespace

class TestNormalization : public QObject {
  Q_OBJECT
 private slots:
  void softmaxLastAxis() {
    double s = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    EXPECT_TENSOR(run1("Softmax", {T(DType::F64, {1, 3}, {1, 2, 3})}), ty(DType::F64, {1, 3}),
                  (std::vector<double>{std::exp(1.0) / s, std::exp(2.0) / s, std::exp(3.0) / s}), 1e-15);
  }
  void softmaxAlongAxisZero() {
    // Columns [0, ln 3] -> [1/4, 3/4]; [5, 5] -> [1/2, 1/2].
    Tensor y = run1("Softmax", {T(DType::F32, {2, 2}, {0, 5, std::log(3.0), 5})}, {{"axis", 0}});
    EXPECT_TENSOR(y, ty(DType::F32, {2, 2}), (std::vector<double>{0.25, 0.5, 0.75, 0.5}), 1e-7);
  }
  void softmaxIsStableForLargeInputs() {
    Tensor y = run1("Softmax", {T(DType::F32, {2}, {10000, 10000})});
    EXPECT_TENSOR(y, ty(DType::F32, {2}), (std::vector<double>{0.5, 0.5}), 0);
    Tensor l = run1("LogSoftmax", {T(DType::F64, {2}, {1000, 1001})});
    double lse = std::log(1 + std::exp(-1.0));
    EXPECT_TENSOR(l, ty(DType::F64, {2}), (std::vector<double>{-1 - lse, -lse}), 1e-12);
  }
  void softmaxHalfPrecision() {
    EXPECT_TENSOR(run1("Softmax", {T(DType::F16, {4}, {1, 1, 1, 1})}), ty(DType::F16, {4}),
                  (std::vector<double>{0.25, 0.25, 0.25, 0.25}), 0);
    EXPECT_TENSOR(run1("LogSoftmax", {T(DType::BF16, {2}, {3, 3})}), ty(DType::BF16, {2}),
                  (std::vector<double>{-0.69140625, -0.69140625}), 0);  // -ln 2 = -0.6931 -> nearest bf16
  }
  void softmaxErrors() {
    EXPECT_ERROR(run1("Softmax", {T(DType::F32, {2, 2}, {1, 2, 3, 4})}, {{"axis", 2}}), "node 'node1' (Softmax)",
                 "'axis' = 2 is out of range");
    EXPECT_ERROR(run1("LogSoftmax", {T(DType::I32, {2}, {1, 2})}), "node 'node1' (LogSoftmax)", "input 0 is i32");
  }
  void layerNormWithStatistics() {
    // Row 0: mean 2, variance 2/3; row 1: mean 4, variance 8/3. Normalized rows are both [-r, 0, r], r = sqrt(1.5).
    Tensor x = T(DType::F32, {2, 3}, {1, 2, 3, 2, 4, 6});
    Tensor scale = T(DType::F32, {3}, {1, 1, 2}), bias = T(DType::F32, {3}, {0, 0, 1});
    OpRun r = runOp("LayerNormalization", {x, scale, bias}, {{"epsilon", 0.0}}, {}, 3);
    double k = std::sqrt(1.5);
    EXPECT_TENSOR(r.outputs[0], ty(DType::F32, {2, 3}), (std::vector<double>{-k, 0, 2 * k + 1, -k, 0, 2 * k + 1}),
                  1e-6);
    EXPECT_TENSOR(r.outputs[1], ty(DType::F32, {2, 1}), (std::vector<double>{2, 4}), 1e-6);
    EXPECT_TENSOR(r.outputs[2], ty(DType::F32, {2, 1}), (std::vector<double>{std::sqrt(1.5), std::sqrt(3.0 / 8)}),
                  1e-6);
  }
  void layerNormOverAllDimsBroadcastsScale() {
    // axis 0: one group of 4 values, mean 2.5, variance 1.25; scale [2] broadcasts over the normalized [2, 2].
    Tensor x = T(DType::F64, {2, 2}, {1, 2, 3, 4});
    Tensor y = run1("LayerNormalization", {x, T(DType::F64, {2}, {1, 10})}, {{"axis", 0}, {"epsilon", 0.0}});
    double s = 1 / std::sqrt(1.25);
    EXPECT_TENSOR(y, ty(DType::F64, {2, 2}), (std::vector<double>{-1.5 * s, -0.5 * 10 * s, 0.5 * s, 1.5 * 10 * s}),
                  1e-12);
  }
  void layerNormEpsilonAndHalf() {
    // Two values [-1, 1]: variance 1, so y = [-1, 1] / sqrt(1 + eps).
    Tensor y = run1("LayerNormalization", {T(DType::F64, {2}, {-1, 1}), T(DType::F64, {2}, {1, 1})},
                    {{"epsilon", 0.25}});
    EXPECT_TENSOR(y, ty(DType::F64, {2}), (std::vector<double>{-1 / std::sqrt(1.25), 1 / std::sqrt(1.25)}), 1e-15);
    OpRun h = runOp("LayerNormalization", {T(DType::F16, {2}, {1, 3}), T(DType::F16, {2}, {1, 1})},
                    {{"epsilon", 0.0}}, {}, 2);
    EXPECT_TENSOR(h.outputs[0], ty(DType::F16, {2}), (std::vector<double>{-1, 1}), 0);
    EXPECT_TENSOR(h.outputs[1], ty(DType::F32, {1}), std::vector<double>{2}, 0);  // stash_type f32
  }
  void layerNormErrors() {
    Tensor x = T(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
    EXPECT_ERROR(run1("LayerNormalization", {x, T(DType::F32, {2}, {1, 1})}), "node 'node1' (LayerNormalization)",
                 "input 1 (Scale)", "[3]");
    EXPECT_ERROR(run1("LayerNormalization", {x, T(DType::F32, {3}, {1, 1, 1})}, {{"axis", -3}}),
                 "node 'node1' (LayerNormalization)", "'axis' = -3");
    EXPECT_ERROR(run1("LayerNormalization", {x}), "node 'node1' (LayerNormalization)", "has 1 inputs");
    EXPECT_ERROR(run1("LayerNormalization", {x, T(DType::F32, {3}, {1, 1, 1})}, {{"stash_type", 7}}),
                 "node 'node1' (LayerNormalization)", "stash_type");
  }
  void batchNormInference() {
    // Channel 0: (x - 1) / 2; channel 1: (x - 3) * 2 + 1.
    Tensor x = T(DType::F32, {1, 2, 1, 2}, {1, 2, 3, 4});
    Tensor y = run1("BatchNormalization", {x, T(DType::F32, {2}, {1, 2}), T(DType::F32, {2}, {0, 1}),
                                           T(DType::F32, {2}, {1, 3}), T(DType::F32, {2}, {4, 1})},
                    {{"epsilon", 0.0}});
    EXPECT_TENSOR(y, ty(DType::F32, {1, 2, 1, 2}), (std::vector<double>{0, 0.5, 1, 3}), 0);
    Tensor d = run1("BatchNormalization", {T(DType::F64, {2, 1}, {2, 4}), T(DType::F64, {1}, {1}),
                                           T(DType::F64, {1}, {0}), T(DType::F64, {1}, {0}), T(DType::F64, {1}, {3})});
    EXPECT_TENSOR(d, ty(DType::F64, {2, 1}), (std::vector<double>{2 / std::sqrt(3 + 1e-5), 4 / std::sqrt(3 + 1e-5)}),
                  1e-15);
  }
  // f32 inference reads and writes in place, each value computed in double and rounded once: the f64 op's
  // result rounded, bit for bit.
  void batchNormF32IsTheF64RoundedOnce() {
    std::vector<Tensor> in = {randomTensor({DType::F32, {2, 3, 5, 7}}, 1), randomTensor({DType::F32, {3}}, 2),
                              randomTensor({DType::F32, {3}}, 3), randomTensor({DType::F32, {3}}, 4),
                              T(DType::F32, {3}, {0.5, 1.5, 2.25})};
    std::vector<Tensor> in64;
    for (const Tensor& t : in) in64.push_back(asF64(t));
    QVERIFY(roundedOnce(run1("BatchNormalization", in), run1("BatchNormalization", in64)));
  }
  void batchNormErrors() {
    Tensor x = T(DType::F32, {1, 2}, {1, 2}), c = T(DType::F32, {2}, {1, 1});
    EXPECT_ERROR(run1("BatchNormalization", {x, T(DType::F32, {3}, {1, 1, 1}), c, c, c}),
                 "node 'node1' (BatchNormalization)", "input 1 (scale)", "[2]");
    EXPECT_ERROR(run1("BatchNormalization", {T(DType::F32, {2}, {1, 2}), c, c, c, c}),
                 "node 'node1' (BatchNormalization)", "rank >= 2");
    EXPECT_ERROR(runOp("BatchNormalization", {x, c, c, c, c}, {}, {}, 3), "node 'node1' (BatchNormalization)",
                 "training_mode = 1");
  }
  void batchNormTrainingMode() {
    // Channel 0 holds {1, 3}: batch mean 2, biased variance 1, so y = {-1, 1} (scale 1, B 0, epsilon 0).
    // Channel 1 holds {2, 6}: mean 4, variance 4, y = 2 * (x - 4) / 2 + 1 = {-1, 3} (scale 2, B 1).
    // momentum 0.5: running_mean = 0.5 * {0, 10} + 0.5 * {2, 4} = {1, 7}; running_var = 0.5 * {2, 0} + 0.5 * {1, 4}.
    Tensor x = T(DType::F64, {2, 2}, {1, 2, 3, 6});
    OpRun r = runOp("BatchNormalization",
                    {x, T(DType::F64, {2}, {1, 2}), T(DType::F64, {2}, {0, 1}), T(DType::F64, {2}, {0, 10}),
                     T(DType::F64, {2}, {2, 0})},
                    {{"training_mode", 1}, {"epsilon", 0.0}, {"momentum", 0.5}}, {}, 3);
    EXPECT_TENSOR(r.outputs.at(0), ty(DType::F64, {2, 2}), (std::vector<double>{-1, -1, 1, 3}), 1e-15);
    EXPECT_TENSOR(r.outputs.at(1), ty(DType::F64, {2}), (std::vector<double>{1, 7}), 1e-15);
    EXPECT_TENSOR(r.outputs.at(2), ty(DType::F64, {2}), (std::vector<double>{1.5, 2}), 1e-15);
  }
  void lrnAcrossChannels() {
    // size 3: windows {0,1}, {0,1,2}, {1,2}; alpha / size = 1, beta = 1, bias = 1.
    Tensor x = T(DType::F64, {1, 3, 1, 1}, {1, 2, 3});
    Tensor y = run1("LRN", {x}, {{"size", 3}, {"alpha", 3.0}, {"beta", 1.0}, {"bias", 1.0}});
    EXPECT_TENSOR(y, ty(DType::F64, {1, 3, 1, 1}), (std::vector<double>{1.0 / 6, 2.0 / 15, 3.0 / 14}), 1e-15);
    // size 2: no channel before and one after (floor / ceil of (size - 1) / 2): windows {0,1}, {1,2}, {2}.
    Tensor z = run1("LRN", {x}, {{"size", 2}, {"alpha", 2.0}, {"beta", 0.5}, {"bias", 0.0}});
    EXPECT_TENSOR(z, ty(DType::F64, {1, 3, 1, 1}), (std::vector<double>{1 / std::sqrt(5.0), 2 / std::sqrt(13.0), 1}),
                  1e-15);
    EXPECT_ERROR(run1("LRN", {x}), "node 'node1' (LRN)", "'size'");
  }
};

QTEST_GUILESS_MAIN(TestNormalization)
#include "test_normalization.moc"
