// MatMul, Gemm, Conv and the pools against hand-checked values, a naive convolution, and error messages.
#include <QtTest>

#include <chrono>

#include "ir/random.h"
#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {



// A straightforward 2-D convolution (NCHW, explicit pads) to compare the blocked kernel with.
std::vector<double> naiveConv2d(const Tensor& xt, const Tensor& wt, int64_t group, std::vector<int64_t> s,
                                std::vector<int64_t> d, std::vector<int64_t> p, Shape out) {
  std::vector<double> x = xt.toDoubles(), w = wt.toDoubles(), y(size_t(numElements(out)), 0.0);
  int64_t C = xt.shape()[1], H = xt.shape()[2], W = xt.shape()[3];
  int64_t M = wt.shape()[0], Cg = wt.shape()[1], KH = wt.shape()[2], KW = wt.shape()[3];
  int64_t OH = out[2], OW = out[3], Mg = M / group;
  for (int64_t n = 0; n < out[0]; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double acc = 0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                int64_t iy = oy * s[0] - p[0] + ky * d[0], ix = ox * s[1] - p[1] + kx * d[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                int64_t ic = (m / Mg) * Cg + c;
                acc += x[size_t(((n * C + ic) * H + iy) * W + ix)] * w[size_t(((m * Cg + c) * KH + ky) * KW + kx)];
              }
          y[size_t(((n * M + m) * OH + oy) * OW + ox)] = acc;
        }
  return y;
}

}  // namespace

