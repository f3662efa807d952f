// Conv: N-d grouped convolution with strides, pads, dilations and auto_pad, accumulated in double.
//
// Evaluation works on rows of the innermost spatial axis: for each output row, every (input channel, kernel
// row) pair adds a weighted, shifted input row to it. The output row stays in L1 while all its taps
// accumulate, and with stride 1 the innermost loop is a contiguous multiply-add the compiler vectorizes.
#include "ops/linalg_parts.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/window.h"

namespace tessera::ops {
namespace {

struct ConvShapes {
  int64_t N = 0, C = 0, M = 0, groups = 1;
  WindowGeometry window;
  Shape out;
};

ConvShapes convShapes(const Node& node, const Shape& x, const Shape& w, const Shape* bias) {
  if (x.size() < 3) failNode(node, "input 0 (X) must be [N, C, spatial...], got " + shapeToString(x));
  if (w.size() != x.size())
    failNode(node, "input 1 (W) " + shapeToString(w) + " must have the rank of X " + shapeToString(x));
  ConvShapes s;
  s.N = x[0];
  s.C = x[1];
  s.M = w[0];
  s.groups = node.attrInt("group", 1);
  if (s.groups < 1 || s.C % s.groups != 0 || s.M % s.groups != 0)
    failNode(node, "group " + std::to_string(s.groups) + " must divide the input channels (" + std::to_string(s.C) +
                       ") and output channels (" + std::to_string(s.M) + ")");
  if (w[1] * s.groups != s.C)
    failNode(node, "input 1 (W) " + shapeToString(w) + " has " + std::to_string(w[1]) +
                       " channels per group, expected " + std::to_string(s.C / s.groups));
  Shape kernel(w.begin() + 2, w.end()), spatial(x.begin() + 2, x.end());
  if (!node.attrInts("kernel_shape").empty() && node.attrInts("kernel_shape") != kernel)
    failNode(node, "attribute kernel_shape " + intsToString(node.attrInts("kernel_shape")) +
                       " differs from the weight's spatial shape " + shapeToString(kernel));
  if (bias && (bias->size() != 1 || (*bias)[0] != s.M))
    failNode(node, "input 2 (B) " + shapeToString(*bias) + " must be [" + std::to_string(s.M) + "]");
  s.window = windowGeometry(node, spatial, kernel, false);
  s.out = {s.N, s.M};
  s.out.insert(s.out.end(), s.window.output.begin(), s.window.output.end());
  return s;
}

void inferConv(InferContext& ctx) {
  const Shape* bias = requireWeightOperands(ctx, DTypeClass::Float);
  ctx.outputs[0] = {ctx.input(0).dtype, convShapes(ctx.node(), ctx.input(0).shape, ctx.input(1).shape, bias).out};
}

// The window seen as rows: the innermost spatial axis is a row; the outer axes are enumerated.
struct RowPlan {
  int64_t inRowLen = 1, outRowLen = 1, kRowLen = 1, outRows = 1, inPlane = 1, outPlane = 1, kernelSize = 1;
  int64_t stride = 1, dilation = 1, padBegin = 0;
  // For each output row: (kernel row, input row) pairs that fall inside the input.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> rowTaps;
  // For each tap x along the row: the output positions [lo, hi) whose input position is inside the row.
  std::vector<int64_t> lo, hi;
};

// True for a 1x1 window with unit strides and no padding: the whole plane is then a single row.
bool isPointwise(const WindowGeometry& g) {
  for (size_t i = 0; i < g.rank(); ++i)
    if (g.kernel[i] != 1 || g.strides[i] != 1 || g.padsBegin[i] != 0 || g.padsEnd[i] != 0) return false;
  return true;
}

// Row taps of the outer spatial axes by odometer over output rows and kernel rows.
void planOuterRows(const WindowGeometry& g, RowPlan& p) {
  size_t outer = g.rank() - 1;
  Shape outRowsShape(g.output.begin(), g.output.end() - 1), kRowsShape(g.kernel.begin(), g.kernel.end() - 1);
  int64_t kRows = numElements(kRowsShape);
  p.rowTaps.resize(size_t(p.outRows));
  std::vector<int64_t> o(outer, 0);
  for (int64_t r = 0; r < p.outRows; ++r) {
    std::vector<int64_t> k(outer, 0);
    for (int64_t kr = 0; kr < kRows; ++kr) {
      int64_t inRow = 0;
      bool inside = true;
      for (size_t d = 0; d < outer; ++d) {
        int64_t x = o[d] * g.strides[d] - g.padsBegin[d] + k[d] * g.dilations[d];
        inside = inside && x >= 0 && x < g.input[d];
        inRow = inRow * g.input[d] + x;
      }
      if (inside) p.rowTaps[size_t(r)].push_back({kr, inRow});
      for (size_t d = outer; d-- > 0;)
        if (++k[d] < g.kernel[d]) break; else k[d] = 0;
    }
    for (size_t d = outer; d-- > 0;)
      if (++o[d] < g.output[d]) break; else o[d] = 0;
  }
}

RowPlan rowPlan(const WindowGeometry& g) {
  RowPlan p;
  p.inPlane = numElements(g.input);
  p.outPlane = numElements(g.output);
  p.kernelSize = numElements(g.kernel);
  if (isPointwise(g)) {
    p.inRowLen = p.outRowLen = p.inPlane;
    p.rowTaps = {{{0, 0}}};
  } else {
    size_t last = g.rank() - 1;
    p.inRowLen = g.input[last];
    p.outRowLen = g.output[last];
    p.kRowLen = g.kernel[last];
    p.stride = g.strides[last];
    p.dilation = g.dilations[last];
    p.padBegin = g.padsBegin[last];
    p.outRows = p.outRowLen ? p.outPlane / p.outRowLen : 0;
    planOuterRows(g, p);
  }
  for (int64_t kx = 0; kx < p.kRowLen; ++kx) {
    int64_t shift = kx * p.dilation - p.padBegin;  // input x = ox * stride + shift
    int64_t lo = shift >= 0 ? 0 : (-shift + p.stride - 1) / p.stride;
    int64_t hi = p.inRowLen - shift <= 0 ? 0 : (p.inRowLen - shift - 1) / p.stride + 1;
    p.lo.push_back(std::min(lo, p.outRowLen));
    p.hi.push_back(std::max(std::min(hi, p.outRowLen), std::min(lo, p.outRowLen)));
  }
  return p;
}

// out[0, n) += w * src[0, n): the hot loop. On CPUs with AVX2 a 4-wide clone runs (no FMA contraction, so the
// result is bit-identical to the portable clone).
__attribute__((target_clones("avx2", "default"))) void addScaledRow(double* out, const float* src, double w,
                                                                    int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] += w * double(src[i]);
}
__attribute__((target_clones("avx2", "default"))) void addScaledRow(double* out, const double* src, double w,
                                                                    int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] += w * src[i];
}

