// Bilinear sampling ops: RoiAlign and DeformConv.
//
// RoiAlign (opset 16): for each region [x1, y1, x2, y2] (scaled by spatial_scale) of image batch_indices[r], an
// output_height x output_width grid of bins, each the average (or, mode max, the largest weighted corner, as ONNX's
// reference and onnxruntime compute it) of sampling_ratio^2 bilinear samples (adaptive: ceil(bin size) per axis
// when 0). coordinate_transformation_mode half_pixel shifts by half a pixel; output_half_pixel (opset 10's
// behaviour) does not, and makes regions at least 1x1.
#include <cmath>
#include <optional>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

void inferRoiAlign(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  const Shape& rois = ctx.input(1).shape;
  if (x.size() != 4 || rois.size() != 2 || rois[1] != 4 || ctx.input(2).shape != Shape{rois[0]})
    ctx.error("X " + ctx.input(0).toString() + " must be [N, C, H, W], rois [R, 4] and batch_indices [R]");
  if (x[2] < 1 || x[3] < 1) ctx.error("X " + ctx.input(0).toString() + " has an empty image");
  std::string mode = ctx.node().attrString("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.error("mode '" + mode + "' is not avg or max");
  ctx.outputs[0] = {ctx.input(0).dtype,
                    {rois[0], x[1], ctx.node().attrInt("output_height", 1), ctx.node().attrInt("output_width", 1)}};
}

// The four corners and weights of a bilinear sample at (y, x) of an H x W plane; none when outside.
struct Corners {
  int64_t at[4];
  double w[4];
};

std::optional<Corners> corners(double y, double x, int64_t H, int64_t W) {
  if (y < -1.0 || y > double(H) || x < -1.0 || x > double(W)) return std::nullopt;
  y = std::max(y, 0.0), x = std::max(x, 0.0);
  auto yl = int64_t(y), xl = int64_t(x), yh = yl + 1, xh = xl + 1;
  if (yl >= H - 1) yl = yh = H - 1, y = double(yl);
  if (xl >= W - 1) xl = xh = W - 1, x = double(xl);
  double ly = y - double(yl), lx = x - double(xl), hy = 1 - ly, hx = 1 - lx;
  return Corners{{yl * W + xl, yl * W + xh, yh * W + xl, yh * W + xh}, {hy * hx, hy * lx, ly * hx, ly * lx}};
}

std::vector<Tensor> evalRoiAlign(const Node& node, const std::vector<const Tensor*>& in,
                                 const std::vector<TensorType>& types) {
  const Shape& xs = in[0]->shape();
  int64_t C = xs[1], H = xs[2], W = xs[3], R = in[1]->shape()[0];
  int64_t oh = types[0].shape[2], ow = types[0].shape[3], ratio = node.attrInt("sampling_ratio", 0);
  double scale = node.attrFloat("spatial_scale", 1.0);
  bool halfPixel = node.attrString("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  bool max = node.attrString("mode", "avg") == "max";
  std::vector<double> x = in[0]->toDoubles(), rois = in[1]->toDoubles(), y(size_t(R * C * oh * ow));
  std::vector<int64_t> batch = in[2]->toInts();
  for (int64_t r = 0; r < R; ++r) {
    if (batch[size_t(r)] < 0 || batch[size_t(r)] >= xs[0])
      failNode(node, "batch index " + std::to_string(batch[size_t(r)]) + " is outside the " + std::to_string(xs[0]) +
                         " images");
    const double* roi = rois.data() + r * 4;
    double off = halfPixel ? 0.5 : 0.0;
    double x0 = roi[0] * scale - off, y0 = roi[1] * scale - off, rw = roi[2] * scale - off - x0;
    double rh = roi[3] * scale - off - y0;
    if (!halfPixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    double bh = rh / double(oh), bw = rw / double(ow);
    int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / double(oh)));
    int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / double(ow)));
    double count = double(std::max<int64_t>(gh * gw, 1));
    for (int64_t c = 0; c < C; ++c) {
      const double* plane = x.data() + (batch[size_t(r)] * C + c) * H * W;
      for (int64_t ph = 0; ph < oh; ++ph)
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = 0;
          bool any = false;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double sy = y0 + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);
              double sx = x0 + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);
              std::optional<Corners> k = corners(sy, sx, H, W);
              if (!k) continue;
              double v = max ? -INFINITY : 0.0;
              for (int q = 0; q < 4; ++q)
                v = max ? std::max(v, k->w[q] * plane[k->at[q]]) : v + k->w[q] * plane[k->at[q]];
              acc = max ? (any ? std::max(acc, v) : v) : acc + v;
              any = true;
            }
          y[size_t(((r * C + c) * oh + ph) * ow + pw)] = max ? (any ? acc : 0.0) : acc / count;
        }
    }
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

// --- DeformConv (opset 19, 2-D): Conv whose tap (kh, kw) at output (oh, ow) reads X bilinearly at the tap's
// position plus offset[n, (g * K + k) * 2 + {0: h, 1: w}, oh, ow] (g: the channel's offset group), times
// mask[n, g * K + k, oh, ow] when given; samples outside the image are 0, as ONNX's reference ---

struct DeformGeometry {
  int64_t N, C, H, W, M, kh, kw, oh, ow, groups, offsetGroups;
  std::vector<int64_t> strides, dilations, pads;
};

