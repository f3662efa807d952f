// Resize (opset 11-19 form: X, roi?, scales?, sizes?): each output element is a weighted sum of input
// neighbours, one axis at a time (the interpolation is separable). Per axis, an output coordinate maps to an
// input coordinate by coordinate_transformation_mode; mode picks the taps and weights: nearest (one neighbour by
// nearest_mode), linear (2 taps), cubic (4, cubic_coeff_a), with antialias widening linear and cubic filters by
// 1/scale when downscaling. Neighbours outside the input repeat the edge (exclude_outside drops them instead);
// tf_crop_and_resize gives extrapolation_value outside the roi. This follows ONNX's reference implementation.
#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/constant.h"

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/resize_form.h"

namespace tessera {
namespace {
using namespace ops;

// Output shape and per-axis scale (output / input, or the scales input as given) of one Resize node.
struct ResizePlan {
  Shape out;
  std::vector<double> scales;
};

// The values of an optional float operand; empty when absent or of 0 elements (models pass "" or an empty
// tensor for the one of scales/sizes they do not use).
std::vector<double> optionalValues(const Tensor* t) {
  return t && t->numElements() ? t->toDoubles() : std::vector<double>{};
}

std::vector<int64_t> resizeAxes(const Node& node, int64_t rank) {
  std::vector<int64_t> axes = node.attrInts("axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t& a : axes) a = evalAxis(node, a, rank);
  return axes;
}
// Output sizes and scales from scales or sizes (and keep_aspect_ratio_policy).
ResizePlan plannedSizes(const Node& node, const Shape& in, const Tensor* scalesT, const Tensor* sizesT) {
  int64_t rank = int64_t(in.size());
  std::vector<int64_t> axes = resizeAxes(node, rank);
  std::vector<double> scales = optionalValues(scalesT), sizes = optionalValues(sizesT);
  if (scales.empty() == sizes.empty()) failNode(node, "needs exactly one of scales (input 2) and sizes (input 3)");
  size_t given = std::max(scales.size(), sizes.size());
  if (given != axes.size())
    failNode(node, std::string(scales.empty() ? "sizes" : "scales") + " has " + std::to_string(given) +
                       " values for " + std::to_string(axes.size()) + " axes");
  ResizePlan p{in, std::vector<double>(size_t(rank), 1.0)};
  if (!scales.empty()) {
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!(scales[i] > 0)) failNode(node, "scale " + std::to_string(scales[i]) + " must be positive");
      p.scales[size_t(axes[i])] = scales[i];
      p.out[size_t(axes[i])] = int64_t(std::floor(scales[i] * double(in[size_t(axes[i])])));
    }
    return p;
  }
  std::string policy = node.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    failNode(node, "keep_aspect_ratio_policy '" + policy + "' is not stretch, not_larger or not_smaller");
  std::vector<double> ratio;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (sizes[i] < 0) failNode(node, "size " + std::to_string(int64_t(sizes[i])) + " is negative");
    ratio.push_back(sizes[i] / double(in[size_t(axes[i])]));
  }
  double common = policy == "not_larger" ? *std::min_element(ratio.begin(), ratio.end())
                                         : *std::max_element(ratio.begin(), ratio.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t d = size_t(axes[i]);
    p.scales[d] = policy == "stretch" ? ratio[i] : common;
    p.out[d] = policy == "stretch" ? int64_t(sizes[i]) : int64_t(common * double(in[d]) + 0.5);  // half up
  }
  return p;
}

ResizePlan resizePlan(const Node& node, const Shape& in, const Tensor* scalesT, const Tensor* sizesT) {
  ResizePlan p = plannedSizes(node, in, scalesT, sizesT);
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] == 0 && p.out[d] > 0)
      failNode(node,
               "axis " + std::to_string(d) + " of " + shapeToString(in) + " is empty; it has nothing to resample");
  return p;
}

// The roi as [start, end] per dim of the input (default [0, 1]); only tf_crop_and_resize reads it.
std::vector<double> roiOf(const Node& node, const Tensor* roiT, int64_t rank) {
  std::vector<double> roi(size_t(2 * rank), 0.0), given = optionalValues(roiT);
  for (int64_t d = 0; d < rank; ++d) roi[size_t(rank + d)] = 1.0;
  if (given.empty()) return roi;
  std::vector<int64_t> axes = resizeAxes(node, rank);
  if (given.size() != 2 * axes.size())
    failNode(node, "roi has " + std::to_string(given.size()) + " values; it needs 2 per axis (" +
                       std::to_string(2 * axes.size()) + ")");
  for (size_t i = 0; i < axes.size(); ++i) {
    roi[size_t(axes[i])] = given[i];
    roi[size_t(rank + axes[i])] = given[axes.size() + i];
  }
  return roi;
}

