// The quantized products (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv) run as generated kernels on the
// cpu backend: the decompose pass writes each as a zero-shifted product (i32 gemm, or a conv in f32 or f64, whichever
// holds every partial sum exactly) and a requantizing epilogue, and the outputs equal the reference's (integers:
// exactly) over full-range operands, per-row, per-column and per-channel zero points and scales.
#include <QtTest>

#include "cpu_driver_helpers.h"
#include "frontend/text/tsr.h"
#include "ir/random.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

// Every input uniform over its dtype's whole range (u8 0..255, i8 -128..127), i32 biases within ±5000.
std::vector<Tensor> fullRangeInputs(const Graph& g, uint64_t seed) {
  std::vector<Tensor> in;
  for (const Value* v : g.inputs()) {
    DType t = v->dtype();
    double lo = t == DType::U8 ? 0 : t == DType::I8 ? -128 : -5000, hi = t == DType::U8 ? 256 : t == DType::I8 ? 128 : 5000;
    in.push_back(randomUniform(v->type(), seed++, lo, hi));
  }
  return in;
}

void runGenerated(driver::Driver& d, uint64_t seed) { runAllGenerated(d, fullRangeInputs(*d.model(), seed)); }

std::string qlinearConv(int64_t group) {
  return R"(graph qconv {
  input %x: u8[2,32,12,12]
  input %w: i8[24,)" + std::to_string(32 / group) + R"(,3,3]
  input %wz: i8[24]
  input %bias: i32[24]
  const %xs: f32[] = [0.02]
  const %xz: u8[] = [131]
  const %ws: f32[24] = random(seed=3, scale=0.01)
  const %ys: f32[] = [0.37]
  const %yz: u8[] = [100]
  node q = QLinearConv(%x, %xs, %xz, %w, %ws, %wz, %ys, %yz, %bias) {pads=[1,1,1,1], strides=[1,2], group=)" +
         std::to_string(group) + R"(} -> %y
  output %y
})";
}

}  // namespace

