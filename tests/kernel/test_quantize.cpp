// QuantizeLinear and DequantizeLinear as pointwise kernels (kernel/lower/lower_ops.cpp): per-tensor and per-axis
// scales and zero points, the 8- and 16-bit integer types, ties rounded half to even and saturation. Each kernel
// runs in the kernel interpreter against the reference, its CUDA compiles with NVRTC for sm_90, and the cpu
// backend runs it as a kernel, verified (float8 too, saturating; the 4- and 2-bit integers; blocked scales). A
// float8 quantization with saturate = 0 is refused naming the node (it stays a host group).
#include <QtTest>

#include "cpu_run.h"
#include "ir/error.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

struct Quant {
  std::string op;
  DType x, q;             // x's type, and the quantized one (QuantizeLinear's output, DequantizeLinear's input)
  Shape shape, scale;     // scale {} or {1}: per tensor
  Attributes attrs = {};
  bool zeroPoint = true;
};

Case quant(const Quant& c) {
  GraphBuilder b("q");
  Value* x = b.input("x", {c.x, c.shape});
  int64_t n = numElements(c.scale);
  std::vector<double> scales, zeros;
  for (int64_t i = 0; i < n; ++i) {
    scales.push_back(0.05 + 0.03 * double(i));
    zeros.push_back(double(i % 3) * (c.q == DType::I8 || c.q == DType::I16 ? -1 : 1) + 2);
  }
  DType scaleType = c.op == "QuantizeLinear" ? c.x : DType::F32;
  std::vector<Value*> in = {x, b.constant("scale", Tensor::fromDoubles(scaleType, c.scale, scales))};
  if (c.zeroPoint) in.push_back(b.constant("zero", Tensor::fromDoubles(c.q, c.scale, zeros)));
  b.output(b.op(c.op, in, c.attrs, "quant"));
  return {b.finish(), {"g0", "opaque", {"quant"}}};
}

std::string lowerFails(const Quant& c) {
  try {
    lower(quant(c));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

class TestQuantize : public QObject {
  Q_OBJECT
 private slots:
  void quantizePerTensorAndPerAxis() {
    QCOMPARE(agreesEverywhere(quant({"QuantizeLinear", DType::F32, DType::U8, {4, 33}, {}}), "pointwise", 3), std::string());
    QCOMPARE(agreesEverywhere(quant({"QuantizeLinear", DType::F32, DType::I8, {2, 3, 5}, {3}, {{"axis", int64_t(1)}}}), "pointwise", 4),
             std::string());
    QCOMPARE(agreesEverywhere(quant({"QuantizeLinear", DType::F32, DType::I16, {6, 4}, {4}, {{"axis", int64_t(-1)}}}), "pointwise", 5),
             std::string());
    QCOMPARE(agreesEverywhere(quant({"QuantizeLinear", DType::F16, DType::U8, {8, 8}, {}, {}, false}), "pointwise", 6), std::string());
  }
  // x / scale on ties (0.5, 1.5, -2.5, 3.5, -0.5) rounds half to even; 7 and -7 saturate i8 after the zero point.
  void tiesAndSaturation() {
    GraphBuilder b("tie");
    Value* x = b.constant("x", Tensor::fromDoubles(DType::F32, {8}, std::vector<double>{0.025, 0.075, -0.125, 7.0, -7.0, 0.175, 0.0, -0.025}));
    Value* s = b.constant("scale", Tensor::fromDoubles(DType::F32, {}, std::vector<double>{0.05}));
    Value* z = b.constant("zero", Tensor::fromDoubles(DType::I8, {}, std::vector<double>{3}));
    b.output(b.op("QuantizeLinear", {x, s, z}, {}, "quant"));
    QCOMPARE(agreesEverywhere({b.finish(), {"g0", "opaque", {"quant"}}}, "pointwise", 1), std::string());
  }
  void dequantizePerTensorAndPerAxis() {
    QCOMPARE(agreesEverywhere(quant({"DequantizeLinear", DType::U8, DType::U8, {4, 33}, {}}), "pointwise", 7), std::string());
    QCOMPARE(agreesEverywhere(quant({"DequantizeLinear", DType::I8, DType::I8, {2, 3, 5}, {5}, {{"axis", int64_t(2)}}}), "pointwise", 8),
             std::string());
    QCOMPARE(agreesEverywhere(quant({"DequantizeLinear", DType::I16, DType::I16, {3, 7}, {3}, {{"axis", int64_t(0)}}, false}), "pointwise", 9),
             std::string());
  }
  // Float8: the quotient plus the zero point rounds once into the format (nearest even, saturating); the
  // dequantized difference is exact in f32. Per tensor and per axis, e4m3fn and e5m2.
  void float8QuantizeAndDequantize() {
    auto agrees = [](const Quant& q, int seed) {
      std::string why = agreesEverywhere(quant(q), "pointwise", seed);
      QVERIFY2(why.empty(), why.c_str());
    };
    agrees({"QuantizeLinear", DType::F32, DType::F8E4M3FN, {4, 33}, {}}, 10);
    agrees({"QuantizeLinear", DType::F32, DType::F8E5M2, {3, 5}, {5}, {{"axis", int64_t(1)}}}, 11);
    agrees({"DequantizeLinear", DType::F8E4M3FN, DType::F8E4M3FN, {4, 33}, {}}, 12);
    agrees({"DequantizeLinear", DType::F8E5M2, DType::F8E5M2, {3, 5}, {3}, {{"axis", int64_t(0)}}, false}, 13);
  }
  void formsWithoutKernelsAreRefused() {
    QVERIFY(lowerFails({"QuantizeLinear", DType::F32, DType::F8E4M3FN, {4, 4}, {}, {{"saturate", int64_t(0)}}})
                .find("with saturate = 0 has no kernel form") != std::string::npos);
  }
  // int4 saturates to -8..7, uint4 to 0..15, int2 to -2..1 (a byte each in generated code); blocked scales: one per
  // block_size elements along the axis, x's rank, a block left short at the end (7 columns in blocks of 3).
  void subByteAndBlockedForms() {
    const Attributes perRow = {{"axis", int64_t(0)}};
    const Attributes blocked = {{"axis", int64_t(1)}, {"block_size", int64_t(3)}};
    for (const Quant& q : {Quant{"QuantizeLinear", DType::F32, DType::I4, {4, 33}, {}},
                           Quant{"QuantizeLinear", DType::F32, DType::U4, {4, 9}, {4}, perRow},
                           Quant{"QuantizeLinear", DType::F32, DType::I2, {5, 6}, {}},
                           Quant{"DequantizeLinear", DType::I4, DType::I4, {4, 33}, {}},
                           Quant{"DequantizeLinear", DType::U4, DType::U4, {3, 8}, {3}, perRow},
                           Quant{"QuantizeLinear", DType::F32, DType::I8, {4, 7}, {4, 3}, blocked},
                           Quant{"DequantizeLinear", DType::I4, DType::I4, {4, 7}, {4, 3}, blocked},
                           Quant{"DequantizeLinear", DType::U8, DType::U8, {4, 7}, {4, 3}, blocked, false}}) {
      std::string why = agreesEverywhere(quant(q), "pointwise", 20);
      QVERIFY2(why.empty(), (q.op + " " + std::string(dtypeName(q.q)) + ": " + why).c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestQuantize)
#include "test_quantize.moc"