// out[lo, hi) += w * in[ox * stride + shift]; pointers are formed only for positions inside the row.
template <class T>
inline void accumulateRow(double* out, const T* in, double w, int64_t lo, int64_t hi, int64_t stride, int64_t shift) {
  if (hi <= lo) return;
  if (stride == 1) {
    addScaledRow(out + lo, in + (lo + shift), w, hi - lo);
  } else {
    for (int64_t ox = lo; ox < hi; ++ox) out[ox] += w * double(in[ox * stride + shift]);
  }
}

template <class T>
void convPlanes(const ConvShapes& s, const RowPlan& p, const T* x, const T* w, const double* bias, double* y,
                int64_t begin, int64_t end) {
  int64_t Mg = s.M / s.groups, Cg = s.C / s.groups;
  for (int64_t item = begin; item < end; ++item) {
    int64_t n = item / s.M, oc = item % s.M, g = oc / Mg;
    double* plane = y + item * p.outPlane;
    std::fill(plane, plane + p.outPlane, bias ? bias[oc] : 0.0);
    for (int64_t r = 0; r < p.outRows; ++r) {
      double* outRow = plane + r * p.outRowLen;
      for (int64_t icg = 0; icg < Cg; ++icg) {
        const T* xPlane = x + (n * s.C + g * Cg + icg) * p.inPlane;
        const T* wk = w + (oc * Cg + icg) * p.kernelSize;
        for (auto [kr, inRow] : p.rowTaps[size_t(r)]) {
          const T* xRow = xPlane + inRow * p.inRowLen;
          for (int64_t kx = 0; kx < p.kRowLen; ++kx)
            accumulateRow(outRow, xRow, double(wk[kr * p.kRowLen + kx]), p.lo[size_t(kx)], p.hi[size_t(kx)],
                          p.stride, kx * p.dilation - p.padBegin);
        }
      }
    }
  }
}

std::vector<Tensor> evalConv(const Node& node, const std::vector<const Tensor*>& in,
                             const std::vector<TensorType>& types) {
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  ConvShapes s = convShapes(node, in[0]->shape(), in[1]->shape(), bias ? &bias->shape() : nullptr);
  requireWorkBuffer(node, numElements(types[0].shape));
  RowPlan p = rowPlan(s.window);
  std::vector<double> y(size_t(s.N * s.M * p.outPlane), 0.0);
  std::vector<double> b = bias ? bias->toDoubles() : std::vector<double>{};
  const double* bp = bias ? b.data() : nullptr;
  bool f32 = in[0]->dtype() == DType::F32;
  KernelOperand x(*in[0], !f32), w(*in[1], !f32);
  int64_t cost = (s.C / s.groups) * p.kernelSize * p.outPlane;
  parallelFor(s.N * s.M, cost, [&](int64_t begin, int64_t end) {
    if (f32)
      convPlanes(s, p, x.f32(), w.f32(), bp, y.data(), begin, end);
    else
      convPlanes(s, p, x.f64(), w.f64(), bp, y.data(), begin, end);
  });
  return {Tensor::fromDoubles(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerConvOps(OpRegistry& r) {
  addOp(r, {"Conv", OpCategory::Conv, "N-d grouped convolution (strides, pads, dilations, auto_pad), optional bias", 2,
            3, 1, 1, {}, inferConv, evalConv},
        {.hasNhwcForm = true});
}

}  // namespace tessera::ops
