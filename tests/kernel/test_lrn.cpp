// LRN lowered as a window over the channels (kernel/lower/lower_channel_window.cpp): odd and even window sizes, a
// window wider than the channels, ranks 2 to 4, f16, and a fused epilogue. Each kernel runs in the kernel
// interpreter (as lowered and with the pool template's default schedule) against the reference interpreter,
// its CUDA compiles with NVRTC for sm_90 (no GPU needed), and the cpu backend runs it verified.
#include <QtTest>

#include <memory>

#include "codegen/codegen.h"
#include "ir/error.h"
#include "kernel/templates/templates.h"
#include "kernel_fixtures.h"
#include "cpu_run.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

// LRN over x of `shape` (ONNX defaults for the attributes not given), its output the graph's; the group is
// {lrn} or, with `relu`, {lrn, relu}.
Case lrn(Shape shape, Attributes attrs, DType t = DType::F32, bool relu = false) {
  GraphBuilder b("lrn");
  Value* x = b.input("x", {t, std::move(shape)});
  Value* y = b.op("LRN", {x}, std::move(attrs), "lrn");
  KernelSpec spec{"g0", "opaque", {"lrn"}};
  if (relu) {
    y = b.op("Relu", {y}, {}, "relu");
    spec.nodeIds.push_back("relu");
  }
  b.output(y);
  return {b.finish(), spec};
}

Attributes window(int64_t size, double alpha, double beta, double bias) {
  return {{"size", size}, {"alpha", alpha}, {"beta", beta}, {"bias", bias}};
}

// Interpreter, NVRTC and the cpu backend against the reference (cpu_run.h).
std::string agrees(const Case& c) { return agreesEverywhere(c, "pool", 7); }

}  // namespace

class TestLrn : public QObject {
  Q_OBJECT
 private slots:
  void oddWindowsAgreeWithTheReference() {
    for (int64_t size : {3, 5}) {
      Case c = lrn({2, 7, 4, 5}, window(size, 0.8, 0.75, 1.5));
      std::string why = agrees(c);
      QVERIFY2(why.empty(), why.c_str());
    }
  }
  void evenWindowsReachOneChannelFurtherUp() {
    // size 4 spans [c - 1, c + 2], size 2 spans [c, c + 1]: the tap loop starts (size - 1) / 2 below c.
    for (int64_t size : {2, 4}) {
      Case c = lrn({1, 6, 3, 3}, window(size, 1.0, 0.5, 1.0));
      std::string why = agrees(c);
      QVERIFY2(why.empty(), why.c_str());
    }
    std::string t = printKernel(lower(lrn({1, 6, 3, 3}, window(4, 1.0, 0.5, 1.0))));
    QVERIFY(has(t, "for kc in 0..4 reduce {"));
    QVERIFY(has(t, "in0[n, c - 1 + kc, oh, ow]"));
  }
  void windowWiderThanTheChannelsIsClipped() {
    std::string why = agrees(lrn({2, 3, 5}, window(7, 2.0, 1.0, 1.0)));
    QVERIFY2(why.empty(), why.c_str());
  }
  void sizeOneNeedsNoGuard() {
    Case c = lrn({2, 4, 3}, window(1, 1.0, 0.75, 1.0));
    QVERIFY(printKernel(lower(c)).find("select") == std::string::npos);
    std::string why = agrees(c);
    QVERIFY2(why.empty(), why.c_str());
  }
  void rankTwoAndHalfPrecision() {
    std::string why = agrees(lrn({3, 8}, window(3, 0.5, 0.75, 1.0)));
    QVERIFY2(why.empty(), why.c_str());
    why = agrees(lrn({1, 5, 4, 4}, window(5, 0.5, 0.75, 2.0), DType::F16));
    QVERIFY2(why.empty(), why.c_str());
  }
  void epilogueIsAppliedBeforeTheStore() {
    Case c = lrn({1, 5, 2, 3}, window(3, 1.0, 0.75, 1.0), DType::F32, true);
    std::string why = agrees(c);
    QVERIFY2(why.empty(), why.c_str());
    QVERIFY(has(printKernel(lower(c)), "max("));
  }
  void prologueIsRefusedNamingTheNode() {
    GraphBuilder b("lrn");
    Value* x = b.input("x", {DType::F32, {1, 4, 2, 2}});
    b.output(b.op("LRN", {b.op("Relu", {x}, {}, "relu")}, window(3, 1.0, 0.75, 1.0), "lrn"));
    Case c{b.finish(), {"g0", "opaque", {"relu", "lrn"}}};
    try {
      lower(c);
      QFAIL("a prologue was lowered");
    } catch (const Error& e) {
      QVERIFY(has(e.what(), "node 'lrn' (LRN): input 0 is computed inside the group"));
    }
  }
};

QTEST_GUILESS_MAIN(TestLrn)
#include "test_lrn.moc"
