// ConvTranspose as a generated kernel (kernel/lower/lower_linalg.cpp, lowerConvTranspose): each output element
// gathers the input elements and taps that scatter onto it. Strides with output padding, pads, dilations,
// groups, output_shape and auto_pad, 1-D and 3-D, a bias and f16. Each kernel runs in the kernel interpreter (as
// lowered and default-scheduled) against the reference interpreter, its CUDA compiles with NVRTC for sm_90, and
// the cpu backend runs it as a kernel, not a host group, verified.
#include <QtTest>

#include "cpu_run.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

struct Transposed {
  Shape x, w;  // X [N, C, spatial...], W [C, M / group, kernel...]
  Attributes attrs;
  bool bias = false;
  DType type = DType::F32;
};

std::string check(const Transposed& t) {
  GraphBuilder b("ct");
  Value* x = b.input("x", {t.type, t.x});
  std::vector<Value*> in = {x, b.input("w", {t.type, t.w})};
  if (t.bias) in.push_back(b.input("b", {t.type, {t.w[1] * (t.attrs.count("group") ? t.attrs.at("group").i() : 1)}}));
  b.output(b.op("ConvTranspose", in, t.attrs, "deconv"));
  return agreesEverywhere({b.finish(), {"g0", "opaque", {"deconv"}}}, "conv", 7);
}

}  // namespace

class TestConvTranspose : public QObject {
  Q_OBJECT
 private slots:
  void strideTwoWithOutputPadding() {
    QCOMPARE(check({{1, 3, 4, 5}, {3, 2, 3, 3}, {{"strides", std::vector<int64_t>{2, 2}}, {"output_padding", std::vector<int64_t>{1, 0}}}, true}),
             std::string());
  }
  void padsAndDilations() {
    QCOMPARE(check({{2, 2, 5, 4}, {2, 3, 3, 2}, {{"pads", std::vector<int64_t>{1, 0, 2, 1}}, {"dilations", std::vector<int64_t>{2, 3}}}}),
             std::string());
  }
  void groupsAndStrideThree() {
    QCOMPARE(check({{1, 4, 3, 3}, {4, 3, 2, 2}, {{"group", int64_t(2)}, {"strides", std::vector<int64_t>{3, 2}}}, true}), std::string());
  }
  void outputShapeAndAutoPad() {
    QCOMPARE(check({{1, 2, 3, 3}, {2, 2, 3, 3}, {{"strides", std::vector<int64_t>{2, 2}}, {"output_shape", std::vector<int64_t>{7, 8}}}}),
             std::string());
    QCOMPARE(check({{1, 2, 3, 4}, {2, 1, 3, 3}, {{"strides", std::vector<int64_t>{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}}}),
             std::string());
  }
  void oneAndThreeSpatialAxes() {
    QCOMPARE(check({{2, 3, 6}, {3, 2, 4}, {{"strides", std::vector<int64_t>{3}}}}), std::string());
    QCOMPARE(check({{1, 2, 2, 3, 2}, {2, 2, 2, 2, 2}, {{"strides", std::vector<int64_t>{2, 1, 2}}}}), std::string());
  }
  void halfPrecision() {
    QCOMPARE(check({{1, 4, 4, 4}, {4, 4, 3, 3}, {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}, true, DType::F16}),
             std::string());
  }
};

QTEST_APPLESS_MAIN(TestConvTranspose)
#include "test_conv_transpose.moc"
