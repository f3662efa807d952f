// Conv: N-d grouped convolution with strides, pads, dilations and auto_pad, accumulated in double.
//
// Evaluation is a blocked matrix product per image and group: the output channels (rows of the weights, K =
// input channels x taps long) times the input's windows gathered as columns (im2col), a tile of output pixels
// at a time. Each output sums bias, then its K products in order (channels outer, taps in the kernel's
// row-major order), the padding's taps adding 0; so the result does not depend on how the work is tiled or
// split over threads. The product's inner kernel keeps a 4-channel x 8-pixel tile of sums in vector registers:
// the reference check of a whole model is mostly its convs (ResNet-50 at batch 32, vgg19). No FMA in the AVX2
// clone, so every host computes the same bits.
#include <algorithm>
#include <cstring>
#include <memory>

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

// The tiles of the product: kPixels output pixels (a multiple of the inner kernel's 8) by kChannels output
// channels (of its 4) a work item, the reduction in steps of kDepth (a tile's columns stay in L1 and its
// weights in L2 across the inner kernels).
constexpr int64_t kPixels = 64, kChannels = 64, kDepth = 256;
constexpr int64_t kTileRows = 4, kTileCols = 8;

struct ConvPlan {
  int64_t Cg = 0, Mg = 0, MgPadded = 0, K = 0, taps = 1, inPlane = 1, outPlane = 1;
  int64_t pixelTiles = 0, channelBlocks = 0;
  std::vector<double> weights;  // per group, MgPadded rows of K (rows past Mg zero)
};

ConvPlan convPlan(const ConvShapes& s) {
  ConvPlan p;
  p.Cg = s.C / s.groups;
  p.Mg = s.M / s.groups;
  p.MgPadded = (p.Mg + kTileRows - 1) / kTileRows * kTileRows;
  p.taps = numElements(s.window.kernel);
  p.K = p.Cg * p.taps;
  p.inPlane = numElements(s.window.input);
  p.outPlane = numElements(s.window.output);
  p.pixelTiles = (p.outPlane + kPixels - 1) / kPixels;
  p.channelBlocks = (p.MgPadded + kChannels - 1) / kChannels;
  return p;
}

// For each tap and each pixel of the tile starting at `p0`: the input's offset in a channel plane, or -1 where
// the tap falls in the padding (or the pixel past the plane).
void windowOffsets(const WindowGeometry& g, int64_t p0, int64_t pixels, int64_t taps, std::vector<int64_t>& offsets) {
  const size_t rank = g.rank();
  offsets.assign(size_t(taps * kPixels), -1);
  std::vector<int64_t> o(rank), k(rank);
  for (int64_t i = 0; i < pixels; ++i) {
    for (int64_t rest = p0 + i, d = int64_t(rank); d-- > 0;) {
      o[size_t(d)] = rest % g.output[size_t(d)];
      rest /= g.output[size_t(d)];
    }
    std::fill(k.begin(), k.end(), 0);
    for (int64_t t = 0; t < taps; ++t) {
      int64_t at = 0;
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        int64_t x = o[d] * g.strides[d] - g.padsBegin[d] + k[d] * g.dilations[d];
        inside = inside && x >= 0 && x < g.input[d];
        at = at * g.input[d] + x;
      }
      if (inside) offsets[size_t(t * kPixels + i)] = at;
      for (size_t d = rank; d-- > 0;)
        if (++k[d] < g.kernel[d]) break; else k[d] = 0;
    }
  }
}

// columns[k][i] = the input under tap k % taps of channel k / taps for pixel i of the tile (0 in the padding).
template <class T>
void gatherColumns(const T* channels, const ConvPlan& p, const std::vector<int64_t>& offsets, double* columns) {
  for (int64_t c = 0; c < p.Cg; ++c) {
    const T* plane = channels + c * p.inPlane;
    for (int64_t t = 0; t < p.taps; ++t) {
      const int64_t* at = offsets.data() + t * kPixels;
      double* row = columns + (c * p.taps + t) * kPixels;
      for (int64_t i = 0; i < kPixels; ++i) row[i] = at[i] >= 0 ? double(plane[at[i]]) : 0.0;
    }
  }
}

