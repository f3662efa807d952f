// Elementwise ops against hand-checked values: broadcasting, dtypes (f16, bf16, ints, bool), and errors that
// name the node.
#include "op_harness.h"
#include "ops/broadcast.h"
#include "ops/registry.h"

using namespace tessera;
using namespace tessera::test;

namespace {
const double kPi = 3.14159265358979323846;
TensorType ty(DType t, Shape s) { return {t, std::move(s)}; }
}  // namespace

class TestElementwise : public QObject {
  Q_OBJECT
 private slots:
  void addBroadcastsRowVector() {
    Tensor y = run1("Add", {T(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}), T(DType::F32, {3}, {10, 20, 30})});
    EXPECT_TENSOR(y, ty(DType::F32, {2, 3}), (std::vector<double>{11, 22, 33, 14, 25, 36}), 0);
  }
  void mulBroadcastsBothWays() {
    Tensor y = run1("Mul", {T(DType::F64, {2, 1}, {2, 3}), T(DType::F64, {1, 3}, {1, 10, 100})});
    EXPECT_TENSOR(y, ty(DType::F64, {2, 3}), (std::vector<double>{2, 20, 200, 3, 30, 300}), 0);
  }
  // The walk the binary ops use (and the index maps, made by it) gives each element's input elements as numpy's
  // broadcasting does, over any part of the output a thread takes
  // (parts starting and ending inside rows), for inputs broadcast along leading, inner and trailing axes.
  void broadcastWalkMatchesTheIndexMaps() {
    const std::vector<std::tuple<Shape, Shape, Shape>> cases = {
        {{2, 3}, {3}, {2, 3}},          {{4, 1, 5}, {1, 3, 1}, {4, 3, 5}}, {{1, 6, 7, 7}, {6, 1, 1}, {1, 6, 7, 7}},
        {{}, {2, 2}, {2, 2}},           {{3, 1}, {}, {3, 1}},             {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
        {{5, 1, 1, 2}, {3, 1}, {5, 1, 3, 2}}};
    for (const auto& [a, b, shape] : cases) {
      const Shape& out = shape;  // a structured binding cannot be captured before C++20's P1091 (clang 16)
      // Each output element's input element from its coordinates, as numpy defines broadcasting.
      auto indexIn = [&out](const Shape& in, int64_t k) {
        int64_t at = 0, stride = 1;
        for (size_t d = out.size(); d-- > 0; k /= out[d]) {
          const size_t di = d + in.size() - out.size();
          if (d + in.size() < out.size()) continue;
          if (in[di] != 1) at += (k % out[d]) * stride;
          stride *= in[di];
        }
        return at;
      };
      std::vector<int64_t> ma, mb;
      for (int64_t k = 0; k < numElements(out); ++k) ma.push_back(indexIn(a, k)), mb.push_back(indexIn(b, k));
      QCOMPARE(broadcastIndexMap(a, out), ma);
      QCOMPARE(broadcastIndexMap(b, out), mb);
      const int64_t n = numElements(out);
      for (int64_t begin = 0; begin <= n; ++begin)
        for (int64_t end = begin; end <= n; end += std::max<int64_t>(1, n / 7)) {
          int64_t next = begin;
          bool same = true;
          forEachBroadcast(a, b, out, begin, end, [&](int64_t k, int64_t ia, int64_t ib) {
            same = same && k == next++ && ia == ma[size_t(k)] && ib == mb[size_t(k)];
          });
          QVERIFY2(same && next == end, qPrintable(QString("out %1 elements, [%2, %3)").arg(n).arg(begin).arg(end)));
        }
    }
  }
  void subScalarAndEmpty() {
    Tensor y = run1("Sub", {T(DType::F32, {}, {5}), T(DType::F32, {2}, {1, 7})});
    EXPECT_TENSOR(y, ty(DType::F32, {2}), (std::vector<double>{4, -2}), 0);
    Tensor e = run1("Sub", {T(DType::F32, {0, 2}, {}), T(DType::F32, {2}, {1, 7})});
    EXPECT_TENSOR(e, ty(DType::F32, {0, 2}), std::vector<double>{}, 0);
  }
  void integerDivTruncatesTowardZero() {
    Tensor y = run1("Div", {T(DType::I32, {5}, {-7, 7, 7, -8, 5}), T(DType::I32, {5}, {2, -2, 2, -3, 0})});
    // x / 0 is undefined in ONNX; we define it as 0 instead of trapping.
    EXPECT_TENSOR(y, ty(DType::I32, {5}), (std::vector<double>{-3, -3, 3, 2, 0}), 0);
  }
  void integerArithmeticWraps() {
    Tensor a = run1("Add", {T(DType::I8, {2}, {100, -100}), T(DType::I8, {2}, {100, -100})});
    EXPECT_TENSOR(a, ty(DType::I8, {2}), (std::vector<double>{-56, 56}), 0);
    Tensor s = run1("Sub", {T(DType::U8, {2}, {3, 200}), T(DType::U8, {2}, {5, 100})});
    EXPECT_TENSOR(s, ty(DType::U8, {2}), (std::vector<double>{254, 100}), 0);
  }
  void int64AddIsExact() {
    int64_t big = (int64_t(1) << 53) + 1;  // not representable in double
    Tensor y = run1("Add", {I64({1}, {big}), I64({1}, {2})});
    QCOMPARE(y.getInt(0), big + 2);
  }
  void uint64IsUnsigned() {
    // UINT64_MAX travels as the int64 bit pattern -1; ordering and division must treat it as 2^64 - 1.
    Tensor a = Tensor::fromInts(DType::U64, {2}, std::vector<int64_t>{-1, 10});
    Tensor b = Tensor::fromInts(DType::U64, {2}, std::vector<int64_t>{2, 3});
    Tensor q = run1("Div", {a, b});
    QCOMPARE(uint64_t(q.getInt(0)), UINT64_MAX / 2);
    QCOMPARE(q.getInt(1), int64_t(3));
    QCOMPARE(uint64_t(run1("Mod", {a, b}).getInt(0)), uint64_t(1));
    Tensor less = run1("Less", {a, b});
    QCOMPARE(less.getInt(0), int64_t(0));  // 2^64 - 1 < 2 is false
    QCOMPARE(uint64_t(run1("Max", {a, b}).getInt(0)), UINT64_MAX);
    QCOMPARE(uint64_t(run1("Add", {a, b}).getInt(0)), uint64_t(1));  // wraps
    QCOMPARE(a.getDouble(0), 18446744073709551615.0);
  }
  void powIntegerIsExact() {
    Tensor y = run1("Pow", {I64({4}, {3, 2, -2, 7}), I64({4}, {4, -1, 3, 0})});
    EXPECT_TENSOR(y, ty(DType::I64, {4}), (std::vector<double>{81, 0, -8, 1}), 0);
    Tensor big = run1("Pow", {I64({1}, {3}), I64({1}, {39})});
    QCOMPARE(big.getInt(0), int64_t(4052555153018976267));  // 3^39, beyond double precision
  }
  void powMixedTypesKeepBaseDType() {
    Tensor f = run1("Pow", {T(DType::F32, {3}, {2, 4, 9}), T(DType::I32, {3}, {3, -1, 0})});
    EXPECT_TENSOR(f, ty(DType::F32, {3}), (std::vector<double>{8, 0.25, 1}), 0);
    Tensor i = run1("Pow", {T(DType::I32, {2}, {4, 10}), T(DType::F32, {2}, {0.5, 1.5})});
    EXPECT_TENSOR(i, ty(DType::I32, {2}), (std::vector<double>{2, 31}), 0);  // 10^1.5 = 31.6 truncates
  }
  void f16AddRoundsOnceToNearest() {
    // 1 + 3*2^-12 lies 3/4 of the way to the next half (spacing 2^-10): rounds up.
    Tensor y = run1("Add", {T(DType::F16, {2}, {1, 1}), T(DType::F16, {2}, {0.000732421875, 0.00048828125})});
    // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: ties go to even (1).
    EXPECT_TENSOR(y, ty(DType::F16, {2}), (std::vector<double>{1.0009765625, 1.0}), 0);
  }
  void bf16MulRounds() {
    Tensor y = run1("Mul", {T(DType::BF16, {2}, {3, 1.5}), T(DType::BF16, {2}, {0.333984375, 1.0078125})});
    // 3 * 0.333984375 = 1.001953125 -> bf16 spacing at 1 is 2^-7: rounds to 1.0.
    // 1.5 * 1.0078125 = 1.51171875 is the tie between 1.5078125 and 1.515625: ties go to even (1.515625).
    EXPECT_TENSOR(y, ty(DType::BF16, {2}), (std::vector<double>{1.0, 1.515625}), 0);
  }
  void castDoubleToHalfRoundsOnce() {
    // 1 + 2^-11 + 2^-40: just above the tie, so the correct f16 is 1 + 2^-10. Rounding through float first
    // would lose the 2^-40 and give the tie's even neighbour 1.0.
    double v = 1 + std::ldexp(1, -11) + std::ldexp(1, -40);
    Tensor y = run1("Cast", {T(DType::F64, {1}, {v})}, {{"to", 10}});
    EXPECT_TENSOR(y, ty(DType::F16, {1}), std::vector<double>{1.0009765625}, 0);
    Tensor b = run1("Cast", {T(DType::F64, {1}, {1 + std::ldexp(1, -8) + std::ldexp(1, -40)})}, {{"to", 16}});
    EXPECT_TENSOR(b, ty(DType::BF16, {1}), std::vector<double>{1.0078125}, 0);
  }
  void castConversions() {
    Tensor x = T(DType::F32, {5}, {-2.7, 2.7, 0, 300, std::nan("")});
    EXPECT_TENSOR(run1("Cast", {x}, {{"to", 6}}), ty(DType::I32, {5}), (std::vector<double>{-2, 2, 0, 300, 0}), 0);
    EXPECT_TENSOR(run1("Cast", {x}, {{"to", 9}}), ty(DType::Bool, {5}), (std::vector<double>{1, 1, 0, 1, 1}), 0);
    EXPECT_TENSOR(run1("Cast", {T(DType::I32, {2}, {257, -1})}, {{"to", 2}}), ty(DType::U8, {2}),
                  (std::vector<double>{1, 255}), 0);
    EXPECT_TENSOR(run1("Cast", {T(DType::Bool, {2}, {1, 0})}, {{"to", 11}, {"saturate", 0}}), ty(DType::F64, {2}),
                  (std::vector<double>{1, 0}), 0);
    Tensor like = run1("CastLike", {T(DType::F32, {2}, {1.5, -3}), T(DType::I64, {0}, {})});
    EXPECT_TENSOR(like, ty(DType::I64, {2}), (std::vector<double>{1, -3}), 0);
  }
  void castRejectsUnsupportedCode() {
    EXPECT_ERROR(run1("Cast", {T(DType::F32, {1}, {1})}, {{"to", 14}}), "node 'node1' (Cast)", "'to' = 14");  // complex
    EXPECT_ERROR(run1("Cast", {T(DType::F32, {1}, {1})}), "node 'node1'", "'to'", "missing");
  }
  void comparisonsGiveBool() {
    Tensor a = T(DType::F32, {2, 2}, {1, 2, 3, 4}), b = T(DType::F32, {2}, {2, 3});
    EXPECT_TENSOR(run1("Less", {a, b}), ty(DType::Bool, {2, 2}), (std::vector<double>{1, 1, 0, 0}), 0);
    EXPECT_TENSOR(run1("GreaterOrEqual", {a, b}), ty(DType::Bool, {2, 2}), (std::vector<double>{0, 0, 1, 1}), 0);
    EXPECT_TENSOR(run1("Equal", {T(DType::Bool, {2}, {1, 0}), T(DType::Bool, {}, {1})}), ty(DType::Bool, {2}),
                  (std::vector<double>{1, 0}), 0);
    EXPECT_TENSOR(run1("Greater", {I64({2}, {-1, 5}), I64({}, {0})}), ty(DType::Bool, {2}),
                  (std::vector<double>{0, 1}), 0);
  }
  void logicOps() {
    Tensor a = T(DType::Bool, {4}, {0, 0, 1, 1}), b = T(DType::Bool, {4}, {0, 1, 0, 1});
    EXPECT_TENSOR(run1("And", {a, b}), ty(DType::Bool, {4}), (std::vector<double>{0, 0, 0, 1}), 0);
    EXPECT_TENSOR(run1("Or", {a, b}), ty(DType::Bool, {4}), (std::vector<double>{0, 1, 1, 1}), 0);
    EXPECT_TENSOR(run1("Xor", {a, b}), ty(DType::Bool, {4}), (std::vector<double>{0, 1, 1, 0}), 0);
    EXPECT_TENSOR(run1("Not", {a}), ty(DType::Bool, {4}), (std::vector<double>{1, 1, 0, 0}), 0);
    EXPECT_ERROR(run1("And", {a, T(DType::F32, {4}, {0, 1, 0, 1})}), "node 'node1' (And)", "input 1 is f32");
  }
  void whereBroadcastsThreeWays() {
    Tensor c = T(DType::Bool, {2, 1}, {1, 0});
    Tensor y = run1("Where", {c, T(DType::I32, {3}, {1, 2, 3}), T(DType::I32, {}, {-1})});
    EXPECT_TENSOR(y, ty(DType::I32, {2, 3}), (std::vector<double>{1, 2, 3, -1, -1, -1}), 0);
    EXPECT_ERROR(run1("Where", {T(DType::F32, {1}, {1}), T(DType::F32, {1}, {1}), T(DType::F32, {1}, {1})}),
                 "node 'node1' (Where)", "input 0 is f32");
  }
  void clipBoundsAreOptional() {
    Tensor x = T(DType::F32, {4}, {-5, -1, 1, 5});
    EXPECT_TENSOR(run1("Clip", {x, T(DType::F32, {}, {-2}), T(DType::F32, {}, {2})}), ty(DType::F32, {4}),
                  (std::vector<double>{-2, -1, 1, 2}), 0);
    EXPECT_TENSOR(run1("Clip", {x, Tensor(), T(DType::F32, {}, {0})}), ty(DType::F32, {4}),
                  (std::vector<double>{-5, -1, 0, 0}), 0);
    EXPECT_TENSOR(run1("Clip", {x, T(DType::F32, {}, {3}), T(DType::F32, {}, {1})}), ty(DType::F32, {4}),
                  (std::vector<double>{1, 1, 1, 1}), 0);  // min > max gives max, as numpy.clip
    EXPECT_TENSOR(run1("Clip", {T(DType::I8, {3}, {-128, 0, 127}), T(DType::I8, {}, {-100})}), ty(DType::I8, {3}),
                  (std::vector<double>{-100, 0, 127}), 0);
    EXPECT_ERROR(run1("Clip", {x, T(DType::F32, {2}, {0, 1})}), "node 'node1' (Clip)", "min", "scalar");
  }
  void variadicOpsBroadcast() {
    Tensor a = T(DType::F32, {2, 2}, {1, 5, 3, 8}), b = T(DType::F32, {2}, {4, 4}), c = T(DType::F32, {}, {2});
    EXPECT_TENSOR(run1("Max", {a, b, c}), ty(DType::F32, {2, 2}), (std::vector<double>{4, 5, 4, 8}), 0);
    EXPECT_TENSOR(run1("Min", {a, b, c}), ty(DType::F32, {2, 2}), (std::vector<double>{1, 2, 2, 2}), 0);
    EXPECT_TENSOR(run1("Sum", {a, b, c}), ty(DType::F32, {2, 2}), (std::vector<double>{7, 11, 9, 14}), 0);
    EXPECT_TENSOR(run1("Mean", {a, b}), ty(DType::F32, {2, 2}), (std::vector<double>{2.5, 4.5, 3.5, 6}), 0);
    EXPECT_TENSOR(run1("Sum", {b}), ty(DType::F32, {2}), (std::vector<double>{4, 4}), 0);
    EXPECT_TENSOR(run1("Max", {T(DType::U8, {2}, {3, 250}), T(DType::U8, {1}, {7})}), ty(DType::U8, {2}),
                  (std::vector<double>{7, 250}), 0);
    EXPECT_ERROR(run1("Max", {a, T(DType::F32, {3}, {1, 2, 3})}), "node 'node1' (Max)", "do not broadcast");
  }
  void modFollowsSignRules() {
    Tensor a = I64({4}, {7, -7, 7, -7}), b = I64({4}, {3, 3, -3, -3});
    EXPECT_TENSOR(run1("Mod", {a, b}), ty(DType::I64, {4}), (std::vector<double>{1, 2, -2, -1}), 0);
    EXPECT_TENSOR(run1("Mod", {a, b}, {{"fmod", 1}}), ty(DType::I64, {4}), (std::vector<double>{1, -1, 1, -1}), 0);
    Tensor f = run1("Mod", {T(DType::F32, {2}, {5.5, -5.5}), T(DType::F32, {2}, {2, 2})}, {{"fmod", 1}});
    EXPECT_TENSOR(f, ty(DType::F32, {2}), (std::vector<double>{1.5, -1.5}), 0);
    EXPECT_ERROR(run1("Mod", {T(DType::F32, {1}, {1}), T(DType::F32, {1}, {1})}), "node 'node1' (Mod)", "fmod = 1");
  }
  void unaryMath() {
    Tensor x = T(DType::F64, {3}, {-1, 0.5, 2});
    auto map = [](std::vector<double> v, double (*f)(double)) {
      for (double& e : v) e = f(e);
      return v;
    };
    std::vector<double> xs{-1, 0.5, 2};
    EXPECT_TENSOR(run1("Exp", {x}), ty(DType::F64, {3}), map(xs, [](double v) { return std::exp(v); }), 0);
    EXPECT_TENSOR(run1("Tanh", {x}), ty(DType::F64, {3}), map(xs, [](double v) { return std::tanh(v); }), 0);
    EXPECT_TENSOR(run1("Erf", {x}), ty(DType::F64, {3}), map(xs, [](double v) { return std::erf(v); }), 0);
    EXPECT_TENSOR(run1("Sigmoid", {x}), ty(DType::F64, {3}),
                  (std::vector<double>{1 / (1 + std::exp(1.0)), 1 / (1 + std::exp(-0.5)), 1 / (1 + std::exp(-2.0))}),
                  1e-15);
    EXPECT_TENSOR(run1("Reciprocal", {x}), ty(DType::F64, {3}), (std::vector<double>{-1, 2, 0.5}), 0);
    EXPECT_TENSOR(run1("Sqrt", {T(DType::F32, {3}, {4, 2.25, -1})}), ty(DType::F32, {3}),
                  (std::vector<double>{2, 1.5, std::nan("")}), 0);
    EXPECT_TENSOR(run1("Log", {T(DType::F32, {2}, {1, 0})}), ty(DType::F32, {2}), (std::vector<double>{0, -INFINITY}),
                  0);
    EXPECT_TENSOR(run1("Abs", {T(DType::I8, {3}, {-5, 3, -128})}), ty(DType::I8, {3}),
                  (std::vector<double>{5, 3, -128}), 0);  // |-128| wraps in i8, like numpy
    EXPECT_TENSOR(run1("Neg", {T(DType::I32, {2}, {4, -9})}), ty(DType::I32, {2}), (std::vector<double>{-4, 9}), 0);
    EXPECT_TENSOR(run1("Relu", {T(DType::I32, {2}, {4, -9})}), ty(DType::I32, {2}), (std::vector<double>{4, 0}), 0);
    EXPECT_TENSOR(run1("Sign", {T(DType::F32, {3}, {-3, 0, 0.1})}), ty(DType::F32, {3}),
                  (std::vector<double>{-1, 0, 1}), 0);
    EXPECT_TENSOR(run1("Ceil", {T(DType::F32, {2}, {-1.5, 1.2})}), ty(DType::F32, {2}), (std::vector<double>{-1, 2}),
                  0);
    EXPECT_TENSOR(run1("Floor", {T(DType::F32, {2}, {-1.5, 1.2})}), ty(DType::F32, {2}), (std::vector<double>{-2, 1}),
                  0);
    EXPECT_TENSOR(run1("Round", {T(DType::F32, {4}, {0.5, 1.5, 2.5, -0.5})}), ty(DType::F32, {4}),
                  (std::vector<double>{0, 2, 2, -0.0}), 0);
    EXPECT_TENSOR(run1("Cos", {T(DType::F64, {1}, {kPi})}), ty(DType::F64, {1}), std::vector<double>{-1}, 0);
  }
  void activations() {
    Tensor x = T(DType::F32, {4}, {-2, -0.5, 1, 4});
    EXPECT_TENSOR(run1("Relu", {x}), ty(DType::F32, {4}), (std::vector<double>{0, 0, 1, 4}), 0);
    EXPECT_TENSOR(run1("LeakyRelu", {x}, {{"alpha", 0.5}}), ty(DType::F32, {4}), (std::vector<double>{-1, -0.25, 1, 4}),
                  0);
    EXPECT_TENSOR(run1("LeakyRelu", {x}), ty(DType::F32, {4}), (std::vector<double>{-0.02, -0.005, 1, 4}), 1e-9);
    EXPECT_TENSOR(run1("HardSigmoid", {x}, {{"alpha", 0.25}, {"beta", 0.5}}), ty(DType::F32, {4}),
                  (std::vector<double>{0, 0.375, 0.75, 1}), 0);
    EXPECT_TENSOR(run1("HardSwish", {T(DType::F32, {4}, {-4, -1.5, 1.5, 3})}), ty(DType::F32, {4}),
                  (std::vector<double>{0, -0.375, 1.125, 3}), 0);
    EXPECT_TENSOR(run1("ThresholdedRelu", {x}, {{"alpha", 1.0}}), ty(DType::F32, {4}),
                  (std::vector<double>{0, 0, 0, 4}), 0);
    EXPECT_TENSOR(run1("Softsign", {x}), ty(DType::F32, {4}), (std::vector<double>{-2.0 / 3, -1.0 / 3, 0.5, 0.8}),
                  1e-7);
    EXPECT_TENSOR(run1("Elu", {T(DType::F64, {2}, {-1, 2})}, {{"alpha", 2.0}}), ty(DType::F64, {2}),
                  (std::vector<double>{2 * (std::exp(-1.0) - 1), 2}), 1e-15);
    EXPECT_TENSOR(run1("Softplus", {T(DType::F64, {3}, {0, 1, -800})}), ty(DType::F64, {3}),
                  (std::vector<double>{std::log(2.0), std::log(1 + std::exp(1.0)), 0}), 1e-15);
  }
  void gelu() {
    Tensor x = T(DType::F64, {3}, {-1, 0, 2});
    std::vector<double> exact, approx;
    for (double v : {-1.0, 0.0, 2.0}) {
      exact.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
      approx.push_back(0.5 * v * (1 + std::tanh(std::sqrt(2 / kPi) * (v + 0.044715 * v * v * v))));
    }
    EXPECT_TENSOR(run1("Gelu", {x}), ty(DType::F64, {3}), exact, 1e-15);
    EXPECT_TENSOR(run1("Gelu", {x}, {{"approximate", "tanh"}}), ty(DType::F64, {3}), approx, 1e-15);
    QVERIFY(std::fabs(exact[2] - 1.9544997361036416) < 1e-12);  // Phi(2) * 2
    EXPECT_ERROR(run1("Gelu", {x}, {{"approximate", "fast"}}), "node 'node1' (Gelu)", "'fast'");
  }
  void predicates() {
    Tensor x = T(DType::F32, {4}, {1, std::nan(""), INFINITY, -INFINITY});
    EXPECT_TENSOR(run1("IsNaN", {x}), ty(DType::Bool, {4}), (std::vector<double>{0, 1, 0, 0}), 0);
    EXPECT_TENSOR(run1("IsInf", {x}), ty(DType::Bool, {4}), (std::vector<double>{0, 0, 1, 1}), 0);
    EXPECT_TENSOR(run1("IsInf", {x}, {{"detect_negative", 0}}), ty(DType::Bool, {4}), (std::vector<double>{0, 0, 1, 0}),
                  0);
  }
  void halfPrecisionUnary() {
    // exp(1) = 2.71828...; nearest f16 is 2.71875 (spacing 2^-9 in [2, 4)); nearest bf16 is 2.71875 too.
    EXPECT_TENSOR(run1("Exp", {T(DType::F16, {1}, {1})}), ty(DType::F16, {1}), std::vector<double>{2.71875}, 0);
    EXPECT_TENSOR(run1("Exp", {T(DType::BF16, {1}, {1})}), ty(DType::BF16, {1}), std::vector<double>{2.71875}, 0);
  }
  void preluBroadcastsSlope() {
    Tensor y = run1("PRelu", {T(DType::F32, {2, 2}, {-1, 2, -3, 4}), T(DType::F32, {2}, {0.5, 0.25})});
    EXPECT_TENSOR(y, ty(DType::F32, {2, 2}), (std::vector<double>{-0.5, 2, -1.5, 4}), 0);
    EXPECT_ERROR(run1("PRelu", {T(DType::F32, {2}, {1, 2}), T(DType::F32, {2, 2}, {1, 1, 1, 1})}),
                 "node 'node1' (PRelu)", "must broadcast to x");
  }
  void identityAndDropout() {
    Tensor x = T(DType::BF16, {2}, {1.5, -2});
    EXPECT_TENSOR(run1("Identity", {x}), ty(DType::BF16, {2}), (std::vector<double>{1.5, -2}), 0);
    OpRun d = runOp("Dropout", {T(DType::F32, {2}, {1, 2}), T(DType::F32, {}, {0.5})}, {}, {}, 2);
    EXPECT_TENSOR(d.outputs[0], ty(DType::F32, {2}), (std::vector<double>{1, 2}), 0);
    EXPECT_TENSOR(d.outputs[1], ty(DType::Bool, {2}), (std::vector<double>{1, 1}), 0);
    EXPECT_ERROR(runOp("Dropout", {T(DType::F32, {2}, {1, 2}), Tensor(), T(DType::Bool, {}, {1})}, {}, {2}),
                 "node 'node1' (Dropout)", "training_mode");
  }
  void constants() {
    EXPECT_TENSOR(run1("Constant", {}, {{"value_floats", std::vector<double>{1.5, 2}}}), ty(DType::F32, {2}),
                  (std::vector<double>{1.5, 2}), 0);
    EXPECT_TENSOR(run1("Constant", {}, {{"value_int", 7}}), ty(DType::I64, {}), std::vector<double>{7}, 0);
    EXPECT_TENSOR(run1("Constant", {}, {{"value", T(DType::F16, {1, 2}, {0.5, 3})}}), ty(DType::F16, {1, 2}),
                  (std::vector<double>{0.5, 3}), 0);
    EXPECT_ERROR(run1("Constant", {}), "node 'node1' (Constant)", "exactly one");
    EXPECT_TENSOR(run1("ConstantOfShape", {I64({2}, {2, 1})}, {}, {0}), ty(DType::F32, {2, 1}),
                  (std::vector<double>{0, 0}), 0);
    EXPECT_TENSOR(run1("ConstantOfShape", {I64({1}, {3})}, {{"value", T(DType::I32, {1}, {-4})}}, {0}),
                  ty(DType::I32, {3}), (std::vector<double>{-4, -4, -4}), 0);
    EXPECT_TENSOR(run1("ConstantOfShape", {I64({1}, {0})}, {}, {0}), ty(DType::F32, {0}), std::vector<double>{}, 0);
    EXPECT_ERROR(run1("ConstantOfShape", {I64({1}, {3})}), "node 'node1' (ConstantOfShape)", "must be a constant");
  }
  void shapeAndSize() {
    Tensor x(DType::F32, {2, 3, 4});
    EXPECT_TENSOR(run1("Shape", {x}), ty(DType::I64, {3}), (std::vector<double>{2, 3, 4}), 0);
    EXPECT_TENSOR(run1("Shape", {x}, {{"start", 1}, {"end", -1}}), ty(DType::I64, {1}), std::vector<double>{3}, 0);
    EXPECT_TENSOR(run1("Shape", {x}, {{"start", -10}}), ty(DType::I64, {3}), (std::vector<double>{2, 3, 4}), 0);
    EXPECT_TENSOR(run1("Shape", {x}, {{"start", 2}, {"end", 1}}), ty(DType::I64, {0}), std::vector<double>{}, 0);
    EXPECT_TENSOR(run1("Size", {x}), ty(DType::I64, {}), std::vector<double>{24}, 0);
  }
  void range() {
    EXPECT_TENSOR(run1("Range", {T(DType::I32, {}, {10}), T(DType::I32, {}, {4}), T(DType::I32, {}, {-3})}, {},
                       {0, 1, 2}),
                  ty(DType::I32, {2}), (std::vector<double>{10, 7}), 0);
    EXPECT_TENSOR(run1("Range", {T(DType::F32, {}, {1}), T(DType::F32, {}, {2}), T(DType::F32, {}, {0.25})}, {},
                       {0, 1, 2}),
                  ty(DType::F32, {4}), (std::vector<double>{1, 1.25, 1.5, 1.75}), 0);
    EXPECT_TENSOR(run1("Range", {I64({}, {5}), I64({}, {1}), I64({}, {2})}, {}, {0, 1, 2}), ty(DType::I64, {0}),
                  std::vector<double>{}, 0);
    EXPECT_ERROR(run1("Range", {I64({}, {0}), I64({}, {5}), I64({}, {0})}, {}, {0, 1, 2}), "node 'node1' (Range)",
                 "delta");
  }
  void categories() {
    auto category = [](const char* op) {
      const OpSchema* s = OpRegistry::instance().find(op);
      return s ? std::string(opCategoryName(s->category)) : std::string("missing");
    };
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Erf",
                           "Tanh", "Sigmoid", "Relu", "LeakyRelu", "HardSigmoid", "HardSwish", "Gelu", "Clip", "Where",
                           "Max", "Min", "Sum", "Mean", "Cast", "CastLike", "Identity", "Dropout", "Less", "Greater",
                           "Equal", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "Ceil", "Floor",
                           "Sign", "Mod", "Softplus", "Elu", "Selu", "Celu", "ThresholdedRelu", "Softsign", "PRelu",
                           "Round", "IsNaN", "IsInf", "Sin", "Cos"})
      QVERIFY2(category(op) == "pointwise", (std::string(op) + " is " + category(op)).c_str());
    for (const char* op : {"Constant", "ConstantOfShape", "Shape", "Size", "Range"})
      QVERIFY2(category(op) == "constant", (std::string(op) + " is " + category(op)).c_str());
  }
  void overflowingShapesNameTheNode() {
    GraphBuilder b;
    Value* a = b.input("a", {DType::F32, {int64_t(1) << 32, 1}});
    Value* c = b.input("c", {DType::F32, {1, int64_t(1) << 32}});
    EXPECT_ERROR(b.op("Add", {a, c}, {}, "big"), "node 'big' (Add)", "too many elements");
    EXPECT_ERROR(run1("ConstantOfShape", {I64({2}, {int64_t(1) << 40, int64_t(1) << 40})}, {}, {0}),
                 "node 'node1' (ConstantOfShape)", "too many elements");
  }
  void inferenceErrorsNameTheNode() {
    Tensor f = T(DType::F32, {2}, {1, 2});
    EXPECT_ERROR(run1("Sqrt", {T(DType::Bool, {1}, {1})}), "node 'node1' (Sqrt)", "input 0 is bool",
                 "float types");
    EXPECT_ERROR(run1("Add", {f, T(DType::F32, {3}, {1, 2, 3})}), "node 'node1' (Add)", "do not broadcast",
                 "f32[2]", "f32[3]");
    EXPECT_ERROR(run1("Add", {f, T(DType::F64, {2}, {1, 2})}), "node 'node1' (Add)", "dtypes must match", "f32", "f64");
    EXPECT_ERROR(run1("Add", {f, f, f}), "node 'node1' (Add)", "has 3 inputs", "expected 2");
    EXPECT_ERROR(run1("Relu", {}), "node 'node1' (Relu)", "has 0 inputs");
    EXPECT_ERROR(run1("Neg", {T(DType::U8, {1}, {1})}), "node 'node1' (Neg)", "input 0 is u8");
    EXPECT_ERROR(run1("Add", {T(DType::Bool, {1}, {1}), T(DType::Bool, {1}, {1})}), "node 'node1' (Add)",
                 "input 0 is bool");
  }
};

QTEST_GUILESS_MAIN(TestElementwise)
#include "test_elementwise.moc"
