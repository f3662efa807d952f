// Rearranging and constructing ops: DepthToSpace and SpaceToDepth (channels to and from blocks of pixels),
// ReverseSequence, CenterCropPad, EyeLike and OneHot. Element copies are byte copies, so every dtype is exact.
#include <cstring>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

void copyElement(Tensor& out, int64_t to, const Tensor& in, int64_t from) {
  size_t e = dtypeSize(in.dtype());
  std::memcpy(out.mutableBytes().data() + size_t(to) * e, in.bytes().data() + size_t(from) * e, e);
}

// --- DepthToSpace [N, C, H, W] -> [N, C / b^2, H * b, W * b]; SpaceToDepth the inverse (DCR order) ---

int64_t blockSize(const InferContext& ctx) {
  int64_t b = ctx.node().attrInt("blocksize", 0);
  if (b <= 0) ctx.error("attribute 'blocksize' must be positive");
  if (ctx.input(0).shape.size() != 4) ctx.error("input 0 must be [N, C, H, W], not " + ctx.input(0).toString());
  return b;
}

void inferDepthToSpace(InferContext& ctx) {
  int64_t b = blockSize(ctx);
  Shape x = ctx.input(0).shape;
  std::string mode = ctx.node().attrString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ctx.error("attribute 'mode' is '" + mode + "'; expected DCR or CRD");
  if (x[1] % (b * b)) ctx.error("channels " + std::to_string(x[1]) + " are not a multiple of blocksize^2");
  ctx.outputs[0] = {ctx.input(0).dtype, {x[0], x[1] / (b * b), x[2] * b, x[3] * b}};
}

void inferSpaceToDepth(InferContext& ctx) {
  int64_t b = blockSize(ctx);
  Shape x = ctx.input(0).shape;
  if (x[2] % b || x[3] % b) ctx.error("H and W of " + ctx.input(0).toString() + " are not multiples of blocksize");
  ctx.outputs[0] = {ctx.input(0).dtype, {x[0], x[1] * b * b, x[2] / b, x[3] / b}};
}

// Visits each (n, c', h, w, i, j): pixel (h * b + i, w * b + j) of channel c' of the space side, and its
// channel on the depth side.
template <class F>
void forEachBlockPixel(const Shape& space, int64_t b, bool crd, F f) {
  int64_t n = space[0], c = space[1], h = space[2] / b, w = space[3] / b;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t i = 0; i < b; ++i)
          for (int64_t iw = 0; iw < w; ++iw)
            for (int64_t j = 0; j < b; ++j) {
              int64_t depthC = crd ? (ic * b + i) * b + j : (i * b + j) * c + ic;
              int64_t spaceAt = ((in * c + ic) * h * b + ih * b + i) * w * b + iw * b + j;
              int64_t depthAt = ((in * c * b * b + depthC) * h + ih) * w + iw;
              f(spaceAt, depthAt);
            }
}

std::vector<Tensor> evalDepthToSpace(const Node& node, const std::vector<const Tensor*>& in,
                                     const std::vector<TensorType>& types) {
  int64_t b = node.attrInt("blocksize", 1);
  Tensor out(types[0].dtype, types[0].shape);
  forEachBlockPixel(types[0].shape, b, node.attrString("mode", "DCR") == "CRD",
                    [&](int64_t space, int64_t depth) { copyElement(out, space, *in[0], depth); });
  return {out};
}

std::vector<Tensor> evalSpaceToDepth(const Node& node, const std::vector<const Tensor*>& in,
                                     const std::vector<TensorType>& types) {
  int64_t b = node.attrInt("blocksize", 1);
  Tensor out(types[0].dtype, types[0].shape);
  forEachBlockPixel(in[0]->shape(), b, false,
                    [&](int64_t space, int64_t depth) { copyElement(out, depth, *in[0], space); });
  return {out};
}