using Lanes = double __attribute__((vector_size(32), aligned(8)));

// sums[r][0..8) += Σ_k w[r][k] · columns[k][0..8) over `depth` steps, for kTileRows rows of weights `wStride`
// apart and columns kPixels apart: the inner kernel, its 8 sums of 4 lanes in registers.
__attribute__((target_clones("avx2", "default"))) void innerTile(const double* w, int64_t wStride,
                                                                            const double* columns, int64_t depth,
                                                                            double (*sums)[kTileCols]) {
  Lanes acc[kTileRows][2];
  for (int r = 0; r < kTileRows; ++r) {
    std::memcpy(&acc[r][0], sums[r], sizeof(Lanes));
    std::memcpy(&acc[r][1], sums[r] + 4, sizeof(Lanes));
  }
  for (int64_t k = 0; k < depth; ++k) {
    Lanes c0, c1;
    std::memcpy(&c0, columns + k * kPixels, sizeof(Lanes));
    std::memcpy(&c1, columns + k * kPixels + 4, sizeof(Lanes));
    for (int r = 0; r < kTileRows; ++r) {
      double wk = w[r * wStride + k];
      acc[r][0] += wk * c0;
      acc[r][1] += wk * c1;
    }
  }
  for (int r = 0; r < kTileRows; ++r) {
    std::memcpy(sums[r], &acc[r][0], sizeof(Lanes));
    std::memcpy(sums[r] + 4, &acc[r][1], sizeof(Lanes));
  }
}

// One work item's outputs: channels [m0, m1) of group g (m1 a multiple of kTileRows within MgPadded) over the
// tile's `pixels` pixels from p0, from its gathered columns. O: the output's element type, f32 for an f32 conv
// (each sum rounded once, as Tensor::fromDoubles would), else double.
template <class O>
void multiplyTile(const ConvPlan& p, const double* weights, const double* columns, const double* bias, int64_t m0,
                  int64_t m1, int64_t pixels, O* out) {
  // The item's sums, [row group][column group][kTileRows][kTileCols], carried over the reduction's steps: each
  // step's columns of one column group (kDepth x kTileCols, 16 KiB) stay in L1 across the row groups, and its
  // weights (the item's rows x kDepth) in L2, where before every inner kernel streamed its whole reduction from
  // farther out (K of 2304: 1.2 MB of columns a pixel tile). Each sum still adds its K products in order.
  const int64_t rowGroups = (m1 - m0) / kTileRows, colGroups = (pixels + kTileCols - 1) / kTileCols;
  double sums[kChannels / kTileRows][kPixels / kTileCols][kTileRows][kTileCols];
  for (int64_t g = 0; g < rowGroups; ++g)
    for (int64_t r = 0; r < kTileRows; ++r) {
      const double start = bias ? bias[std::min(m0 + g * kTileRows + r, p.Mg - 1)] : 0.0;
      for (int64_t c = 0; c < colGroups; ++c) std::fill_n(sums[g][c][r], kTileCols, start);
    }
  for (int64_t k0 = 0; k0 < p.K; k0 += kDepth)
    for (int64_t c = 0; c < colGroups; ++c)
      for (int64_t g = 0; g < rowGroups; ++g)
        innerTile(weights + (m0 + g * kTileRows) * p.K + k0, p.K, columns + k0 * kPixels + c * kTileCols,
                  std::min(kDepth, p.K - k0), sums[g][c]);
  for (int64_t g = 0; g < rowGroups; ++g)
    for (int64_t r = 0, m = m0 + g * kTileRows; r < kTileRows && m + r < p.Mg; ++r)
      for (int64_t j = 0; j < pixels; ++j) out[(m + r) * p.outPlane + j] = O(sums[g][j / kTileCols][r][j % kTileCols]);
}