class TestQuantizedKernels : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!hasCompiler()) QSKIP("no C++ compiler for the cpu backend");
  }

  // 32 · 9 = 288 taps a sum: up to 288 · 255² ≥ 2^24, so the conv runs in f64; with two groups 144 taps stay
  // below 2^24 and it runs in f32. Either way the requantizing epilogue is the conv kernel's.
  void qlinearConvIsAConvKernel() {
    for (int64_t group : {1, 2}) {
      driver::Driver d = cpuDriver(parseTsr(qlinearConv(group)));
      runGenerated(d, 11 + uint64_t(group));
      const Node* conv = compiledNode(d, "q.product");
      QVERIFY(conv && conv->op() == "Conv");
      QCOMPARE(conv->output(0)->dtype(), group == 1 ? DType::F64 : DType::F32);
      QCOMPARE(kernelOf(d, "q.product").spec.nodeIds, kernelOf(d, "q.out").spec.nodeIds);
      QCOMPARE(compiledNode(d, "q.biased")->output(0)->dtype(), DType::F64);  // an i32 bias rounds in f32
    }
  }

  // a [2, 40, 300] with a zero point per row (reshaped to [40, 1]), b with a scale and zero point per column.
  void qlinearMatMulIsAGemmKernel() {
    driver::Driver d = cpuDriver(parseTsr(R"(graph qmm {
  input %a: u8[2,40,300]
  input %az: u8[40]
  input %b: i8[300,48]
  input %bz: i8[48]
  const %as: f32[] = [0.05]
  const %bs: f32[48] = random(seed=5, scale=0.02)
  const %ys: f32[] = [0.9]
  const %yz: i8[] = [-3]
  node q = QLinearMatMul(%a, %as, %az, %b, %bs, %bz, %ys, %yz) -> %y
  output %y
})"));
    runGenerated(d, 21);
    QCOMPARE(compiledNode(d, "q.product")->output(0)->dtype(), DType::I32);
    QCOMPARE(kernelOf(d, "q.product").spec.nodeIds, kernelOf(d, "q.out").spec.nodeIds);
  }

  void integerProductsAreKernels() {
    driver::Driver mm = cpuDriver(parseTsr(R"(graph mmi {
  input %a: u8[64,256]
  input %az: u8[64]
  input %b: u8[256,32]
  input %bz: u8[32]
  node q = MatMulInteger(%a, %b, %az, %bz) -> %y
  output %y
})"));
    runGenerated(mm, 31);
    QCOMPARE(compiledNode(mm, "q.product")->op(), std::string("MatMul"));
    driver::Driver conv = cpuDriver(parseTsr(R"(graph ci {
  input %x: i8[1,300,5,5]
  input %w: u8[8,300,1,1]
  input %xz: i8[]
  node q = ConvInteger(%x, %w, %xz) -> %y
  output %y
})"));
    runGenerated(conv, 41);
    QCOMPARE(compiledNode(conv, "q.product")->output(0)->dtype(), DType::F64);  // 300 · 255² > 2^24
  }

  // onnxruntime's dynamic quantization: x quantized by its own range (two whole-tensor reductions and pointwise
  // ops in one kernel), an i8 gemm, the product rescaled by both scales. x all zeros (a zero range) too.
  void dynamicQuantizationIsKernels() {
    driver::Driver d = cpuDriver(parseTsr(R"(graph dq {
  input %x: f32[64,256]
  const %w: i8[256,96] = random(seed=7, scale=120)
  const %ws: f32[] = [0.004]
  const %wz: i8[] = [0]
  node dq = DynamicQuantizeLinear(%x) -> %xq, %xs, %xz
  node mm = MatMulInteger(%xq, %w, %xz, %wz) -> %acc
  node f = Cast(%acc) {to=1} -> %accf
  node s = Mul(%xs, %ws) -> %scale
  node y = Mul(%accf, %scale) -> %y
  output %y, %xq, %xs, %xz
})"));
    runAllGenerated(d, {randomUniform(d.model()->inputs()[0]->type(), 61, -3.0, 5.0)});
    QVERIFY(compiledNode(d, "dq") == nullptr && compiledNode(d, "dq.steps") != nullptr);
    runAllGenerated(d, {Tensor(DType::F32, {64, 256})});
  }

  // The same kernels in CUDA: NVRTC compiles each for sm_90, the f64 rounding a round-to-nearest-even convert.
  void cudaSourceCompiles() {
    for (const std::string& text : {qlinearConv(1), qlinearConv(2)}) {
      driver::Driver d = cpuDriver(parseTsr(text));
      std::shared_ptr<const driver::PtxStage> p = d.ptx("sm_90");
      QVERIFY(!p->ptx.empty());
      bool rounds = false;
      for (size_t k = 0; k < p->ptx.size(); ++k) {
        QVERIFY2(p->errors[k].empty(), p->errors[k].c_str());
        rounds = rounds || p->ptx[k].find("cvt.rni.f64.f64") != std::string::npos;
      }
      QVERIFY(rounds);
    }
  }

  // bf16 scales: the reference forms the factor in f64, which primitives in bf16 would not; the node stays whole.
  void bf16ScalesStayWhole() {
    driver::Driver d = cpuDriver(parseTsr(R"(graph qmm {
  input %a: u8[4,8]
  input %b: u8[8,4]
  const %s: bf16[] = [0.5]
  const %z: u8[] = [3]
  node q = QLinearMatMul(%a, %s, %z, %b, %s, %z, %s, %z) -> %y
  output %y
})"));
    QVERIFY(compiledNode(d, "q") != nullptr);
    execute::RunReport r = runOnCpu(d, fullRangeInputs(*d.model(), 51));
    QVERIFY(reportOf(r, "q").onHost());
    QVERIFY(r.outputsVerified);
  }
};

QTEST_GUILESS_MAIN(TestQuantizedKernels)
#include "test_quantized_kernels.moc"