// --- ReverseSequence(input, sequence_lens): the first lens[b] steps along time_axis reversed per batch ---

void inferReverseSequence(InferContext& ctx) {
  const Shape& x = ctx.input(0).shape;
  int64_t t = ctx.node().attrInt("time_axis", 0), b = ctx.node().attrInt("batch_axis", 1);
  if (x.size() < 2 || (t != 0 && t != 1) || b != 1 - t)
    ctx.error("time_axis and batch_axis must be 0 and 1 (either way) of a rank >= 2 input");
  requireDType(ctx, 1, {DType::I64});
  if (ctx.input(1).shape != Shape{x[size_t(b)]}) ctx.error("sequence_lens must be [batch]");
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalReverseSequence(const Node& node, const std::vector<const Tensor*>& in,
                                        const std::vector<TensorType>& types) {
  const Shape& x = in[0]->shape();
  size_t t = size_t(node.attrInt("time_axis", 0)), b = 1 - t;
  int64_t inner = numElements(Shape(x.begin() + 2, x.end()));
  std::vector<int64_t> strides = stridesOf(x), lens = in[1]->toInts();
  Tensor out(types[0].dtype, types[0].shape);
  for (int64_t bi = 0; bi < x[b]; ++bi) {
    int64_t len = lens[size_t(bi)];
    if (len < 0 || len > x[t]) failNode(node, "sequence length " + std::to_string(len) + " is outside [0, " +
                                                  std::to_string(x[t]) + "]");
    for (int64_t ti = 0; ti < x[t]; ++ti) {
      int64_t from = ti < len ? len - 1 - ti : ti;
      for (int64_t k = 0; k < inner; ++k)
        copyElement(out, ti * strides[t] + bi * strides[b] + k, *in[0], from * strides[t] + bi * strides[b] + k);
    }
  }
  return {out};
}

// --- CenterCropPad(input, shape): each of `axes` cropped or zero-padded to shape, centred (the extra element
// goes to the end) ---

std::vector<int64_t> cropAxes(const Node& node, size_t rank, size_t given) {
  std::vector<int64_t> axes = node.attrInts("axes");
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
  if (axes.size() != given) failNode(node, "shape has " + std::to_string(given) + " values for " +
                                               std::to_string(axes.size()) + " axes");
  for (int64_t& a : axes) a = evalAxis(node, a, int64_t(rank));
  return axes;
}

void inferCenterCropPad(InferContext& ctx) {
  std::vector<int64_t> target = constantInts(ctx, 1, "shape");
  Shape out = ctx.input(0).shape;
  std::vector<int64_t> axes = cropAxes(ctx.node(), out.size(), target.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (target[i] < 0) ctx.error("shape " + intsToString(target) + " has a negative size");
    out[size_t(axes[i])] = target[i];
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalCenterCropPad(const Node&, const std::vector<const Tensor*>& in,
                                      const std::vector<TensorType>& types) {
  const Shape& x = in[0]->shape();
  const Shape& y = types[0].shape;
  std::vector<int64_t> xs = stridesOf(x);
  Tensor out(types[0].dtype, y);
  std::vector<int64_t> c(y.size(), 0);
  for (int64_t k = 0; k < out.numElements(); ++k) {
    int64_t from = 0;
    for (size_t d = 0; d < y.size() && from >= 0; ++d) {
      // Crop: skip (in - out) / 2 at the start; pad: (out - in) / 2 zeros before.
      int64_t src = x[d] >= y[d] ? c[d] + (x[d] - y[d]) / 2 : c[d] - (y[d] - x[d]) / 2;
      from = src < 0 || src >= x[d] ? -1 : from + src * xs[d];
    }
    if (from >= 0) copyElement(out, k, *in[0], from);
    for (size_t d = y.size(); d-- > 0;)
      if (++c[d] < y[d]) break; else c[d] = 0;
  }
  return {out};
}

// --- EyeLike(input): ones where column - row = k, of `dtype` (default the input's) ---

void inferEyeLike(InferContext& ctx) {
  requireRank(ctx, 0, 2);
  DType t = ctx.input(0).dtype;
  if (const Attribute* a = ctx.node().attr("dtype")) {
    std::optional<DType> d = dtypeFromOnnxCode(a->i());
    if (!d) ctx.error("attribute 'dtype' = " + std::to_string(a->i()) + " is not a dtype Tessera holds");
    t = *d;
  }
  ctx.outputs[0] = {t, ctx.input(0).shape};
}

std::vector<Tensor> evalEyeLike(const Node& node, const std::vector<const Tensor*>&,
                                const std::vector<TensorType>& types) {
  int64_t k = node.attrInt("k", 0), rows = types[0].shape[0], cols = types[0].shape[1];
  Tensor out(types[0].dtype, types[0].shape);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) out.setDouble(i * cols + i + k, 1.0);
  return {out};
}

// --- OneHot(indices, depth, values [off, on]): depth inserted at axis; index (negative: + depth) -> on ---

int64_t oneHotDepth(const InferContext& ctx) {
  const Tensor& d = ctx.requireConstant(1, "depth");
  if (d.numElements() != 1) ctx.error("input 1 (depth) must hold one value");
  double v = d.getDouble(0);
  if (v < 1) ctx.error("depth " + std::to_string(v) + " must be at least 1");
  return int64_t(v);
}

void inferOneHot(InferContext& ctx) {
  int64_t depth = oneHotDepth(ctx);
  if (ctx.input(2).shape != Shape{2}) ctx.error("input 2 (values) must be [off, on], not " + ctx.input(2).toString());
  Shape out = ctx.input(0).shape;
  int64_t axis = normalizedAxis(ctx, ctx.node().attrInt("axis", -1), int64_t(out.size()) + 1);
  out.insert(out.begin() + axis, depth);
  ctx.outputs[0] = {ctx.input(2).dtype, out};
}

std::vector<Tensor> evalOneHot(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  const Shape& y = types[0].shape;
  int64_t axis = evalAxis(node, node.attrInt("axis", -1), int64_t(y.size()));
  AxisSplit sp = splitAtAxis(y, axis);
  Tensor out(types[0].dtype, y);
  std::vector<double> idx = in[0]->toDoubles();
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      int64_t hot = int64_t(idx[size_t(o * sp.inner + i)]);
      if (hot < 0) hot += sp.extent;
      for (int64_t a = 0; a < sp.extent; ++a) copyElement(out, (o * sp.extent + a) * sp.inner + i, *in[2], a == hot);
    }
  return {out};
}

}  // namespace

void registerLayoutOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template (see README)
  addOp(r, {"DepthToSpace", other, "move channel blocks into blocksize x blocksize pixels (mode DCR or CRD)", 1, 1, 1,
            1, {}, inferDepthToSpace, evalDepthToSpace});
  addOp(r, {"SpaceToDepth", other, "move blocksize x blocksize pixels into channels", 1, 1, 1, 1, {},
            inferSpaceToDepth, evalSpaceToDepth});
  addOp(r, {"ReverseSequence", other, "reverse the first sequence_lens[b] steps along time_axis per batch", 2, 2, 1, 1,
            {}, inferReverseSequence, evalReverseSequence});
  addOp(r, {"CenterCropPad", other, "crop or zero-pad axes to shape, centred", 2, 2, 1, 1, {1}, inferCenterCropPad,
            evalCenterCropPad});
  addOp(r, {"EyeLike", other, "ones on diagonal k of a matrix shaped like the input", 1, 1, 1, 1, {}, inferEyeLike,
            evalEyeLike});
  addOp(r, {"OneHot", other, "values[1] at each index along a new axis of size depth, values[0] elsewhere", 3, 3, 1, 1,
            {1}, inferOneHot, evalOneHot});
}

}  // namespace tessera
