// MaxPool, AveragePool, LpPool (N-d windows with strides, pads, dilations, auto_pad, ceil_mode) and the global
// pools.
//
// The window geometry is the same for every (batch, channel) plane, so evaluation first lists, for each
// output position, the input offsets its window covers, then sweeps the planes with that list.
#include <cmath>
#include <limits>

#include "ops/linalg_parts.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/window.h"

namespace tessera::ops {
namespace {

struct PoolShapes {
  WindowGeometry window;
  Shape out;
};

PoolShapes poolShapes(const Node& node, const Shape& x) {
  if (x.size() < 3) failNode(node, "input 0 (X) must be [N, C, spatial...], got " + shapeToString(x));
  if (!node.hasAttr("kernel_shape")) failNode(node, "attribute kernel_shape is required");
  Shape kernel = node.attrInts("kernel_shape");
  Shape spatial(x.begin() + 2, x.end());
  if (kernel.size() != spatial.size())
    failNode(node, "attribute kernel_shape " + intsToString(kernel) + " must have one value per spatial axis of " +
                       shapeToString(x));
  PoolShapes s;
  s.window = windowGeometry(node, spatial, kernel, node.attrInt("ceil_mode", 0) != 0);
  s.out = {x[0], x[1]};
  s.out.insert(s.out.end(), s.window.output.begin(), s.window.output.end());
  return s;
}

void inferMaxPool(InferContext& ctx) {
  requireDType(ctx, 0, {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8, DType::U8});
  int64_t order = ctx.node().attrInt("storage_order", 0);
  if (order != 0 && order != 1) ctx.error("attribute storage_order " + std::to_string(order) + " must be 0 or 1");
  Shape out = poolShapes(ctx.node(), ctx.input(0).shape).out;
  ctx.outputs[0] = {ctx.input(0).dtype, out};
  if (ctx.outputs.size() > 1) ctx.outputs[1] = {DType::I64, out};
}

void inferAveragePool(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  ctx.outputs[0] = {ctx.input(0).dtype, poolShapes(ctx.node(), ctx.input(0).shape).out};
}

// For every output position of one plane: the covered input offsets (row-major and, for MaxPool's
// storage_order=1 indices, column-major) and the averaging divisor.
struct WindowList {
  std::vector<int64_t> start{0}, offsets, columnOffsets;
  std::vector<double> divisor;
};

WindowList listWindows(const WindowGeometry& g, bool countIncludePad, bool columnMajor) {
  std::vector<AxisTaps> taps = windowTaps(g);
  std::vector<int64_t> rowStride = stridesOf(g.input), colStride(g.rank(), 1);
  for (size_t d = 1; d < g.rank(); ++d) colStride[d] = colStride[d - 1] * g.input[d - 1];
  WindowList w;
  int64_t outputs = numElements(g.output);
  std::vector<int64_t> o(g.rank(), 0);
  for (int64_t i = 0; i < outputs; ++i) {
    double padded = 1;
    for (size_t d = 0; d < g.rank(); ++d) padded *= double(taps[d].paddedCount[size_t(o[d])]);
    std::vector<size_t> k(g.rank(), 0);
    bool empty = false;
    for (size_t d = 0; d < g.rank(); ++d) empty = empty || taps[d].inside[size_t(o[d])].empty();
    int64_t count = 0;
    while (!empty) {  // odometer over the window taps inside the input
      int64_t row = 0, col = 0;
      for (size_t d = 0; d < g.rank(); ++d) {
        int64_t x = taps[d].inside[size_t(o[d])][k[d]];
        row += x * rowStride[d];
        col += x * colStride[d];
      }
      w.offsets.push_back(row);
      if (columnMajor) w.columnOffsets.push_back(col);
      ++count;
      size_t d = g.rank();
      while (d-- > 0 && ++k[d] == taps[d].inside[size_t(o[d])].size()) k[d] = 0;
      if (d == size_t(-1)) break;
    }
    w.start.push_back(int64_t(w.offsets.size()));
    w.divisor.push_back(countIncludePad ? padded : double(count));
    for (size_t d = g.rank(); d-- > 0;)
      if (++o[d] < g.output[d]) break; else o[d] = 0;
  }
  return w;
}

// Planes [begin, end) of a max pool: each window's maximum (the first of equal maxima) into y, and its element's
// flat index into idx when it is wanted. T, O: f32 read and written in place, else double.
template <class T, class O>
void maxPoolPlanes(const T* x, const WindowList& w, const std::vector<int64_t>& indexOffsets, int64_t inPlane,
                   O* y, int64_t* idx, int64_t begin, int64_t end) {
  const int64_t outPlane = int64_t(w.divisor.size());
  for (int64_t p = begin; p < end; ++p) {
    const T* plane = x + p * inPlane;
    for (int64_t o = 0; o < outPlane; ++o) {
      double best = -std::numeric_limits<double>::infinity();
      int64_t bestAt = -1;
      for (int64_t k = w.start[size_t(o)]; k < w.start[size_t(o) + 1]; ++k) {
        double v = plane[w.offsets[size_t(k)]];
        if (bestAt < 0 || v > best) {  // the first of equal maxima wins, as in ONNX's reference
          best = v;
          bestAt = k;
        }
      }
      y[p * outPlane + o] = O(best);
      if (idx) idx[p * outPlane + o] = bestAt >= 0 ? p * inPlane + indexOffsets[size_t(bestAt)] : -1;
    }
  }
}

// Planes over the cores; an f32 input read and an f32 output written in place (a max of f32 values is one of
// them, so the bits are those of the double path).
std::vector<Tensor> evalMaxPool(const Node& node, const std::vector<const Tensor*>& in,
                                const std::vector<TensorType>& types) {
  PoolShapes s = poolShapes(node, in[0]->shape());
  requireWorkBuffer(node, numElements(s.out));
  bool columnMajor = node.attrInt("storage_order", 0) == 1;
  WindowList w = listWindows(s.window, false, columnMajor);
  const std::vector<int64_t>& indexOffsets = columnMajor ? w.columnOffsets : w.offsets;
  const int64_t planes = s.out[0] * s.out[1], inPlane = numElements(s.window.input);
  const int64_t outPlane = int64_t(w.divisor.size());
  const bool f32 = types[0].dtype == DType::F32;
  KernelOperand x(*in[0], !f32);  // the output's dtype is the input's
  std::vector<int64_t> idx(types.size() > 1 ? size_t(planes * outPlane) : 0);
  std::vector<double> y64(f32 ? 0 : size_t(planes * outPlane));
  Tensor y32 = f32 ? Tensor::uninitialized(DType::F32, types[0].shape) : Tensor();
  const int64_t windowCost = outPlane > 0 ? int64_t(w.offsets.size()) / outPlane + 1 : 1;
  parallelFor(planes, outPlane * windowCost, [&](int64_t begin, int64_t end) {
    int64_t* at = idx.empty() ? nullptr : idx.data();
    if (f32)
      maxPoolPlanes(x.f32(), w, indexOffsets, inPlane, y32.mutableData<float>(), at, begin, end);
    else
      maxPoolPlanes(x.f64(), w, indexOffsets, inPlane, y64.data(), at, begin, end);
  });
  std::vector<Tensor> out{f32 ? y32 : Tensor::fromDoubles(types[0].dtype, types[0].shape, y64)};
  if (types.size() > 1) out.push_back(Tensor::fromInts(DType::I64, types[1].shape, idx));
  return out;
}

// Each window's sum of term(x) over its listed offsets, then finish(sum, window), plane by plane: the loop
// AveragePool and LpPool share.
template <class Term, class Finish>
std::vector<double> windowReduce(const std::vector<double>& x, const PoolShapes& s, const WindowList& w, Term term,
                                 Finish finish) {
  int64_t planes = s.out[0] * s.out[1], inPlane = numElements(s.window.input);
  int64_t outPlane = int64_t(w.divisor.size());
  std::vector<double> y(size_t(planes * outPlane));
  for (int64_t p = 0; p < planes; ++p) {
    const double* plane = x.data() + p * inPlane;
    for (int64_t o = 0; o < outPlane; ++o) {
      double sum = 0;
      for (int64_t k = w.start[size_t(o)]; k < w.start[size_t(o) + 1]; ++k) sum += term(plane[w.offsets[size_t(k)]]);
      y[size_t(p * outPlane + o)] = finish(sum, size_t(o));
    }
  }
  return y;
}

std::vector<Tensor> evalAveragePool(const Node& node, const std::vector<const Tensor*>& in,
                                    const std::vector<TensorType>& types) {
  PoolShapes s = poolShapes(node, in[0]->shape());
  requireWorkBuffer(node, numElements(s.out));
  WindowList w = listWindows(s.window, node.attrInt("count_include_pad", 0) != 0, false);
  std::vector<double> y = windowReduce(
      in[0]->toDoubles(), s, w, [](double v) { return v; }, [&](double sum, size_t o) { return sum / w.divisor[o]; });
  return {Tensor::fromDoubles(types[0].dtype, types[0].shape, y)};
}

// LpPool: (sum over the window of |x|^p)^(1/p); padding contributes nothing.
std::vector<Tensor> evalLpPool(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  PoolShapes s = poolShapes(node, in[0]->shape());
  requireWorkBuffer(node, numElements(s.out));
  WindowList w = listWindows(s.window, false, false);
  const double p = double(node.attrInt("p", 2));
  std::vector<double> y = windowReduce(
      in[0]->toDoubles(), s, w, [p](double v) { return std::pow(std::fabs(v), p); },
      [p](double sum, size_t) { return std::pow(sum, 1 / p); });
  return {Tensor::fromDoubles(types[0].dtype, types[0].shape, y)};
}

// --- global pools: one value per (batch, channel) plane ---

void inferGlobalPool(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) ctx.error("input 0 (X) must be [N, C, spatial...], got " + shapeToString(x));
  Shape out(x.size(), 1);
  out[0] = x[0];
  out[1] = x[1];
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

template <bool kMax>
std::vector<Tensor> evalGlobalPool(const Node&, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  std::vector<double> x = in[0]->toDoubles();
  const Shape& shape = in[0]->shape();
  int64_t planes = shape[0] * shape[1], size = planes ? int64_t(x.size()) / planes : 0;
  std::vector<double> y(static_cast<size_t>(planes));
  for (int64_t p = 0; p < planes; ++p) {
    const double* v = x.data() + p * size;
    double acc = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < size; ++i) acc = kMax ? (v[i] > acc || std::isnan(v[i]) ? v[i] : acc) : acc + v[i];
    y[size_t(p)] = kMax ? acc : acc / double(size);
  }
  return {Tensor::fromDoubles(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerPoolOps(OpRegistry& r) {
  addOp(r, {"MaxPool", OpCategory::Reduction, "maximum over sliding windows, optional flat argmax indices", 1, 1, 1, 2,
            {}, inferMaxPool, evalMaxPool},
        {.hasNhwcForm = true, .reduce = ReduceKind::Max, .pool = PoolKind::Window});
  addOp(r, {"AveragePool", OpCategory::Reduction, "mean over sliding windows (count_include_pad, ceil_mode)", 1, 1, 1,
            1, {}, inferAveragePool, evalAveragePool},
        {.hasNhwcForm = true, .reduce = ReduceKind::Mean, .pool = PoolKind::Window});
  addOp(r, {"LpPool", OpCategory::Other, "(sum of |x|^p)^(1/p) over sliding windows (no kernel template)", 1, 1, 1, 1,
            {}, inferAveragePool, evalLpPool}, {.reduce = ReduceKind::Other, .pool = PoolKind::Window});
  addOp(r, {"GlobalAveragePool", OpCategory::Reduction, "mean over all spatial positions of each channel", 1, 1, 1, 1,
            {}, inferGlobalPool, evalGlobalPool<false>},
        {.hasNhwcForm = true, .reduce = ReduceKind::Mean, .pool = PoolKind::Global});
  addOp(r, {"GlobalMaxPool", OpCategory::Reduction, "maximum over all spatial positions of each channel", 1, 1, 1, 1,
            {}, inferGlobalPool, evalGlobalPool<true>},
        {.hasNhwcForm = true, .reduce = ReduceKind::Max, .pool = PoolKind::Global});
}

}  // namespace tessera::ops