struct ResizeAttrs {
  std::string mode, transform, nearest;
  double cubicA, extrapolation;
  bool excludeOutside, antialias;
};

// Upsample (opsets 7-9) is Resize with asymmetric coordinates and floor for nearest.
bool isUpsample(const Node& node) { return node.op() == "Upsample"; }

ResizeAttrs resizeAttrs(const Node& node) {
  bool up = isUpsample(node);
  ResizeAttrs a{node.attrString("mode", "nearest"),
                up ? "asymmetric" : node.attrString("coordinate_transformation_mode", "half_pixel"),
                up ? "floor" : node.attrString("nearest_mode", "round_prefer_floor"),
                node.attrFloat("cubic_coeff_a", -0.75), node.attrFloat("extrapolation_value", 0.0),
                node.attrInt("exclude_outside", 0) != 0, node.attrInt("antialias", 0) != 0};
  if (up && a.mode == "bilinear") a.mode = "linear";
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic")
    failNode(node, "mode '" + a.mode + "' is not nearest, linear or cubic");
  return a;
}

// The map from output to input coordinates along one axis, for every transform but tf_crop_and_resize (which
// also clips to its roi: sourceCoordinate).
ResizeCoordinate coordinateMap(const Node& node, const ResizeAttrs& a, double scale, int64_t inLen, int64_t outLen) {
  double outWidth = scale * double(inLen), in1 = double(inLen - 1);
  const std::string& m = a.transform;
  ResizeCoordinate c;
  if (m == "half_pixel" || m == "pytorch_half_pixel" || m == "tf_half_pixel_for_nn" || m == "half_pixel_symmetric") {
    c.shift = 0.5;
    c.divisor = scale;
    c.offset = m == "tf_half_pixel_for_nn" ? 0.0 : -0.5;
    if (m == "pytorch_half_pixel" && outWidth == 1) c = {0, 0, 1, -0.5, 0};
    if (m == "half_pixel_symmetric") {
      c.offset = double(inLen) / 2 * (1 - double(outLen) / outWidth);
      c.last = -0.5;
    }
    return c;
  }
  if (m == "asymmetric") {
    c.divisor = scale;
    return c;
  }
  if (m == "align_corners") {
    c.stretch = outWidth == 1 ? 0.0 : in1;
    c.divisor = outWidth == 1 ? 1.0 : outWidth - 1;
    return c;
  }
  failNode(node, "coordinate_transformation_mode '" + m + "' is not supported");
}

// The input coordinate of output coordinate x along one axis; nullopt when it falls outside the crop.
std::optional<double> sourceCoordinate(const Node& node, const ResizeAttrs& a, double scale, int64_t inLen,
                                       int64_t outLen, int64_t x, double roi0, double roi1) {
  if (a.transform != "tf_crop_and_resize") return coordinateMap(node, a, scale, inLen, outLen).at(double(x));
  double outWidth = scale * double(inLen), xd = double(x), in1 = double(inLen - 1);
  double c = outWidth == 1 ? (roi1 - roi0) * in1 / 2 : xd * (roi1 - roi0) * in1 / (outWidth - 1);
  c += roi0 * in1;
  if (c < 0 || c > in1) return std::nullopt;
  return c;
}

// Weights of the taps at offsets (1 - n/2 ... n/2) from floor(x), where ratio = x - floor(x) in (0, 1].
std::vector<double> tapWeights(const ResizeAttrs& a, double ratio, double scale) {
  if (a.mode == "nearest") {
    if (ratio == 1) return {0, 1};
    const std::string& m = a.nearest;
    bool up = m == "round_prefer_ceil" ? ratio >= 0.5 : m == "floor" ? false : m == "ceil" ? true : ratio > 0.5;
    return {up ? 0.0 : 1.0, up ? 1.0 : 0.0};
  }
  double s = a.antialias ? std::min(scale, 1.0) : 1.0, A = a.cubicA;
  auto cubic = [A](double x) {
    x = std::fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0.0;
  };
  int64_t start = a.mode == "linear" ? int64_t(std::floor(-1 / s)) + 1 : int64_t(std::floor(-2 / s)) + 1;
  std::vector<double> w;
  double sum = 0;
  for (int64_t i = start; i < 2 - start; ++i) {
    double arg = s * (double(i) - ratio);
    w.push_back(a.mode == "linear" ? std::clamp(1 - std::fabs(arg), 0.0, 1.0) : cubic(arg));
    sum += w.back();
  }
  if (a.antialias)
    for (double& v : w) v /= sum;
  return w;
}

