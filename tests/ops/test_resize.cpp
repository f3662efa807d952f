// Resize against values worked out by hand from the coordinate transforms (and the ONNX example for the linear
// downscale), with the errors naming the node.
#include <QtTest>

#include "op_harness.h"

using namespace tessera;
using namespace tessera::test;

namespace {

using V = std::vector<double>;
Tensor floats(V v) { return F32({int64_t(v.size())}, v); }
Tensor ints(std::vector<int64_t> v) { return I64({int64_t(v.size())}, v); }

}  // namespace

class TestResize : public QObject {
  Q_OBJECT
 private slots:
  void nearestUpscale() {
    // half_pixel: output x maps to (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25; round_prefer_floor picks
    // 0, 0, 1, 1 (-0.25 rounds up to 0).
    Tensor y = run1("Resize", {F32({1, 1, 2, 2}, {1, 2, 3, 4}), Tensor(), floats({1, 1, 2, 2})}, {}, {2});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 4, 4}}), (V{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}), 0);
    // asymmetric + floor: x / 2 floored.
    Tensor a = run1("Resize", {F32({3}, {1, 2, 3}), Tensor(), floats({2})},
                    {{"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}}, {2});
    EXPECT_TENSOR(a, (TensorType{DType::F32, {6}}), (V{1, 1, 2, 2, 3, 3}), 0);
  }
  void linear() {
    // The ONNX example: [1,1,2,4] scaled by 0.6 -> [1,1,1,2] = [2.6666665, 4.3333331].
    Tensor x = F32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
    Tensor y = run1("Resize", {x, Tensor(), floats({1, 1, 0.6, 0.6})}, {{"mode", "linear"}}, {2});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {1, 1, 1, 2}}), (V{2.6666665, 4.3333331}), 1e-6);
    // align_corners to 3 points: 0, 0.5, 1 in input coordinates.
    Tensor z = run1("Resize", {F32({2}, {0, 10}), Tensor(), Tensor(), ints({3})},
                    {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}}, {3});
    EXPECT_TENSOR(z, (TensorType{DType::F32, {3}}), (V{0, 5, 10}), 0);
    // sizes on one axis only (axes = [1]); the other keeps its size.
    Tensor s = run1("Resize", {F32({2, 2}, {0, 10, 20, 30}), Tensor(), Tensor(), ints({3})},
                    {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"},
                     {"axes", std::vector<int64_t>{1}}},
                    {3});
    EXPECT_TENSOR(s, (TensorType{DType::F32, {2, 3}}), (V{0, 5, 10, 20, 25, 30}), 0);
  }
  void cropAndResize() {
    // roi [0, 1.5] on a length-2 axis, 3 outputs: input coordinates 0, 0.75, 1.5; the last is outside the input and
    // takes extrapolation_value.
    Tensor y = run1("Resize", {F32({2}, {0, 10}), floats({0, 1.5}), Tensor(), ints({3})},
                    {{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"},
                     {"extrapolation_value", 7.0}},
                    {3});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {3}}), (V{0, 7.5, 7}), 1e-6);
  }
  void cubicKeepsConstants() {
    // Any cubic weights sum to 1, so a constant input stays constant (edges repeat the border value).
    Tensor y = run1("Resize", {F32({4}, {5, 5, 5, 5}), Tensor(), floats({1.5})}, {{"mode", "cubic"}}, {2});
    EXPECT_TENSOR(y, (TensorType{DType::F32, {6}}), (V{5, 5, 5, 5, 5, 5}), 1e-6);
  }
  void aspectRatio() {
    // not_larger: the common scale is min(4/2, 3/3) = 1, so [2,3] stays [2,3].
    Tensor y = run1("Resize", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor(), Tensor(), ints({4, 3})},
                    {{"keep_aspect_ratio_policy", "not_larger"}}, {3});
    QCOMPARE(y.shape(), (Shape{2, 3}));
    Tensor z = run1("Resize", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor(), Tensor(), ints({4, 3})},
                    {{"keep_aspect_ratio_policy", "not_smaller"}}, {3});
    QCOMPARE(z.shape(), (Shape{4, 6}));
  }
  void errors() {
    Tensor x = F32({2}, {0, 10});
    EXPECT_ERROR(run1("Resize", {x, Tensor(), floats({2}), ints({4})}, {}, {2, 3}), "node 'node1' (Resize)",
                 "exactly one of scales");
    EXPECT_ERROR(run1("Resize", {x, Tensor(), floats({2})}), "node 'node1' (Resize)",
                 "input 2 (scales) must be a constant");
    EXPECT_ERROR(run1("Resize", {x, Tensor(), floats({2, 2})}, {}, {2}), "node 'node1' (Resize)",
                 "2 values for 1 axes");
    EXPECT_ERROR(run1("Resize", {x, Tensor(), floats({2})}, {{"mode", "area"}}, {2}), "node 'node1' (Resize)",
                 "mode 'area'");
    EXPECT_ERROR(run1("Resize", {F32({0}, {}), Tensor(), Tensor(), ints({3})}, {}, {3}), "node 'node1' (Resize)",
                 "is empty");
  }
};

QTEST_GUILESS_MAIN(TestResize)
#include "test_resize.moc"
