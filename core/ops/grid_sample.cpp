// GridSample and AffineGrid, the grids it samples by.
//
// GridSample (opset 16-22, any number of spatial dims): Y[n, c, o...] samples X[n, c] at the point grid[n, o...],
// whose last dim holds coordinates in [-1, 1] in reverse dim order (x = the last spatial dim). mode nearest,
// linear (bilinear) or cubic (bicubic, Keys a = -0.75); padding_mode zeros, border or reflection; align_corners
// maps -1 and 1 to the centres (1) or the outer edges (0) of the corner pixels. Follows ONNX's reference.
#include <cmath>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

enum class SampleMode { Nearest, Linear, Cubic };
enum class Padding { Zeros, Border, Reflection };

struct GridOptions {
  SampleMode mode;
  Padding padding;
  bool alignCorners;
};

GridOptions gridOptions(const Node& node) {
  std::string m = node.attrString("mode", "linear"), p = node.attrString("padding_mode", "zeros");
  GridOptions o{};
  if (m == "nearest") o.mode = SampleMode::Nearest;
  else if (m == "linear" || m == "bilinear") o.mode = SampleMode::Linear;
  else if (m == "cubic" || m == "bicubic") o.mode = SampleMode::Cubic;
  else failNode(node, "mode '" + m + "' is not nearest, linear or cubic");
  if (p == "zeros") o.padding = Padding::Zeros;
  else if (p == "border") o.padding = Padding::Border;
  else if (p == "reflection") o.padding = Padding::Reflection;
  else failNode(node, "padding_mode '" + p + "' is not zeros, border or reflection");
  o.alignCorners = node.attrInt("align_corners", 0) != 0;
  return o;
}

// Reflects x into [lo, hi] by the nearer border until it lies inside.
double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo || x > hi) {
    double d = x < lo ? lo - x : x - hi;
    auto n = int64_t(d / range);
    double r = d - double(n) * range;
    bool even = n % 2 == 0;
    return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
  }
  return x;
}

struct AxisSampler {
  int64_t size;
  double lo, hi;  // the reflection borders
  // Input index for tap i, or -1 for a zero pad.
  int64_t index(int64_t i, Padding p) const {
    if (p == Padding::Zeros) return i >= 0 && i < size ? i : -1;
    if (p == Padding::Border) return std::clamp<int64_t>(i, 0, size - 1);
    return std::clamp<int64_t>(int64_t(reflect(double(i), lo, hi)), 0, size - 1);
  }
};