struct Taps {
  std::vector<int64_t> index;  // clamped into [0, inLen)
  std::vector<double> weight;
  bool extrapolate = false;
};

Taps tapsAt(const Node& node, const ResizeAttrs& a, double scale, int64_t inLen, int64_t outLen, int64_t x,
            double roi0, double roi1) {
  Taps t;
  std::optional<double> c = sourceCoordinate(node, a, scale, inLen, outLen, x, roi0, roi1);
  if (!c) {
    t.extrapolate = true;
    return t;
  }
  double fl = std::floor(*c), ratio = *c == fl ? 1.0 : *c - fl;
  t.weight = tapWeights(a, ratio, scale);
  int64_t n = int64_t(t.weight.size()), pad = (n + 1) / 2;
  // The n nearest positions of the edge-padded axis (ties to the lower one): a window clamped into it.
  int64_t first = std::clamp(int64_t(std::ceil(*c)) - n / 2, -pad, inLen + pad - n);
  double kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = first + i;
    if (a.excludeOutside && (at < 0 || at >= inLen)) t.weight[size_t(i)] = 0;
    kept += t.weight[size_t(i)];
    t.index.push_back(std::clamp<int64_t>(at, 0, inLen - 1));
  }
  if (a.excludeOutside)
    for (double& w : t.weight) w /= kept;
  return t;
}

// Resamples dim `d` of `v` (shaped `shape`) to `outLen`; `shape` is updated.
std::vector<double> resizeAxis(const Node& node, const ResizeAttrs& a, const std::vector<double>& v, Shape& shape,
                               size_t d, int64_t outLen, double scale, double roi0, double roi1) {
  int64_t inLen = shape[d];
  AxisSplit sp = splitAtAxis(shape, int64_t(d));
  std::vector<Taps> taps;
  for (int64_t x = 0; x < outLen; ++x) taps.push_back(tapsAt(node, a, scale, inLen, outLen, x, roi0, roi1));
  std::vector<double> out(size_t(sp.outer * outLen * sp.inner));
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t x = 0; x < outLen; ++x)
      for (int64_t i = 0; i < sp.inner; ++i) {
        const Taps& t = taps[size_t(x)];
        double sum = t.extrapolate ? a.extrapolation : 0.0;
        for (size_t k = 0; k < t.index.size(); ++k)
          if (t.weight[k] != 0) sum += t.weight[k] * v[size_t((o * inLen + t.index[k]) * sp.inner + i)];
        out[size_t((o * outLen + x) * sp.inner + i)] = sum;
      }
  shape[d] = outLen;
  return out;
}

// Upsample's scales: input 1 (opset 9) or attribute scales (opset 7), as a tensor.
Tensor upsampleScales(const InferContext& ctx) {
  if (ctx.hasInput(1)) return ctx.requireConstant(1, "scales");
  std::vector<double> s = ctx.node().attrFloats("scales");
  if (s.empty()) ctx.error("needs scales (input 1 or attribute scales)");
  return Tensor::fromDoubles(DType::F32, {int64_t(s.size())}, s);
}

void inferUpsample(InferContext& ctx) {
  Tensor scales = upsampleScales(ctx);
  resizeAttrs(ctx.node());
  ctx.outputs[0] = {ctx.input(0).dtype, resizePlan(ctx.node(), ctx.input(0).shape, &scales, nullptr).out};
}

// Upsample-7's scales attribute as a tensor (Upsample-9 gives them as input 1 instead).
Tensor attributeScales(const Node& node) {
  std::vector<double> attr = node.attrFloats("scales");
  return Tensor::fromDoubles(DType::F32, {int64_t(attr.size())}, attr);
}

// Whether axis d is kept as it is: output coordinate x reads input coordinate x. Upsample resamples every axis
// whose scale is not 1; Resize keeps one of the same length at scale 1, unless its transform shifts coordinates.
bool keptAxis(const Node& node, const ResizeAttrs& a, const ResizePlan& p, const Shape& in, size_t d) {
  if (isUpsample(node)) return p.scales[d] == 1;
  return p.out[d] == in[d] && p.scales[d] == 1 && a.transform != "tf_crop_and_resize" &&
         a.transform != "tf_half_pixel_for_nn";
}

