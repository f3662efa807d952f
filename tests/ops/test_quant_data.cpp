// The added elementwise ops (BitCast, bitwise ops, BitShift, trigonometric and activation functions), the
// quantized products and the data-dependent ops against values worked out by hand, with errors naming the node.
#include <QtTest>

#include <cmath>
#include <numbers>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;
Tensor U8(Shape shape, V values) { return T(DType::U8, std::move(shape), std::move(values)); }

}  // namespace

class TestQuantData : public QObject {
  Q_OBJECT
 private slots:
  // Cast to float8 rounds to nearest even and saturates unless saturate=0; QuantizeLinear to float8 does not
  // round to an integer; DequantizeLinear decodes.
  void float8CastAndQuantize() {
    Tensor x = F32({4}, {1.0625, 500, -1e9, 0.3});
    EXPECT_TENSOR(run1("Cast", {x}, {{"to", 17}}), (TensorType{DType::F8E4M3FN, {4}}), (V{1.0, 448, -448, 0.3125}), 0);
    Tensor open = run1("Cast", {x}, {{"to", 17}, {"saturate", 0}});
    QVERIFY(std::isnan(open.getDouble(1)) && std::isnan(open.getDouble(2)));
    Tensor e5 = run1("Cast", {x}, {{"to", 19}, {"saturate", 0}});
    QCOMPARE(e5.getDouble(2), -INFINITY);
    EXPECT_TENSOR(run1("Cast", {e5}, {{"to", 1}}), (TensorType{DType::F32, {4}}), (V{1.0, 512, -INFINITY, 0.3125}), 0);
    Tensor q = run1("QuantizeLinear", {F32({3}, {1, 3, 1000}), F32({}, {2})}, {{"output_dtype", 17}});
    EXPECT_TENSOR(q, (TensorType{DType::F8E4M3FN, {3}}), (V{0.5, 1.5, 448}), 0);
    EXPECT_TENSOR(run1("DequantizeLinear", {q, F32({}, {2})}), (TensorType{DType::F32, {3}}), (V{1, 3, 896}), 0);
  }
  // Cast to f8e8m0 rounds by round_mode (up by default), drops the sign and saturates unless saturate=0; an
  // unknown round_mode is refused naming it. Cast to f4e2m1 rounds to nearest even and always saturates; to i2
  // and u2 it wraps as ONNX's Cast does.
  void smallTypeCasts() {
    Tensor x = F32({4}, {1.5, -3, 0, 1e39});
    EXPECT_TENSOR(run1("Cast", {x}, {{"to", 24}}), (TensorType{DType::F8E8M0, {4}}),
                  (V{2, 4, std::ldexp(1.0, -127), std::nan("")}), 0);  // 1e39 is an f32 infinity: NaN
    EXPECT_TENSOR(run1("Cast", {x}, {{"to", 24}, {"round_mode", "down"}}), (TensorType{DType::F8E8M0, {4}}),
                  (V{1, 2, std::ldexp(1.0, -127), std::nan("")}), 0);
    Tensor big = T(DType::F64, {1}, {std::ldexp(1.5, 127)});
    EXPECT_TENSOR(run1("Cast", {big}, {{"to", 24}}), (TensorType{DType::F8E8M0, {1}}), (V{std::ldexp(1.0, 127)}), 0);
    QVERIFY(std::isnan(run1("Cast", {big}, {{"to", 24}, {"saturate", 0}}).getDouble(0)));
    EXPECT_ERROR(run1("Cast", {x}, {{"to", 24}, {"round_mode", "even"}}), "node 'node1' (Cast)",
                 "attribute 'round_mode' = 'even' is not up, down or nearest");
    EXPECT_TENSOR(run1("CastLike", {x, T(DType::F4E2M1, {1}, {0})}), (TensorType{DType::F4E2M1, {4}}),
                  (V{1.5, -3, 0, 6}), 0);
    EXPECT_TENSOR(run1("Cast", {F32({4}, {-3, 2, 3, 1.9})}, {{"to", 26}}), (TensorType{DType::I2, {4}}),
                  (V{1, -2, -1, 1}), 0);
    EXPECT_TENSOR(run1("Cast", {T(DType::I8, {2}, {-1, 5})}, {{"to", 25}}), (TensorType{DType::U2, {2}}), (V{3, 1}), 0);
  }
  // QuantizeLinear to i2 / u2 clamps to -2..1 / 0..3; to f4e2m1 it does not round to an integer and saturates;
  // DequantizeLinear reads them back; f8e8m0 is no quantized type.
  void smallTypeQuantize() {
    Tensor x = F32({4}, {-9, -1.4, 0.6, 9}), one = F32({}, {1});
    EXPECT_TENSOR(run1("QuantizeLinear", {x, one, T(DType::I2, {}, {0})}), (TensorType{DType::I2, {4}}),
                  (V{-2, -1, 1, 1}), 0);
    Tensor u = run1("QuantizeLinear", {x, one, T(DType::U2, {}, {1})});
    EXPECT_TENSOR(u, (TensorType{DType::U2, {4}}), (V{0, 0, 2, 3}), 0);
    EXPECT_TENSOR(run1("DequantizeLinear", {u, F32({}, {2}), T(DType::U2, {}, {1})}), (TensorType{DType::F32, {4}}),
                  (V{-2, -2, 2, 4}), 0);
    Tensor f = run1("QuantizeLinear", {x, F32({}, {2}), T(DType::F4E2M1, {}, {0})});
    EXPECT_TENSOR(f, (TensorType{DType::F4E2M1, {4}}), (V{-4, -0.5, 0.5, 4}), 0);
    EXPECT_TENSOR(run1("DequantizeLinear", {f, F32({}, {3})}), (TensorType{DType::F32, {4}}), (V{-12, -1.5, 1.5, 12}),
                  0);
    EXPECT_ERROR(run1("QuantizeLinear", {x, one}, {{"output_dtype", 24}}), "node 'node1' (QuantizeLinear)",
                 "quantizes to f8e8m0");
  }
  void bitCast() {
    // 1.0f is 0x3f800000.
    EXPECT_TENSOR(run1("BitCast", {F32({1}, {1})}, {{"to", 6}}), (TensorType{DType::I32, {1}}), (V{1065353216}), 0);
    EXPECT_TENSOR(run1("BitCast", {T(DType::I8, {2}, {-1, 5})}, {{"to", 2}}), (TensorType{DType::U8, {2}}), (V{255, 5}),
                  0);
    EXPECT_ERROR(run1("BitCast", {T(DType::I16, {1}, {1})}, {{"to", 1}}), "node 'node1' (BitCast)", "the same size");
  }
  void bitwise() {
    Tensor a = T(DType::I32, {2}, {12, 10}), b = T(DType::I32, {2}, {10, 6});
    EXPECT_TENSOR(run1("BitwiseAnd", {a, b}), (TensorType{DType::I32, {2}}), (V{8, 2}), 0);
    EXPECT_TENSOR(run1("BitwiseOr", {a, b}), (TensorType{DType::I32, {2}}), (V{14, 14}), 0);
    EXPECT_TENSOR(run1("BitwiseXor", {a, b}), (TensorType{DType::I32, {2}}), (V{6, 12}), 0);
    EXPECT_TENSOR(run1("BitwiseNot", {U8({2}, {0, 255})}), (TensorType{DType::U8, {2}}), (V{255, 0}), 0);
    EXPECT_TENSOR(run1("BitwiseNot", {T(DType::I8, {1}, {0})}), (TensorType{DType::I8, {1}}), (V{-1}), 0);
    // u8 shifts wrap at 8 bits.
    EXPECT_TENSOR(run1("BitShift", {U8({2}, {1, 128}), U8({2}, {1, 1})}, {{"direction", "LEFT"}}),
                  (TensorType{DType::U8, {2}}), (V{2, 0}), 0);
    EXPECT_TENSOR(run1("BitShift", {U8({1}, {16}), U8({1}, {3})}, {{"direction", "RIGHT"}}),
                  (TensorType{DType::U8, {1}}), (V{2}), 0);
    EXPECT_ERROR(run1("BitShift", {a, b}, {{"direction", "LEFT"}}), "node 'node1' (BitShift)", "unsigned integers");
    EXPECT_ERROR(run1("BitwiseAnd", {F32({1}, {1}), F32({1}, {1})}), "node 'node1' (BitwiseAnd)", "input 0 is f32");
  }
  void unaryMath() {
    double pi = std::numbers::pi;
    EXPECT_TENSOR(run1("Tan", {T(DType::F64, {1}, {pi / 4})}), (TensorType{DType::F64, {1}}), (V{1}), 1e-15);
    EXPECT_TENSOR(run1("Acos", {T(DType::F64, {2}, {0, 1})}), (TensorType{DType::F64, {2}}), (V{pi / 2, 0}), 1e-15);
    EXPECT_TENSOR(run1("Cosh", {T(DType::F64, {1}, {1})}), (TensorType{DType::F64, {1}}),
                  (V{(std::exp(1.0) + std::exp(-1.0)) / 2}), 1e-15);
    EXPECT_TENSOR(run1("Atanh", {T(DType::F64, {1}, {0.5})}), (TensorType{DType::F64, {1}}), (V{0.5 * std::log(3.0)}),
                  1e-15);
    // Mish(1) = tanh(ln(1 + e)); Swish(x) = x * sigmoid(alpha * x).
    EXPECT_TENSOR(run1("Mish", {T(DType::F64, {1}, {1})}), (TensorType{DType::F64, {1}}),
                  (V{std::tanh(std::log1p(std::exp(1.0)))}), 1e-15);
    EXPECT_TENSOR(run1("Swish", {T(DType::F64, {1}, {2})}, {{"alpha", 0.5}}), (TensorType{DType::F64, {1}}),
                  (V{2 / (1 + std::exp(-1.0))}), 1e-15);
    EXPECT_TENSOR(run1("Shrink", {F32({5}, {-2, -1, 0, 1, 2})}, {{"lambd", 1.5}, {"bias", 0.5}}),
                  (TensorType{DType::F32, {5}}), (V{-1.5, 0, 0, 0, 1.5}), 0);
  }
  void integerProducts() {
    // (3 - 1) * (5 - 2) + (4 - 1) * (6 - 2) = 18.
    Tensor a = U8({1, 2}, {3, 4}), b = U8({2, 1}, {5, 6});
    EXPECT_TENSOR(run1("MatMulInteger", {a, b, U8({}, {1}), U8({}, {2})}), (TensorType{DType::I32, {1, 1}}), (V{18}),
                  0);
    // (2*2 + 4*2) * 0.5 * 1 / 1 + 10 = 16; a result past 255 saturates.
    Tensor qa = U8({1, 2}, {2, 4}), qb = U8({2, 1}, {2, 2});
    Tensor half = F32({}, {0.5}), one = F32({}, {1}), zero = U8({}, {0});
    EXPECT_TENSOR(run1("QLinearMatMul", {qa, half, zero, qb, one, zero, one, U8({}, {10})}),
                  (TensorType{DType::U8, {1, 1}}), (V{16}), 0);
    EXPECT_TENSOR(run1("QLinearMatMul", {qa, F32({}, {100}), zero, qb, one, zero, one, zero}),
                  (TensorType{DType::U8, {1, 1}}), (V{255}), 0);
    EXPECT_ERROR(run1("QLinearMatMul", {qa, half, zero, qb, F32({3}, {1, 1, 1}), zero, one, zero}),
                 "node 'node1' (QLinearMatMul)", "b_scale f32[3] must hold 1 or 1 values");
    // ConvInteger: a 1x1 kernel of 2 over [1, 2, 3] shifted by x_zero 1: [0, 2, 4].
    EXPECT_TENSOR(run1("ConvInteger", {U8({1, 1, 3}, {1, 2, 3}), U8({1, 1, 1}, {2}), U8({}, {1})}),
                  (TensorType{DType::I32, {1, 1, 3}}), (V{0, 2, 4}), 0);
    // The range [-10, 245] gives scale 1 and zero point 10.
    OpRun d = runOp("DynamicQuantizeLinear", {F32({3}, {-10, 0, 245})}, {}, {}, 3);
    EXPECT_TENSOR(d.outputs[0], (TensorType{DType::U8, {3}}), (V{0, 10, 255}), 0);
    EXPECT_TENSOR(d.outputs[1], (TensorType{DType::F32, {}}), (V{1}), 0);
    EXPECT_TENSOR(d.outputs[2], (TensorType{DType::U8, {}}), (V{10}), 0);
  }
  void dataDependent() {
    EXPECT_TENSOR(run1("NonZero", {F32({2, 2}, {1, 0, 1, 1})}, {}, {0}), (TensorType{DType::I64, {2, 3}}),
                  (V{0, 1, 1, 0, 0, 1}), 0);
    EXPECT_ERROR(run1("NonZero", {F32({2}, {1, 0})}), "node 'node1' (NonZero)", "input 0 (X) must be a constant");
    Tensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
    EXPECT_TENSOR(run1("Compress", {x, T(DType::Bool, {3}, {0, 1, 1})}, {{"axis", 0}}, {0, 1}),
                  (TensorType{DType::F32, {2, 2}}), (V{3, 4, 5, 6}), 0);
    EXPECT_TENSOR(run1("Compress", {x, T(DType::Bool, {5}, {0, 1, 0, 0, 1})}, {}, {0, 1}),
                  (TensorType{DType::F32, {2}}), (V{2, 5}), 0);
    Tensor u = F32({6}, {2, 1, 1, 3, 4, 3});
    OpRun s = runOp("Unique", {u}, {}, {0}, 4);
    EXPECT_TENSOR(s.outputs[0], (TensorType{DType::F32, {4}}), (V{1, 2, 3, 4}), 0);
    EXPECT_TENSOR(s.outputs[1], (TensorType{DType::I64, {4}}), (V{1, 0, 3, 4}), 0);
    EXPECT_TENSOR(s.outputs[2], (TensorType{DType::I64, {6}}), (V{1, 0, 0, 2, 3, 2}), 0);
    EXPECT_TENSOR(s.outputs[3], (TensorType{DType::I64, {4}}), (V{2, 1, 2, 1}), 0);
    OpRun f = runOp("Unique", {u}, {{"sorted", 0}}, {0}, 4);
    EXPECT_TENSOR(f.outputs[0], (TensorType{DType::F32, {4}}), (V{2, 1, 3, 4}), 0);
    EXPECT_TENSOR(f.outputs[2], (TensorType{DType::I64, {6}}), (V{0, 1, 1, 2, 3, 2}), 0);
  }
  void nonMaxSuppression() {
    // Box 1 overlaps box 0 with IoU 0.9 / 1.1; box 2 is apart.
    Tensor boxes = F32({1, 3, 4}, {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, 10, 1, 11});
    Tensor scores = F32({1, 1, 3}, {0.9, 0.8, 0.7});
    Tensor maxOut = I64({1}, {3}), iou = F32({1}, {0.5});
    EXPECT_TENSOR(run1("NonMaxSuppression", {boxes, scores, maxOut, iou}, {}, {0, 1, 2, 3}),
                  (TensorType{DType::I64, {2, 3}}), (V{0, 0, 0, 0, 0, 2}), 0);
    EXPECT_TENSOR(run1("NonMaxSuppression", {boxes, scores, maxOut, iou, F32({1}, {0.75})}, {}, {0, 1, 2, 3, 4}),
                  (TensorType{DType::I64, {1, 3}}), (V{0, 0, 0}), 0);
    // A looser IoU threshold keeps the overlapping box too; max_output_boxes_per_class caps the count.
    EXPECT_TENSOR(run1("NonMaxSuppression", {boxes, scores, I64({1}, {2}), F32({1}, {0.9})}, {}, {0, 1, 2, 3}),
                  (TensorType{DType::I64, {2, 3}}), (V{0, 0, 0, 0, 0, 1}), 0);
    EXPECT_ERROR(run1("NonMaxSuppression", {F32({1, 3, 3}, V(9, 0)), scores}, {}, {0, 1}),
                 "node 'node1' (NonMaxSuppression)", "must be [B, N, 4]");
  }
};

QTEST_GUILESS_MAIN(TestQuantData)
#include "test_quant_data.moc"