template <class T, class O>
void convItems(const ConvShapes& s, const ConvPlan& p, const T* x, const double* bias, O* y, int64_t begin,
               int64_t end) {
  std::vector<int64_t> offsets;
  std::vector<double> columns(size_t(p.K * kPixels));
  int64_t gathered = -1;  // the (image, group, pixel tile) whose columns are in `columns`
  for (int64_t item = begin; item < end; ++item) {
    const int64_t block = item % p.channelBlocks, tile = item / p.channelBlocks % p.pixelTiles;
    const int64_t image = item / (p.channelBlocks * p.pixelTiles), n = image / s.groups, g = image % s.groups;
    const int64_t p0 = tile * kPixels, pixels = std::min(kPixels, p.outPlane - p0);
    if (gathered != item / p.channelBlocks) {
      gathered = item / p.channelBlocks;
      windowOffsets(s.window, p0, pixels, p.taps, offsets);
      gatherColumns(x + (n * s.C + g * p.Cg) * p.inPlane, p, offsets, columns.data());
    }
    const int64_t m0 = block * kChannels, m1 = std::min(p.MgPadded, m0 + kChannels);
    multiplyTile(p, p.weights.data() + g * p.MgPadded * p.K, columns.data(), bias ? bias + g * p.Mg : nullptr, m0, m1,
                 pixels, y + (n * s.M + g * p.Mg) * p.outPlane + p0);
  }
}

std::vector<Tensor> evalConv(const Node& node, const std::vector<const Tensor*>& in,
                             const std::vector<TensorType>& types) {
  const Tensor* bias = in.size() > 2 ? in[2] : nullptr;
  ConvShapes s = convShapes(node, in[0]->shape(), in[1]->shape(), bias ? &bias->shape() : nullptr);
  requireWorkBuffer(node, numElements(types[0].shape));
  ConvPlan p = convPlan(s);
  const size_t outputs = size_t(s.N * s.M * p.outPlane);
  if (outputs == 0) return {Tensor(types[0].dtype, types[0].shape)};
  p.weights = in[1]->toDoubles();
  if (p.MgPadded != p.Mg) {  // each group's rows padded with zero rows to whole inner tiles
    std::vector<double> padded(size_t(s.groups * p.MgPadded * p.K), 0.0);
    for (int64_t g = 0; g < s.groups; ++g)
      std::copy_n(p.weights.data() + g * p.Mg * p.K, p.Mg * p.K, padded.data() + g * p.MgPadded * p.K);
    p.weights = std::move(padded);
  }
  std::vector<double> b = bias ? bias->toDoubles() : std::vector<double>{};
  const double* bp = bias ? b.data() : nullptr;
  bool f32 = in[0]->dtype() == DType::F32;
  KernelOperand x(*in[0], !f32);
  int64_t items = s.N * s.groups * p.pixelTiles * p.channelBlocks;
  auto run = [&](auto* y) {
    parallelFor(items, kChannels * p.K * kPixels, [&](int64_t begin, int64_t end) {
      if (f32)
        convItems(s, p, x.f32(), bp, y, begin, end);
      else
        convItems(s, p, x.f64(), bp, y, begin, end);
    });
  };
  // An f32 output is written in place: a double buffer as large again, its pages faulted in and then converted,
  // took more time than the products (a 1 x 1 conv of batch 8, 64 -> 256 channels over 56 x 56).
  if (types[0].dtype == DType::F32) {
    Tensor out = Tensor::uninitialized(DType::F32, types[0].shape);
    run(out.mutableData<float>());
    return {std::move(out)};
  }
  std::unique_ptr<double[]> y(new double[outputs]);  // every element is written: no zeros first
  run(y.get());
  return {Tensor::fromDoubles(types[0].dtype, types[0].shape, {y.get(), outputs})};
}

}  // namespace

void registerConvOps(OpRegistry& r) {
  addOp(r, {"Conv", OpCategory::Conv, "N-d grouped convolution (strides, pads, dilations, auto_pad), optional bias", 2,
            3, 1, 1, {}, inferConv, evalConv},
        {.hasNhwcForm = true});
}

}  // namespace tessera::ops
