// Resize and Upsample as generated kernels (kernel/lower/lower_resize.cpp): nearest in each rounding mode, linear
// with each coordinate transform PyTorch and TensorFlow export, up and down, odd ratios, an axes subset, f16,
// and Upsample. Each kernel runs in the kernel interpreter (as lowered and default-scheduled) against the
// reference interpreter, its CUDA compiles with NVRTC for sm_90 (no GPU needed), and the cpu backend runs it as a
// kernel, not a host group, verified. Cubic filters and the other forms without taps of their own are refused
// naming the node, so they stay host groups.
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

struct Resample {
  Shape in;
  std::vector<double> scales;  // or, when empty, sizes
  std::vector<int64_t> sizes;
  Attributes attrs;
  DType type = DType::F32;
};

Case resize(const Resample& r, const std::string& op = "Resize") {
  GraphBuilder b("rz");
  Value* x = b.input("x", {r.type, r.in});
  std::vector<Value*> in = {x};
  if (op == "Upsample") {
    in.push_back(b.constant("scales", Tensor::fromDoubles(DType::F32, {int64_t(r.scales.size())}, r.scales)));
  } else {
    in.push_back(nullptr);
    if (!r.scales.empty()) in.push_back(b.constant("scales", Tensor::fromDoubles(DType::F32, {int64_t(r.scales.size())}, r.scales)));
    else in.insert(in.end(), {nullptr, b.ints("sizes", r.sizes)});
  }
  b.output(b.op(op, in, r.attrs, "resize"));
  return {b.finish(), {"g0", "opaque", {"resize"}}};
}

void check(const Resample& r, const std::string& op = "Resize") {
  std::string why = agreesEverywhere(resize(r, op), "data-movement", 5);
  QVERIFY2(why.empty(), why.c_str());
}

Attributes linear(const std::string& transform) { return {{"mode", "linear"}, {"coordinate_transformation_mode", transform}}; }
Attributes nearest(const std::string& transform, const std::string& rounding) {
  return {{"mode", "nearest"}, {"coordinate_transformation_mode", transform}, {"nearest_mode", rounding}};
}

}  // namespace

class TestResize : public QObject {
  Q_OBJECT
 private slots:
  void nearestInEveryRoundingMode() {
    for (const char* rounding : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      check({{1, 2, 4, 5}, {1, 1, 2, 3}, {}, nearest("asymmetric", rounding)});
      check({{1, 2, 5, 7}, {}, {1, 2, 7, 3}, nearest("half_pixel", rounding)});  // up 5 -> 7, down 7 -> 3
    }
    check({{2, 3, 4, 4}, {}, {2, 3, 7, 9}, nearest("align_corners", "round_prefer_ceil")});
    check({{1, 1, 6, 6}, {}, {1, 1, 4, 4}, nearest("tf_half_pixel_for_nn", "round_prefer_floor")});
  }
  void linearWithEachTransform() {
    for (const char* transform : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "half_pixel_symmetric"}) {
      check({{1, 3, 4, 6}, {1, 1, 2, 2}, {}, linear(transform)});       // PyTorch's 2x bilinear upsample
      check({{1, 2, 7, 5}, {}, {1, 2, 3, 11}, linear(transform)});      // odd ratios, down and up
    }
    check({{1, 1, 5, 1}, {}, {1, 1, 1, 1}, linear("pytorch_half_pixel")});  // one output: the -0.5 form
    check({{1, 2, 4, 4}, {1, 1, 0.5, 0.5}, {}, linear("half_pixel")});
  }
  void axesSubsetRankThreeAndHalfPrecision() {
    Attributes a = linear("half_pixel");
    a["axes"] = std::vector<int64_t>{2};
    check({{2, 3, 5}, {}, {4}, a});
    check({{1, 4, 6, 6}, {1, 1, 2, 2}, {}, linear("half_pixel"), DType::F16});
    check({{1, 4, 3, 3}, {1, 1, 3, 3}, {}, nearest("asymmetric", "floor"), DType::F16});
  }
  void integerDataTakesNearestTaps() {
    check({{1, 1, 3, 3}, {1, 1, 2, 2}, {}, nearest("asymmetric", "floor"), DType::I64});
  }
  void upsampleIsResizeWithAsymmetricCoordinates() {
    check({{1, 2, 3, 4}, {1, 1, 2, 3}, {}, {{"mode", "nearest"}}}, "Upsample");
    check({{1, 2, 3, 4}, {1, 1, 2, 2}, {}, {{"mode", "linear"}}}, "Upsample");
  }
  void aLinearKernelReadsFourTapsAndIsOneNest() {
    std::string t = printKernel(lower(resize({{1, 3, 4, 6}, {1, 1, 2, 2}, {}, linear("half_pixel")})));
    QVERIFY(has(t, "floor("));
    size_t loads = 0;
    for (size_t at = t.find("in0["); at != std::string::npos; at = t.find("in0[", at + 1)) ++loads;
    QCOMPARE(loads, size_t(4));
  }
  void formsWithoutTapsAreRefusedNamingTheNode() {
    auto refused = [](const Resample& r, const std::string& what) {
      try {
        lower(resize(r));
      } catch (const Error& e) {
        std::string m = e.what();
        return m.find("'resize'") != std::string::npos && m.find(what) != std::string::npos;
      }
      return false;
    };
    QVERIFY(refused({{1, 1, 4, 4}, {1, 1, 2, 2}, {}, {{"mode", "cubic"}}}, "cubic"));
    QVERIFY(refused({{1, 1, 4, 4}, {1, 1, 0.5, 0.5}, {}, {{"mode", "linear"}, {"antialias", int64_t(1)}}}, "antialias"));
    QVERIFY(refused({{1, 1, 4, 4}, {1, 1, 2, 2}, {}, {{"mode", "linear"}, {"exclude_outside", int64_t(1)}}}, "exclude_outside"));
    // An antialiased upscale is plain linear interpolation: it has its generated form.
    check({{1, 1, 4, 4}, {1, 1, 2, 2}, {}, {{"mode", "linear"}, {"antialias", int64_t(1)}}});
  }
};

QTEST_APPLESS_MAIN(TestResize)
#include "test_resize.moc"