// The taps (index offsets from floor(x)) and weights of one coordinate.
void tapsOf(double x, SampleMode mode, std::vector<int64_t>& at, std::vector<double>& w) {
  double f = std::floor(x), t = x - f;
  auto base = int64_t(f);
  at.clear();
  w.clear();
  if (mode == SampleMode::Nearest) {
    at = {int64_t(x)};  // x is already rounded
    w = {1.0};
  } else if (mode == SampleMode::Linear) {
    at = {base, base + 1};
    w = {1 - t, t};
  } else {
    const double A = -0.75;
    auto near = [A](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
    auto far = [A](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
    at = {base - 1, base, base + 1, base + 2};
    w = {far(t + 1), near(t), near(1 - t), far(2 - t)};
  }
}

void inferGridSample(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Numeric);
  requireDType(ctx, 1, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  const Shape& g = ctx.input(1).shape;
  if (x.size() < 3 || g.size() != x.size() || g[0] != x[0] || g.back() != int64_t(x.size()) - 2)
    ctx.error("X " + ctx.input(0).toString() + " must be [N, C, D1..Dr] and grid " + ctx.input(1).toString() +
              " [N, O1..Or, r]");
  for (size_t d = 2; d < x.size(); ++d)
    if (x[d] == 0) ctx.error("X " + ctx.input(0).toString() + " has an empty spatial dim; there is nothing to sample");
  gridOptions(ctx.node());
  Shape out{x[0], x[1]};
  out.insert(out.end(), g.begin() + 1, g.end() - 1);
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalGridSample(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  GridOptions o = gridOptions(node);
  const Shape& xs = in[0]->shape();
  size_t r = xs.size() - 2;
  std::vector<AxisSampler> axes;
  for (size_t d = 0; d < r; ++d) {
    double size = double(xs[2 + d]);
    axes.push_back({xs[2 + d], o.alignCorners ? 0.0 : -0.5, o.alignCorners ? size - 1 : size - 0.5});
  }
  std::vector<double> x = in[0]->toDoubles(), grid = in[1]->toDoubles();
  int64_t points = numElements(Shape(in[1]->shape().begin() + 1, in[1]->shape().end() - 1));
  int64_t plane = numElements(Shape(xs.begin() + 2, xs.end())), N = xs[0], C = xs[1];
  std::vector<int64_t> strides = stridesOf(Shape(xs.begin() + 2, xs.end()));
  std::vector<double> y(size_t(N * C * points));
  std::vector<std::vector<int64_t>> at(r);
  std::vector<std::vector<double>> w(r);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < points; ++p) {
      for (size_t d = 0; d < r; ++d) {
        double g = grid[size_t((n * points + p) * int64_t(r) + int64_t(r - 1 - d))];  // reversed order
        double size = double(axes[d].size);
        double c = o.alignCorners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
        if (o.mode == SampleMode::Nearest) c = std::nearbyint(c);  // half to even
        if (c < axes[d].lo || c > axes[d].hi) {
          if (o.padding == Padding::Border) c = std::clamp(c, 0.0, size - 1);
          if (o.padding == Padding::Reflection) c = reflect(c, axes[d].lo, axes[d].hi);
        }
        tapsOf(c, o.mode, at[d], w[d]);
      }
      // Sum over every combination of taps (an odometer over the dims).
      std::vector<size_t> k(r, 0);
      std::vector<double> sums(size_t(C), 0.0);
      for (bool more = true; more;) {
        double weight = 1;
        int64_t off = 0;
        for (size_t d = 0; d < r && off >= 0; ++d) {
          weight *= w[d][k[d]];
          int64_t i = axes[d].index(at[d][k[d]], o.padding);
          off = i < 0 ? -1 : off + i * strides[d];
        }
        if (off >= 0 && weight != 0)
          for (int64_t c = 0; c < C; ++c) sums[size_t(c)] += weight * x[size_t((n * C + c) * plane + off)];
        more = false;
        for (size_t d = r; d-- > 0;)
          if (++k[d] < at[d].size()) { more = true; break; } else k[d] = 0;
      }
      for (int64_t c = 0; c < C; ++c) y[size_t((n * C + c) * points + p)] = sums[size_t(c)];
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

// --- AffineGrid(theta [N, r, r + 1], size [N, C, spatial...]) -> [N, spatial..., r]: theta applied to the normalized
// coordinates (x = the last spatial dim first) of every output position, r = 2 or 3 ---

double baseCoordinate(int64_t i, int64_t n, bool alignCorners) {
  if (alignCorners) return n == 1 ? 0.0 : -1.0 + 2.0 * double(i) / double(n - 1);
  return (2.0 * double(i) + 1) / double(n) - 1;
}

void inferAffineGrid(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  std::vector<int64_t> size = constantInts(ctx, 1, "size");
  const Shape& t = ctx.input(0).shape;
  int64_t r = int64_t(size.size()) - 2;
  if ((r != 2 && r != 3) || t != Shape{size[0], r, r + 1} ||
      std::any_of(size.begin(), size.end(), [](int64_t v) { return v < 1; }))
    ctx.error("theta " + ctx.input(0).toString() + " must be [N, r, r + 1] for size " + intsToString(size) +
              " of 4 or 5 values");
  Shape out(size.begin(), size.end());
  out.erase(out.begin() + 1);
  out.push_back(r);
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalAffineGrid(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  std::vector<int64_t> size = in[1]->toInts();
  size_t r = size.size() - 2;
  bool align = node.attrInt("align_corners", 0) != 0;
  Shape spatial(size.begin() + 2, size.end());
  int64_t points = numElements(spatial);
  std::vector<int64_t> strides = stridesOf(spatial);
  std::vector<double> theta = in[0]->toDoubles(), y(size_t(size[0] * points * int64_t(r)));
  std::vector<double> base(r + 1, 1.0);
  for (int64_t n = 0; n < size[0]; ++n)
    for (int64_t p = 0; p < points; ++p) {
      for (size_t c = 0; c < r; ++c) {  // coordinate c is spatial dim r - 1 - c
        size_t d = r - 1 - c;
        base[c] = baseCoordinate(p / strides[d] % spatial[d], spatial[d], align);
      }
      for (size_t row = 0; row < r; ++row) {
        double v = 0;
        for (size_t c = 0; c <= r; ++c) v += theta[size_t(n) * r * (r + 1) + row * (r + 1) + c] * base[c];
        y[size_t((n * points + p) * int64_t(r)) + row] = v;
      }
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerGridSampleOps(OpRegistry& r) {
  addOp(r, {"AffineGrid", OpCategory::Other, "the sampling grid of an affine transform theta over size", 2, 2, 1, 1,
            {1}, inferAffineGrid, evalAffineGrid});
  addOp(r, {"GridSample", OpCategory::Other, "sample X at the grid's normalized coordinates (nearest, linear, cubic; "
            "zeros, border or reflection padding)", 2, 2, 1, 1, {}, inferGridSample, evalGridSample});
}

}  // namespace tessera