class TestLinalg : public QObject {
  Q_OBJECT
 private slots:
  // --- MatMul ---
  void matmul2d() {
    Tensor y = run1("MatMul", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3, 2}, {7, 8, 9, 10, 11, 12})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 2}}), (std::vector<double>{58, 64, 139, 154}), 0);
  }
  void matmulVectors() {
    Tensor dot = run1("MatMul", {F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})});
    EXPECT_TENSOR(dot, (TensorType{DType::F32, {}}), (std::vector<double>{32}), 0);
    Tensor row = run1("MatMul", {F32({2}, {1, 2}), F32({2, 3}, {1, 2, 3, 4, 5, 6})});
    EXPECT_TENSOR(row, (TensorType{DType::F32, {3}}), (std::vector<double>{9, 12, 15}), 0);
    Tensor col = run1("MatMul", {F32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2}, {1, -1})});
    EXPECT_TENSOR(col, (TensorType{DType::F32, {2, 2}}), (std::vector<double>{-1, -1, -1, -1}), 0);
  }
  void matmulBatchBroadcast() {
    // [2,1,2] x [1,2,1]: batch dims 2 and 1 broadcast to 2.
    Tensor y = run1("MatMul", {F32({2, 1, 2}, {1, 2, 3, 4}), F32({1, 2, 1}, {1, 10})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 1, 1}}), (std::vector<double>{21, 43}), 0);
    // [3,1,1,2] x [2,2,1]: batch [3,1] and [2] broadcast to [3,2].
    Tensor z = run1("MatMul", {F32({3, 1, 1, 2}, {1, 0, 0, 1, 1, 1}), F32({2, 2, 1}, {1, 2, 3, 4})});
    EXPECT_TENSOR(z, (TensorType{DType::F32, {3, 2, 1, 1}}), (std::vector<double>{1, 3, 2, 4, 3, 7}), 0);
  }
  void matmulIntegerAndHalf() {
    Tensor y = run1("MatMul", {T(DType::I32, {1, 2}, {3, -4}), T(DType::I32, {2, 1}, {5, 6})});
    EXPECT_TENSOR(y, (TensorType{DType::I32, {1, 1}}), (std::vector<double>{-9}), 0);
    Tensor h = run1("MatMul", {T(DType::F16, {1, 2}, {0.5, 2}), T(DType::F16, {2, 1}, {4, 0.25})});
    EXPECT_TENSOR(h, (TensorType{DType::F16, {1, 1}}), (std::vector<double>{2.5}), 0);
  }
  void matmulZeroSize() {
    Tensor y = run1("MatMul", {F32({2, 0}, {}), F32({0, 3}, {})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 3}}), (std::vector<double>(6, 0.0)), 0);
    Tensor e = run1("MatMul", {F32({0, 2}, {}), F32({2, 3}, {1, 2, 3, 4, 5, 6})});
    EXPECT_TENSOR(e, (TensorType{DType::F32, {0, 3}}), (std::vector<double>{}), 0);
  }
  void matmulErrors() {
    EXPECT_ERROR(run1("MatMul", {F32({2, 3}, std::vector<double>(6)), F32({2, 2}, std::vector<double>(4))}),
                 "node 'node1' (MatMul)", "inner dimensions differ");
    EXPECT_ERROR(run1("MatMul", {F32({2, 1, 2}, std::vector<double>(4)), F32({3, 2, 1}, std::vector<double>(6))}),
                 "node 'node1'", "batch dimensions do not broadcast");
    EXPECT_ERROR(run1("MatMul", {F32({}, {1}), F32({1}, {1})}), "node 'node1'", "rank >= 1");
    EXPECT_ERROR(run1("MatMul", {F32({1, 1}, {1}), T(DType::F64, {1, 1}, {1})}), "node 'node1'", "dtypes must match");
    EXPECT_ERROR(run1("MatMul", {T(DType::Bool, {1, 1}, {1}), T(DType::Bool, {1, 1}, {1})}), "node 'node1'",
                 "input 0 is bool");
  }
  void matmulLargeUsesBothHalves() {
    // Large enough to run on two threads; every output is K = 300 (ones times ones).
    Tensor a = T(DType::F32, {64, 300}, std::vector<double>(64 * 300, 1.0));
    Tensor b = T(DType::F32, {300, 100}, std::vector<double>(300 * 100, 1.0));
    Tensor y = run1("MatMul", {a, b});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {64, 100}}), (std::vector<double>(6400, 300.0)), 0);
  }

  // --- Gemm ---
  void gemmAllAttributes() {
    // A = [[1,2,3],[4,5,6]] given transposed, B = [[1,0],[0,1],[1,1]] given transposed: A·B = [[4,5],[10,11]].
    Tensor at = F32({3, 2}, {1, 4, 2, 5, 3, 6}), bt = F32({2, 3}, {1, 0, 1, 0, 1, 1}), c = F32({2}, {1, -1});
    Tensor y = run1("Gemm", {at, bt, c}, {{"transA", 1}, {"transB", 1}, {"alpha", 2.0}, {"beta", 0.5}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {2, 2}}), (std::vector<double>{8.5, 9.5, 20.5, 21.5}), 0);
  }
  void gemmTransposedBMatchesPlainBitwise() {
    // A transposed B read by rows of k (from 8 rows of A on) and as dot products (fewer rows) sum in the same
    // order: the same bits as the plain B, f64 so that any reordering would show.
    for (int64_t rows : {3, 37}) {
      Tensor a = randomUniform({DType::F64, {rows, 301}}, 41, -1, 1), b = randomUniform({DType::F64, {301, 29}}, 42, -1, 1);
      std::vector<double> bv = b.toDoubles(), btv(bv.size());
      for (int64_t k = 0; k < 301; ++k)
        for (int64_t n = 0; n < 29; ++n) btv[size_t(n * 301 + k)] = bv[size_t(k * 29 + n)];
      Tensor bt = T(DType::F64, {29, 301}, btv);
      const std::vector<double> plain = run1("Gemm", {a, b}).toDoubles(), viaT = run1("Gemm", {a, bt}, {{"transB", 1}}).toDoubles();
      QVERIFY2(plain == viaT, qPrintable(QString("%1 rows").arg(rows)));
    }
  }
  void gemmDefaultsAndScalarC() {
    Tensor y = run1("Gemm", {F32({1, 2}, {1, 2}), F32({2, 2}, {1, 2, 3, 4}), F32({}, {10})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 2}}), (std::vector<double>{17, 20}), 0);
    Tensor n = run1("Gemm", {F32({1, 2}, {1, 2}), F32({2, 2}, {1, 2, 3, 4})});
    EXPECT_TENSOR(n, (TensorType{DType::F32, {1, 2}}), (std::vector<double>{7, 10}), 0);
  }
  void gemmErrors() {
    EXPECT_ERROR(run1("Gemm", {F32({2, 2}, std::vector<double>(4)), F32({2, 2}, std::vector<double>(4)),
                               F32({3}, {1, 2, 3})}),
                 "node 'node1' (Gemm)", "input 2 (C) [3] does not broadcast to [2,2]");
    EXPECT_ERROR(run1("Gemm", {F32({2}, {1, 2}), F32({2, 2}, std::vector<double>(4))}), "node 'node1'", "2-D");
    EXPECT_ERROR(run1("Gemm", {F32({2, 3}, std::vector<double>(6)), F32({2, 3}, std::vector<double>(6))}),
                 "node 'node1'", "inner dimensions differ");
  }

  // --- Conv ---
  // An f32 conv writes its output in place: each sum, accumulated in double, rounded once, so it is the f64
  // conv's result rounded, bit for bit; over two pixel tiles (81 pixels of 64), 12 channels (not whole tiles of
  // 4 x 8 sums), padding and a bias.
  void f32ConvIsTheF64ConvRoundedOnce() {
    Tensor x = randomTensor({DType::F32, {2, 8, 9, 9}}, 3), w = randomTensor({DType::F32, {12, 8, 3, 3}}, 4);
    Tensor b = randomTensor({DType::F32, {12}}, 5);
    Attributes a;
    a["pads"] = std::vector<int64_t>{1, 1, 1, 1};
    Tensor y32 = run1("Conv", {x, w, b}, a), y64 = run1("Conv", {asF64(x), asF64(w), asF64(b)}, a);
    QCOMPARE(y32.shape(), (Shape{2, 12, 9, 9}));
    QVERIFY(roundedOnce(y32, y64));
  }
  void convValid() {
    Tensor y = run1("Conv", {iota({1, 1, 3, 3}), F32({1, 1, 2, 2}, {1, 1, 1, 1})});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 2, 2}}), (std::vector<double>{8, 12, 20, 24}), 0);
  }
  void convPadsStridesBias() {
    Tensor y = run1("Conv", {iota({1, 1, 3, 3}), F32({1, 1, 3, 3}, std::vector<double>(9, 1.0)), F32({1}, {1})},
                    {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 2, 2}}), (std::vector<double>{9, 13, 21, 25}), 0);
  }
  void convDilations() {
    Tensor y = run1("Conv", {iota({1, 1, 3, 3}), F32({1, 1, 2, 2}, {1, 1, 1, 1})},
                    {{"dilations", std::vector<int64_t>{2, 2}}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 1, 1}}), (std::vector<double>{16}), 0);
  }
  void convGroups() {
    Tensor x = F32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
    Tensor y = run1("Conv", {x, F32({2, 1, 1, 1}, {2, 3})}, {{"group", 2}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 2, 2, 2}}), (std::vector<double>{2, 4, 6, 8, 30, 60, 90, 120}), 0);
    // Two output channels per group: channels 0-1 read input channel 0, channels 2-3 input channel 1.
    Tensor z = run1("Conv", {x, F32({4, 1, 1, 1}, {1, -1, 2, 0.5})}, {{"group", 2}});
    EXPECT_TENSOR(z, (TensorType{DType::F32, {1, 4, 2, 2}}),
                  (std::vector<double>{1, 2, 3, 4, -1, -2, -3, -4, 20, 40, 60, 80, 5, 10, 15, 20}), 0);
  }
  void convAutoPad() {
    Tensor x = iota({1, 1, 4, 4}), w = F32({1, 1, 3, 3}, std::vector<double>(9, 1.0));
    Attributes upper{{"auto_pad", "SAME_UPPER"}, {"strides", std::vector<int64_t>{2, 2}}};
    EXPECT_TENSOR(run1("Conv", {x, w}, upper), (TensorType{DType::F32, {1, 1, 2, 2}}),
                  (std::vector<double>{45, 39, 66, 50}), 0);
    Attributes lower{{"auto_pad", "SAME_LOWER"}, {"strides", std::vector<int64_t>{2, 2}}};
    EXPECT_TENSOR(run1("Conv", {x, w}, lower), (TensorType{DType::F32, {1, 1, 2, 2}}),
                  (std::vector<double>{10, 24, 51, 90}), 0);
    Attributes valid{{"auto_pad", "VALID"}, {"pads", std::vector<int64_t>{5, 5, 5, 5}}};
    EXPECT_TENSOR(run1("Conv", {x, w}, valid), (TensorType{DType::F32, {1, 1, 2, 2}}),
                  (std::vector<double>{45, 54, 81, 90}), 0);
  }
  void conv1dAnd3d() {
    Tensor y = run1("Conv", {F32({1, 1, 5}, {1, 2, 3, 4, 5}), F32({1, 1, 2}, {1, 2})},
                    {{"strides", std::vector<int64_t>{2}}});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 2}}), (std::vector<double>{5, 11}), 0);
    Tensor z = run1("Conv", {iota({1, 1, 2, 2, 2}), F32({1, 1, 2, 2, 2}, std::vector<double>(8, 1.0))});
    EXPECT_TENSOR(z, (TensorType{DType::F32, {1, 1, 1, 1, 1}}), (std::vector<double>{28}), 0);
    // 3-D with a pad on the outer axis only: depth windows [-1,0] and [0,1] of planes summing to 6 and 22.
    Tensor p = run1("Conv", {iota({1, 1, 2, 2, 2}), F32({1, 1, 2, 2, 2}, std::vector<double>(8, 1.0))},
                    {{"pads", std::vector<int64_t>{1, 0, 0, 0, 0, 0}}});
    EXPECT_TENSOR(p, (TensorType{DType::F32, {1, 1, 2, 1, 1}}), (std::vector<double>{6, 28}), 0);
  }
  void convEmptyAttributeLists() {
    // Some exporters write empty lists for defaults; they mean unit strides and dilations and no padding.
    Attributes a{{"strides", std::vector<int64_t>{}}, {"pads", std::vector<int64_t>{}},
                 {"dilations", std::vector<int64_t>{}}, {"kernel_shape", std::vector<int64_t>{}}};
    Tensor y = run1("Conv", {iota({1, 1, 3, 3}), F32({1, 1, 2, 2}, {1, 1, 1, 1})}, a);
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 2, 2}}), (std::vector<double>{8, 12, 20, 24}), 0);
  }
  void convMatchesNaive() {
    // Groups, strides, dilations and asymmetric pads together, batch 2, f64 and f32.
    for (DType dt : {DType::F32, DType::F64}) {
      Tensor x = randomUniform({dt, {2, 4, 7, 9}}, 11, -1, 1), w = randomUniform({dt, {6, 2, 3, 2}}, 12, -1, 1);
      Attributes a{{"group", 2}, {"strides", std::vector<int64_t>{2, 1}}, {"dilations", std::vector<int64_t>{1, 3}},
                   {"pads", std::vector<int64_t>{1, 0, 2, 3}}};
      Tensor y = run1("Conv", {x, w}, a);
      Shape out{2, 6, 4, 9};  // (7+3-3)/2+1 = 4, (9+3-4)/1+1 = 9
      std::vector<double> ref = naiveConv2d(x, w, 2, {2, 1}, {1, 3}, {1, 0}, out);
      EXPECT_TENSOR(y, (TensorType{dt, out}), ref, dt == DType::F32 ? 1e-5 : 1e-12);
    }
  }
  void convWideRowsMatchNaive() {
    // Rows wide enough for the per-channel fused row loop (interior of at least 8 outputs), with its edges.
    for (DType dt : {DType::F32, DType::F64}) {
      Tensor x = randomUniform({dt, {1, 3, 5, 23}}, 21, -1, 1), w = randomUniform({dt, {2, 3, 3, 3}}, 22, -1, 1);
      Attributes a{{"dilations", std::vector<int64_t>{1, 2}}, {"pads", std::vector<int64_t>{1, 2, 0, 1}}};
      Tensor y = run1("Conv", {x, w}, a);
      Shape out{1, 2, 4, 22};  // (5+1-3)/1+1 = 4, (23+3-5)/1+1 = 22
      std::vector<double> ref = naiveConv2d(x, w, 1, {1, 1}, {1, 2}, {1, 2}, out);
      EXPECT_TENSOR(y, (TensorType{dt, out}), ref, dt == DType::F32 ? 1e-5 : 1e-12);
    }
  }
  void convTilesMatchNaive() {
    // Past every tile of the blocked product: 99 pixels (a full tile of 64 and a part one, not a multiple of 8),
    // 70 channels a group (a block of 64 and 6 more, not a multiple of 4), a reduction of 31 x 9 = 279 (past one
    // 256-deep step), two groups, a bias, f64 so that the sums compare to 1e-12.
    Tensor x = randomUniform({DType::F64, {2, 62, 9, 11}}, 31, -1, 1), w = randomUniform({DType::F64, {140, 31, 3, 3}}, 32, -1, 1);
    Tensor b = randomUniform({DType::F64, {140}}, 33, -1, 1);
    Tensor y = run1("Conv", {x, w, b}, {{"group", 2}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Shape out{2, 140, 9, 11};
    std::vector<double> ref = naiveConv2d(x, w, 2, {1, 1}, {1, 1}, {1, 1}, out), bias = b.toDoubles();
    for (size_t i = 0; i < ref.size(); ++i) ref[i] += bias[i / 99 % 140];
    EXPECT_TENSOR(y, (TensorType{DType::F64, out}), ref, 1e-12);
  }
  void convBf16Pointwise() {
    // A 1x1 convolution (the whole plane is one row) in bf16.
    Tensor y = run1("Conv", {T(DType::BF16, {1, 2, 1, 3}, {1, 2, 3, 4, 5, 6}), T(DType::BF16, {1, 2, 1, 1}, {1, 2})});
    EXPECT_TENSOR(y, (TensorType{DType::BF16, {1, 1, 1, 3}}), (std::vector<double>{9, 12, 15}), 0);
  }
  void convErrors() {
    Tensor x = iota({1, 2, 3, 3});
    EXPECT_ERROR(run1("Conv", {x, F32({1, 3, 1, 1}, {1, 1, 1})}), "node 'node1' (Conv)", "channels per group");
    EXPECT_ERROR(run1("Conv", {x, F32({1, 2, 4, 4}, std::vector<double>(32))}), "node 'node1'",
                 "larger than the padded input");
    EXPECT_ERROR(run1("Conv", {x, F32({1, 2, 1, 1}, {1, 1})}, {{"strides", std::vector<int64_t>{0, 1}}}),
                 "node 'node1'", "strides");
    EXPECT_ERROR(run1("Conv", {x, F32({1, 2, 1, 1}, {1, 1}), F32({2}, {1, 2})}), "node 'node1'", "input 2 (B)");
    EXPECT_ERROR(run1("Conv", {x, F32({1, 2, 1, 1}, {1, 1})}, {{"auto_pad", "SAME"}}), "node 'node1'", "auto_pad");
    EXPECT_ERROR(run1("Conv", {T(DType::I32, {1, 1, 1}, {1}), T(DType::I32, {1, 1, 1}, {1})}), "node 'node1'",
                 "input 0 is i32");
  }
  void convTiming() {
    // The reference interpreter's speed on a VGG-sized layer (set TESSERA_BENCH=1 to run).
    if (qEnvironmentVariableIsEmpty("TESSERA_BENCH")) QSKIP("set TESSERA_BENCH=1 to time a 1x64x224x224 conv");
    Tensor x = randomUniform({DType::F32, {1, 64, 224, 224}}, 1, -1, 1);
    Tensor w = randomUniform({DType::F32, {64, 64, 3, 3}}, 2, -1, 1);
    auto start = std::chrono::steady_clock::now();
    Tensor y = run1("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    qInfo("conv 1x64x224x224, 3x3, 64 -> 64 channels: %.0f ms", ms);
    QCOMPARE(y.shape(), (Shape{1, 64, 224, 224}));
  }

  // --- pools ---
  // An f32 max pool reads and writes in place over the cores: the f64 pool's values and indices exactly.
  void f32MaxPoolIsTheF64Pool() {
    Tensor x = randomTensor({DType::F32, {2, 3, 9, 9}}, 7);
    Attributes a{{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
                 {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    OpRun r32 = runOp("MaxPool", {x}, a, {}, 2), r64 = runOp("MaxPool", {asF64(x)}, a, {}, 2);
    QVERIFY(roundedOnce(r32.outputs[0], r64.outputs[0]));
    QVERIFY(r32.outputs[1].identical(r64.outputs[1]));
    QCOMPARE(r32.outputs[0].shape(), (Shape{2, 3, 5, 5}));
  }
  void maxPoolWithIndices() {
    Attributes a{{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}};
    OpRun r = runOp("MaxPool", {iota({1, 1, 4, 4})}, a, {}, 2);
    EXPECT_TENSOR(r.outputs[0], (TensorType{DType::F32, {1, 1, 2, 2}}), (std::vector<double>{5, 7, 13, 15}), 0);
    EXPECT_TENSOR(r.outputs[1], (TensorType{DType::I64, {1, 1, 2, 2}}), (std::vector<double>{5, 7, 13, 15}), 0);
    a["storage_order"] = 1;  // column-major flat indices: h + w * H
    OpRun c = runOp("MaxPool", {iota({1, 1, 4, 4})}, a, {}, 2);
    EXPECT_TENSOR(c.outputs[1], (TensorType{DType::I64, {1, 1, 2, 2}}), (std::vector<double>{5, 13, 7, 15}), 0);
  }
  void maxPoolCeilDilationsU8() {
    Attributes ceil{{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                    {"ceil_mode", 1}};
    EXPECT_TENSOR(run1("MaxPool", {iota({1, 1, 3, 3})}, ceil), (TensorType{DType::F32, {1, 1, 2, 2}}),
                  (std::vector<double>{4, 5, 7, 8}), 0);
    Attributes dil{{"kernel_shape", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 2}}};
    EXPECT_TENSOR(run1("MaxPool", {iota({1, 1, 4, 4}, DType::U8)}, dil), (TensorType{DType::U8, {1, 1, 2, 2}}),
                  (std::vector<double>{10, 11, 14, 15}), 0);
  }
  void maxPoolPadsIgnorePadding() {
    // Padded positions never win, even against negative values; indices point into the unpadded input.
    Attributes a{{"kernel_shape", std::vector<int64_t>{2}}, {"pads", std::vector<int64_t>{1, 1}}};
    OpRun r = runOp("MaxPool", {F32({1, 1, 3}, {-3, -1, -2})}, a, {}, 2);
    EXPECT_TENSOR(r.outputs[0], (TensorType{DType::F32, {1, 1, 4}}), (std::vector<double>{-3, -1, -1, -2}), 0);
    EXPECT_TENSOR(r.outputs[1], (TensorType{DType::I64, {1, 1, 4}}), (std::vector<double>{0, 1, 1, 2}), 0);
  }
  void averagePoolPads() {
    Attributes a{{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    Tensor x = F32({1, 1, 2, 2}, {1, 2, 3, 4});
    EXPECT_TENSOR(run1("AveragePool", {x}, a), (TensorType{DType::F32, {1, 1, 2, 2}}),
                  (std::vector<double>{2.5, 2.5, 2.5, 2.5}), 0);
    a["count_include_pad"] = 1;
    EXPECT_TENSOR(run1("AveragePool", {x}, a), (TensorType{DType::F32, {1, 1, 2, 2}}),
                  (std::vector<double>(4, 10.0 / 9.0)), 1e-6);
  }
  void averagePoolCeil() {
    Attributes a{{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                 {"ceil_mode", 1}};
    EXPECT_TENSOR(run1("AveragePool", {iota({1, 1, 3, 3})}, a), (TensorType{DType::F32, {1, 1, 2, 2}}),
                  (std::vector<double>{2, 3.5, 6.5, 8}), 0);
  }
  void globalPools() {
    Tensor x = F32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -5, 0, 2});
    EXPECT_TENSOR(run1("GlobalAveragePool", {x}), (TensorType{DType::F32, {1, 2, 1, 1}}),
                  (std::vector<double>{2.5, -1}), 0);
    EXPECT_TENSOR(run1("GlobalMaxPool", {x}), (TensorType{DType::F32, {1, 2, 1, 1}}), (std::vector<double>{4, 2}), 0);
    Tensor e = F32({0, 3, 2}, {});
    EXPECT_TENSOR(run1("GlobalAveragePool", {e}), (TensorType{DType::F32, {0, 3, 1}}), (std::vector<double>{}), 0);
  }
  void poolErrors() {
    EXPECT_ERROR(run1("MaxPool", {iota({1, 1, 4, 4})}), "node 'node1' (MaxPool)", "kernel_shape is required");
    EXPECT_ERROR(run1("AveragePool", {iota({1, 1, 2, 2})}, {{"kernel_shape", std::vector<int64_t>{3, 3}}}),
                 "node 'node1' (AveragePool)", "larger than the padded input");
    EXPECT_ERROR(run1("MaxPool", {iota({1, 1, 4, 4})}, {{"kernel_shape", std::vector<int64_t>{2}}}), "node 'node1'",
                 "one value per spatial axis");
    EXPECT_ERROR(run1("MaxPool", {iota({1, 1, 4, 4})},
                      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1}}}),
                 "node 'node1'", "pads");
    EXPECT_ERROR(run1("GlobalMaxPool", {iota({4})}), "node 'node1' (GlobalMaxPool)", "[N, C, spatial...]");
  }
};

QTEST_GUILESS_MAIN(TestLinalg)
#include "test_linalg.moc"
