// The recurrent ops (RNN, GRU, LSTM, LinearAttention, CausalConvWithState), LpPool, Det, Upsample, Col2Im,
// MaxUnpool, AffineGrid and TensorScatter against values worked out by hand (one-unit recurrences written as the
// formulas they step), with errors naming the node.
#include <QtTest>

#include <cmath>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;
Tensor F64(Shape shape, V values) { return T(DType::F64, std::move(shape), std::move(values)); }
double sig(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace

class TestRecurrentWindow : public QObject {
  Q_OBJECT
 private slots:
  void rnn() {
    // One unit: h = tanh(x + 0.5 h), inputs 1 then 2.
    Tensor x = F64({2, 1, 1}, {1, 2}), w = F64({1, 1, 1}, {1}), r = F64({1, 1, 1}, {0.5});
    OpRun f = runOp("RNN", {x, w, r}, {{"hidden_size", 1}}, {}, 2);
    double h1 = std::tanh(1.0), h2 = std::tanh(2 + 0.5 * h1);
    EXPECT_TENSOR(f.outputs[0], (TensorType{DType::F64, {2, 1, 1, 1}}), (V{h1, h2}), 1e-12);
    EXPECT_TENSOR(f.outputs[1], (TensorType{DType::F64, {1, 1, 1}}), (V{h2}), 1e-12);
    // Reverse: the last input first.
    OpRun b = runOp("RNN", {x, w, r}, {{"hidden_size", 1}, {"direction", "reverse"}}, {}, 2);
    double g1 = std::tanh(2.0), g2 = std::tanh(1 + 0.5 * g1);
    EXPECT_TENSOR(b.outputs[0], (TensorType{DType::F64, {2, 1, 1, 1}}), (V{g2, g1}), 1e-12);
    // A sequence length of 1 stops after the first step and leaves Y's second step zero.
    OpRun s = runOp("RNN", {x, w, r, Tensor(), I64({1}, {1})}, {{"hidden_size", 1}}, {}, 2);
    EXPECT_TENSOR(s.outputs[0], (TensorType{DType::F64, {2, 1, 1, 1}}), (V{h1, 0}), 1e-12);
    EXPECT_ERROR(runOp("RNN", {x, F64({1, 2, 1}, {1, 1}), r}, {{"hidden_size", 1}}, {}, 2), "node 'node1' (RNN)",
                 "W [1,2,1] must be [1,1,1]");
    EXPECT_ERROR(runOp("RNN", {x, w, r, Tensor(), Tensor(), F64({1, 1, 2}, {0, 0})}, {{"hidden_size", 1}}, {}, 2),
                 "node 'node1' (RNN)", "input 5 (initial state)");
  }
  void gruAndLstm() {
    // GRU with only W_h = 1: z = r = sigmoid(0) = 1/2, candidate tanh(x), h = (1 - z) * tanh(1).
    Tensor x = F64({1, 1, 1}, {1});
    Tensor gru = runOp("GRU", {x, F64({1, 3, 1}, {0, 0, 1}), F64({1, 3, 1}, {0, 0, 0})}, {{"hidden_size", 1}}, {}, 2)
                     .outputs[1];
    EXPECT_TENSOR(gru, (TensorType{DType::F64, {1, 1, 1}}), (V{0.5 * std::tanh(1.0)}), 1e-12);
    // LSTM with every input weight 1 (gates i o f c): c = sig(1) tanh(1), h = sig(1) tanh(c).
    OpRun l =
        runOp("LSTM", {x, F64({1, 4, 1}, {1, 1, 1, 1}), F64({1, 4, 1}, {0, 0, 0, 0})}, {{"hidden_size", 1}}, {}, 3);
    double c = sig(1) * std::tanh(1.0);
    EXPECT_TENSOR(l.outputs[1], (TensorType{DType::F64, {1, 1, 1}}), (V{sig(1) * std::tanh(c)}), 1e-12);
    EXPECT_TENSOR(l.outputs[2], (TensorType{DType::F64, {1, 1, 1}}), (V{c}), 1e-12);
  }
  void linearAttention() {
    // One head, d_k = d_v = 1: q = [1, 1], k = [1, 2], v = [3, 4], scale 1.
    Tensor q = F64({1, 2, 1}, {1, 1}), k = F64({1, 2, 1}, {1, 2}), v = F64({1, 2, 1}, {3, 4});
    Attributes a{{"q_num_heads", 1}, {"kv_num_heads", 1}, {"scale", 1.0}, {"update_rule", "linear"}};
    OpRun lin = runOp("LinearAttention", {q, k, v}, a, {}, 2);
    EXPECT_TENSOR(lin.outputs[0], (TensorType{DType::F64, {1, 2, 1}}), (V{3, 11}), 1e-12);  // S = 3, then 3 + 2*4
    EXPECT_TENSOR(lin.outputs[1], (TensorType{DType::F64, {1, 1, 1, 1}}), (V{11}), 1e-12);
    // delta, beta 1: the second write is v - S k = 4 - 6, so S = 3 + 2 * -2 = -1.
    a["update_rule"] = "delta";
    Tensor beta = F64({1, 2, 1}, {1, 1});
    EXPECT_TENSOR(runOp("LinearAttention", {q, k, v, Tensor(), Tensor(), beta}, a, {}, 2).outputs[0],
                  (TensorType{DType::F64, {1, 2, 1}}), (V{3, -1}), 1e-12);
    // gated: the state decays by e^g = 1/2 before the second write: 1.5 + 8.
    a["update_rule"] = "gated";
    Tensor decay = F64({1, 2, 1}, {0, std::log(0.5)});
    EXPECT_TENSOR(runOp("LinearAttention", {q, k, v, Tensor(), decay}, a, {}, 2).outputs[0],
                  (TensorType{DType::F64, {1, 2, 1}}), (V{3, 9.5}), 1e-12);
    EXPECT_ERROR(runOp("LinearAttention", {q, k, v}, a, {}, 2), "node 'node1' (LinearAttention)", "needs decay");
    EXPECT_ERROR(runOp("LinearAttention", {q, k, v, Tensor(), F64({1, 1, 1}, {0})}, a, {}, 2),
                 "node 'node1' (LinearAttention)", "must be [B, T, ...]");
  }
  void causalConv() {
    // Kernel [1, 1] over [1, 2, 3] after one zero (or past 10): pairwise sums; the state keeps the last input.
    Tensor x = F64({1, 1, 3}, {1, 2, 3}), w = F64({1, 1, 2}, {1, 1});
    OpRun r = runOp("CausalConvWithState", {x, w}, {}, {}, 2);
    EXPECT_TENSOR(r.outputs[0], (TensorType{DType::F64, {1, 1, 3}}), (V{1, 3, 5}), 0);
    EXPECT_TENSOR(r.outputs[1], (TensorType{DType::F64, {1, 1, 1}}), (V{3}), 0);
    Tensor y = run1("CausalConvWithState", {x, w, Tensor(), F64({1, 1, 1}, {10})}, {{"activation", "silu"}});
    EXPECT_TENSOR(y, (TensorType{DType::F64, {1, 1, 3}}), (V{11 * sig(11), 3 * sig(3), 5 * sig(5)}), 1e-12);
  }
  void poolsAndDet() {
    // Windows [3, 4] and [4, 0]: L2 norms 5 and 4.
    EXPECT_TENSOR(run1("LpPool", {F64({1, 1, 3}, {3, 4, 0})}, {{"kernel_shape", std::vector<int64_t>{2}}}),
                  (TensorType{DType::F64, {1, 1, 2}}), (V{5, 4}), 1e-12);
    // Det with a row swap (-1), a singular matrix (0) and a diagonal (6).
    EXPECT_TENSOR(run1("Det", {F64({3, 2, 2}, {0, 1, 1, 0, 1, 2, 2, 4, 2, 0, 0, 3})}), (TensorType{DType::F64, {3}}),
                  (V{-1, 0, 6}), 1e-12);
    EXPECT_TENSOR(run1("Det", {F64({2, 2}, {1, 2, 3, 4})}), (TensorType{DType::F64, {}}), (V{-2}), 1e-12);
    EXPECT_ERROR(run1("Det", {F64({2, 3}, V(6, 1))}), "node 'node1' (Det)", "[..., M, M]");
  }
  void upsampleAndUnpool() {
    EXPECT_TENSOR(run1("Upsample", {F64({1, 1, 1, 2}, {1, 2}), T(DType::F32, {4}, {1, 1, 2, 2})}, {}, {1}),
                  (TensorType{DType::F64, {1, 1, 2, 4}}), (V{1, 1, 2, 2, 1, 1, 2, 2}), 0);
    // Pooled values 5 and 6 back at flat positions 1 and 3 of the [1,1,1,4] input.
    Attributes pool{{"kernel_shape", std::vector<int64_t>{1, 2}}, {"strides", std::vector<int64_t>{1, 2}}};
    EXPECT_TENSOR(run1("MaxUnpool", {F64({1, 1, 1, 2}, {5, 6}), I64({1, 1, 1, 2}, {1, 3})}, pool),
                  (TensorType{DType::F64, {1, 1, 1, 4}}), (V{0, 5, 0, 6}), 0);
    EXPECT_ERROR(run1("MaxUnpool", {F64({1, 1, 1, 2}, {5, 6}), I64({1, 1, 1, 2}, {1, 4})}, pool),
                 "node 'node1' (MaxUnpool)", "index 4 is outside");
  }
  void col2imAndGrids() {
    // Two taps of a width-2 block over an image of 3: position 1 gets tap 0 of block 1 and tap 1 of block 0.
    Tensor cols = F64({1, 2, 2}, {1, 2, 3, 4});
    EXPECT_TENSOR(run1("Col2Im", {cols, I64({1}, {3}), I64({1}, {2})}, {}, {1, 2}), (TensorType{DType::F64, {1, 1, 3}}),
                  (V{1, 5, 4}), 0);
    EXPECT_ERROR(run1("Col2Im", {cols, I64({1}, {4}), I64({1}, {2})}, {}, {1, 2}), "node 'node1' (Col2Im)",
                 "must be [N, C * 2, 3]");
    EXPECT_ERROR(run1("Col2Im", {cols, I64({1}, {3}), I64({1}, {0})}, {}, {1, 2}), "node 'node1' (Col2Im)",
                 "must be positive");
    // The identity transform gives the normalized pixel centres, (x, y) per pixel.
    Tensor theta = F64({1, 2, 3}, {1, 0, 0, 0, 1, 0});
    EXPECT_TENSOR(run1("AffineGrid", {theta, I64({4}, {1, 1, 2, 2})}, {{"align_corners", 1}}, {1}),
                  (TensorType{DType::F64, {1, 2, 2, 2}}), (V{-1, -1, 1, -1, -1, 1, 1, 1}), 1e-12);
    EXPECT_TENSOR(run1("AffineGrid", {theta, I64({4}, {1, 1, 2, 2})}, {}, {1}), (TensorType{DType::F64, {1, 2, 2, 2}}),
                  (V{-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5}), 1e-12);
  }
  void tensorScatter() {
    // Batch 0 writes at position 2, batch 1 at 0; circular mode wraps position 3 to 0.
    Tensor cache = F64({2, 3, 1}, V(6, 0)), update = F64({2, 1, 1}, {7, 8});
    EXPECT_TENSOR(run1("TensorScatter", {cache, update, I64({2}, {2, 0})}), (TensorType{DType::F64, {2, 3, 1}}),
                  (V{0, 0, 7, 8, 0, 0}), 0);
    EXPECT_TENSOR(run1("TensorScatter", {cache, update, I64({2}, {3, 1})}, {{"mode", "circular"}}),
                  (TensorType{DType::F64, {2, 3, 1}}), (V{7, 0, 0, 0, 8, 0}), 0);
    EXPECT_ERROR(run1("TensorScatter", {cache, update, I64({2}, {3, 0})}), "node 'node1' (TensorScatter)",
                 "write position 3 is outside");
  }
};

QTEST_GUILESS_MAIN(TestRecurrentWindow)
#include "test_recurrent_window.moc"