DeformGeometry deformGeometry(const Node& node, const Shape& x, const Shape& w) {
  if (x.size() != 4 || w.size() != 4) failNode(node, "X and W must be 4-D (2-D DeformConv)");
  DeformGeometry g{x[0], x[1], x[2], x[3], w[0], w[2], w[3], 0, 0, node.attrInt("group", 1),
                   node.attrInt("offset_group", 1), node.attrInts("strides", {1, 1}),
                   node.attrInts("dilations", {1, 1}), node.attrInts("pads", {0, 0, 0, 0})};
  bool positive = g.strides.size() == 2 && g.dilations.size() == 2 && g.strides[0] > 0 && g.strides[1] > 0 &&
                  g.dilations[0] > 0 && g.dilations[1] > 0;
  if (!positive || g.groups < 1 || g.offsetGroups < 1 || g.C % g.groups || g.C % g.offsetGroups || g.M % g.groups ||
      w[1] * g.groups != g.C || g.strides.size() != 2 || g.dilations.size() != 2 || g.pads.size() != 4)
    failNode(node, "W " + shapeToString(w) + ", group and offset_group do not fit X " + shapeToString(x));
  g.oh = (g.H + g.pads[0] + g.pads[2] - g.dilations[0] * (g.kh - 1) - 1) / g.strides[0] + 1;
  g.ow = (g.W + g.pads[1] + g.pads[3] - g.dilations[1] * (g.kw - 1) - 1) / g.strides[1] + 1;
  return g;
}

void inferDeformConv(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  DeformGeometry g = deformGeometry(ctx.node(), ctx.input(0).shape, ctx.input(1).shape);
  Shape offsets{g.N, g.offsetGroups * 2 * g.kh * g.kw, g.oh, g.ow};
  if (ctx.input(2).shape != offsets) ctx.error("offset must be " + shapeToString(offsets));
  if (ctx.hasInput(3) && ctx.input(3).shape != Shape{g.M}) ctx.error("B must be [" + std::to_string(g.M) + "]");
  Shape masks{g.N, g.offsetGroups * g.kh * g.kw, g.oh, g.ow};
  if (ctx.hasInput(4) && ctx.input(4).shape != masks) ctx.error("mask must be " + shapeToString(masks));
  ctx.outputs[0] = {ctx.input(0).dtype, {g.N, g.M, g.oh, g.ow}};
}

double bilinearZero(const double* plane, int64_t H, int64_t W, double h, double w) {
  if (h <= -1 || h >= double(H) || w <= -1 || w >= double(W)) return 0;
  auto h0 = int64_t(std::floor(h)), w0 = int64_t(std::floor(w));
  double lh = h - double(h0), lw = w - double(w0), v = 0;
  for (int64_t dy = 0; dy < 2; ++dy)
    for (int64_t dx = 0; dx < 2; ++dx) {
      int64_t y = h0 + dy, x = w0 + dx;
      if (y < 0 || y >= H || x < 0 || x >= W) continue;
      v += (dy ? lh : 1 - lh) * (dx ? lw : 1 - lw) * plane[y * W + x];
    }
  return v;
}

std::vector<Tensor> evalDeformConv(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i && in[i] ? in[i] : nullptr; };
  DeformGeometry g = deformGeometry(node, in[0]->shape(), in[1]->shape());
  std::vector<double> x = in[0]->toDoubles(), w = in[1]->toDoubles(), off = in[2]->toDoubles();
  std::vector<double> bias = input(3) ? input(3)->toDoubles() : std::vector<double>(size_t(g.M), 0.0);
  std::vector<double> mask = input(4) ? input(4)->toDoubles() : std::vector<double>{};
  int64_t K = g.kh * g.kw, cPer = g.C / g.groups, mPer = g.M / g.groups, cPerOffset = g.C / g.offsetGroups;
  int64_t plane = g.oh * g.ow;
  std::vector<double> y(size_t(g.N * g.M * plane));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m)
      for (int64_t p = 0; p < plane; ++p) {
        int64_t oy = p / g.ow, ox = p % g.ow;
        double acc = bias[size_t(m)];
        for (int64_t ci = 0; ci < cPer; ++ci) {
          int64_t c = m / mPer * cPer + ci, og = c / cPerOffset;
          const double* img = x.data() + (n * g.C + c) * g.H * g.W;
          for (int64_t k = 0; k < K; ++k) {
            int64_t base = ((n * g.offsetGroups + og) * K + k) * 2;
            double h =
                double(oy * g.strides[0] - g.pads[0] + k / g.kw * g.dilations[0]) + off[size_t(base * plane + p)];
            double wv = double(ox * g.strides[1] - g.pads[1] + k % g.kw * g.dilations[1]) +
                        off[size_t((base + 1) * plane + p)];
            double s = bilinearZero(img, g.H, g.W, h, wv);
            if (!mask.empty()) s *= mask[size_t(((n * g.offsetGroups + og) * K + k) * plane + p)];
            acc += w[size_t((m * cPer + ci) * K + k)] * s;
          }
        }
        y[size_t((n * g.M + m) * plane + p)] = acc;
      }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerRoiAlignOps(OpRegistry& r) {
  addOp(r, {"DeformConv", OpCategory::Other, "2-D convolution whose taps sample X at learned offsets (optional mask)",
            3, 5, 1, 1, {}, inferDeformConv, evalDeformConv});
  addOp(r, {"RoiAlign", OpCategory::Other, "bilinear average (or max) pooling of regions of interest", 3, 3, 1, 1, {},
            inferRoiAlign, evalRoiAlign});
}

}  // namespace tessera