std::vector<Tensor> evalUpsample(const Node& node, const std::vector<const Tensor*>& in,
                                 const std::vector<TensorType>& types) {
  Tensor fromAttr = attributeScales(node);
  ResizePlan p = resizePlan(node, in[0]->shape(), in.size() > 1 && in[1] ? in[1] : &fromAttr, nullptr);
  ResizeAttrs a = resizeAttrs(node);
  std::vector<double> v = in[0]->toDoubles();
  Shape shape = in[0]->shape();
  for (size_t d = 0; d < shape.size(); ++d)
    if (!keptAxis(node, a, p, in[0]->shape(), d)) v = resizeAxis(node, a, v, shape, d, p.out[d], p.scales[d], 0, 1);
  return {fromDoublesRounded(types[0].dtype, types[0].shape, v)};
}

void inferResize(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Numeric);
  if (ctx.input(0).shape.empty()) ctx.error("input 0 (X) must have rank >= 1");
  const Tensor* scales = ctx.hasInput(2) ? &ctx.requireConstant(2, "scales") : nullptr;
  const Tensor* sizes = ctx.hasInput(3) ? &ctx.requireConstant(3, "sizes") : nullptr;
  resizeAttrs(ctx.node());
  ctx.outputs[0] = {ctx.input(0).dtype, resizePlan(ctx.node(), ctx.input(0).shape, scales, sizes).out};
}

std::vector<Tensor> evalResize(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i ? in[i] : nullptr; };
  const Shape& x = in[0]->shape();
  ResizePlan p = resizePlan(node, x, input(2), input(3));
  ResizeAttrs a = resizeAttrs(node);
  int64_t rank = int64_t(x.size());
  std::vector<double> roi = roiOf(node, input(1), rank), v = in[0]->toDoubles();
  Shape shape = x;
  for (size_t d = 0; d < x.size(); ++d)
    if (!keptAxis(node, a, p, x, d)) v = resizeAxis(node, a, v, shape, d, p.out[d], p.scales[d], roi[d], roi[size_t(rank) + d]);
  return {fromDoublesRounded(types[0].dtype, types[0].shape, v)};
}

// Why a node has no generated form, or "": the filters whose taps the lowering does not compute.
std::string unsupportedForm(const ResizeAttrs& a, const ResizePlan& p) {
  if (a.mode == "cubic") return "cubic interpolation";
  if (a.excludeOutside) return "exclude_outside";
  if (a.transform == "tf_crop_and_resize") return "tf_crop_and_resize";
  if (a.antialias && a.mode == "linear")
    for (double s : p.scales)
      if (s < 1) return "antialiasing a downscale";
  return "";
}

}  // namespace

namespace ops {

ResizeForm resizeForm(const Node& node) {
  auto input = [&](size_t i) { return i < node.numInputs() && node.input(i) ? constantValue(node.input(i)) : nullptr; };
  const Shape& x = node.input(0)->shape();
  ResizeAttrs a = resizeAttrs(node);
  ResizePlan p;
  if (isUpsample(node)) {
    Tensor fromAttr = attributeScales(node);
    p = resizePlan(node, x, input(1) ? input(1) : &fromAttr, nullptr);
  } else {
    p = resizePlan(node, x, input(2), input(3));
  }
  ResizeForm form;
  form.taps = a.mode == "linear" ? ResizeTaps::Linear : ResizeTaps::Nearest;
  form.nearestMode = a.nearest;
  form.unsupported = unsupportedForm(a, p);
  for (size_t d = 0; d < x.size(); ++d) {
    ResizeAxis axis{x[d], p.out[d], keptAxis(node, a, p, x, d), {}};
    if (!axis.identity && form.unsupported.empty()) axis.map = coordinateMap(node, a, p.scales[d], x[d], p.out[d]);
    form.axes.push_back(axis);
  }
  return form;
}

}  // namespace ops

void registerResizeOps(OpRegistry& r) {
  addOp(r, {"Resize", OpCategory::Other, "resample by scales or to sizes (nearest, linear, cubic; coordinate "
            "transformation modes as ONNX)", 1, 4, 1, 1, {2, 3}, inferResize, evalResize});
  addOp(r, {"Upsample", OpCategory::Other, "opset 7-9 Resize: scales, asymmetric coordinates, nearest floor or linear",
            1, 2, 1, 1, {1}, inferUpsample, evalUpsample});
}

}  // namespace tessera
