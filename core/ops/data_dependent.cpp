// Ops whose output shape depends on input values: NonZero, Compress, Unique and NonMaxSuppression. Tessera's
// shapes are static, so the inputs that decide the shape are shape inputs: they must be known at compile time
// (initializers, constants, or data fed at import as the conformance runner does), like Reshape's shape. The
// result is computed once by inference (for the shape) and again by evaluation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

// --- NonZero(X) -> [rank, count] i64, the coordinates of the non-zero elements in row-major order ---

Tensor nonZero(const Tensor& x) {
  std::vector<int64_t> hits, strides = stridesOf(x.shape());
  for (int64_t i = 0; i < x.numElements(); ++i)
    if (x.getDouble(i) != 0) hits.push_back(i);
  size_t rank = x.shape().size();
  std::vector<int64_t> out(rank * hits.size());
  for (size_t k = 0; k < hits.size(); ++k)
    for (size_t d = 0; d < rank; ++d) out[d * hits.size() + k] = hits[k] / strides[d] % x.shape()[d];
  return Tensor::fromInts(DType::I64, {int64_t(rank), int64_t(hits.size())}, out);
}

void inferNonZero(InferContext& ctx) { ctx.outputs[0] = nonZero(ctx.requireConstant(0, "X")).type(); }

std::vector<Tensor> evalNonZero(const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
  return {nonZero(*in[0])};
}

// --- Compress(input, condition): the slices along axis (or the flattened elements) where condition holds;
// a condition shorter than the axis leaves the rest out ---

Tensor compress(const Node& node, const Tensor& x, const Tensor& cond) {
  bool flat = !node.hasAttr("axis");
  Shape shape = flat ? Shape{x.numElements()} : x.shape();
  int64_t axis = flat ? 0 : evalAxis(node, node.attrInt("axis", 0), int64_t(shape.size()));
  AxisSplit sp = splitAtAxis(shape, axis);
  if (cond.numElements() > sp.extent)
    failNode(node, "condition has " + std::to_string(cond.numElements()) + " values for an axis of " +
                       std::to_string(sp.extent));
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numElements(); ++i)
    if (cond.getInt(i)) keep.push_back(i);
  shape[size_t(axis)] = int64_t(keep.size());
  Tensor out(x.dtype(), shape);
  size_t e = dtypeSize(x.dtype()), block = size_t(sp.inner) * e;
  std::byte* dst = out.mutableBytes().data();
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t k : keep) {
      std::memcpy(dst, x.bytes().data() + size_t(o * sp.extent + k) * block, block);
      dst += block;
    }
  return out;
}

void inferCompress(InferContext& ctx) {
  requireDType(ctx, 1, DTypeClass::Bool);
  ctx.outputs[0] = compress(ctx.node(), ctx.requireConstant(0, "input"), ctx.requireConstant(1, "condition")).type();
}

std::vector<Tensor> evalCompress(const Node& node, const std::vector<const Tensor*>& in,
                                 const std::vector<TensorType>&) {
  return {compress(node, *in[0], *in[1])};
}

// --- Unique(X) -> Y, indices, inverse_indices, counts: distinct elements (or slices along axis), sorted or in
// order of first occurrence ---

std::vector<Tensor> unique(const Node& node, const Tensor& x) {
  bool flat = !node.hasAttr("axis"), sorted = node.attrInt("sorted", 1) != 0;
  Shape shape = flat ? Shape{x.numElements()} : x.shape();
  int64_t axis = flat ? 0 : evalAxis(node, node.attrInt("axis", 0), int64_t(shape.size()));
  AxisSplit sp = splitAtAxis(shape, axis);
  std::vector<double> v = x.toDoubles();
  // Slice k as a vector of its elements (outer-major), compared lexicographically.
  auto slice = [&](int64_t k) {
    std::vector<double> s;
    for (int64_t o = 0; o < sp.outer; ++o)
      for (int64_t i = 0; i < sp.inner; ++i) s.push_back(v[size_t((o * sp.extent + k) * sp.inner + i)]);
    return s;
  };
  std::map<std::vector<double>, int64_t> firstOf;  // slice -> index of its first occurrence
  std::vector<int64_t> firsts, inverse(size_t(sp.extent));
  for (int64_t k = 0; k < sp.extent; ++k)
    if (firstOf.emplace(slice(k), k).second) firsts.push_back(k);
  if (sorted) {
    firsts.clear();
    for (auto& [s, k] : firstOf) firsts.push_back(k);
  }
  std::vector<int64_t> counts(firsts.size(), 0), position(size_t(sp.extent));
  for (size_t u = 0; u < firsts.size(); ++u) position[size_t(firsts[u])] = int64_t(u);
  for (int64_t k = 0; k < sp.extent; ++k) {
    inverse[size_t(k)] = position[size_t(firstOf[slice(k)])];
    counts[size_t(inverse[size_t(k)])] += 1;
  }
  Shape yShape = shape;
  yShape[size_t(axis)] = int64_t(firsts.size());
  Tensor y(x.dtype(), yShape);
  size_t e = dtypeSize(x.dtype());
  for (int64_t o = 0; o < sp.outer; ++o)
    for (size_t u = 0; u < firsts.size(); ++u)
      std::memcpy(y.mutableBytes().data() + size_t((o * int64_t(firsts.size()) + int64_t(u)) * sp.inner) * e,
                  x.bytes().data() + size_t((o * sp.extent + firsts[u]) * sp.inner) * e, size_t(sp.inner) * e);
  auto ints = [](const std::vector<int64_t>& a) { return Tensor::fromInts(DType::I64, {int64_t(a.size())}, a); };
  return {y, ints(firsts), ints(inverse), ints(counts)};
}

void inferUnique(InferContext& ctx) {
  std::vector<Tensor> r = unique(ctx.node(), ctx.requireConstant(0, "X"));
  for (size_t o = 0; o < ctx.outputs.size(); ++o) ctx.outputs[o] = r[o].type();
}

std::vector<Tensor> evalUnique(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  std::vector<Tensor> r = unique(node, *in[0]);
  r.resize(types.size());
  return r;
}

// --- NonMaxSuppression(boxes [B, N, 4], scores [B, C, N], max_output_boxes_per_class?, iou_threshold?,
// score_threshold?) -> [selected, 3] of (batch, class, box): per batch and class, boxes above score_threshold
// by descending score, each kept unless its IoU with a kept one exceeds iou_threshold ---

struct Box {
  double y1, x1, y2, x2;
};

Box boxAt(const std::vector<double>& b, int64_t i, bool centre) {
  const double* p = b.data() + i * 4;
  if (centre) return {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
  return {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]), std::max(p[1], p[3])};
}

double iou(const Box& a, const Box& b) {
  double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1), w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return 0;
  double inter = h * w, uni = (a.y2 - a.y1) * (a.x2 - a.x1) + (b.y2 - b.y1) * (b.x2 - b.x1) - inter;
  return uni <= 0 ? 0 : inter / uni;
}

Tensor nonMaxSuppression(const Node& node, const std::vector<const Tensor*>& in) {
  auto input = [&](size_t i) { return in.size() > i && in[i] && in[i]->numElements() ? in[i] : nullptr; };
  const Shape& bs = in[0]->shape();
  const Shape& ss = in[1]->shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    failNode(node, "boxes " + shapeToString(bs) + " must be [B, N, 4] and scores " + shapeToString(ss) + " [B, C, N]");
  int64_t maxOut = input(2) ? input(2)->getInt(0) : 0;
  double iouMax = input(3) ? input(3)->getDouble(0) : 0, scoreMin = input(4) ? input(4)->getDouble(0) : -INFINITY;
  bool centre = node.attrInt("center_point_box", 0) != 0;
  std::vector<double> boxes = in[0]->toDoubles(), scores = in[1]->toDoubles();
  std::vector<int64_t> out;
  int64_t B = bs[0], N = bs[1], C = ss[1];
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C && maxOut > 0; ++c) {
      const double* s = scores.data() + (b * C + c) * N;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < N; ++i)
        if (s[i] > scoreMin) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= maxOut) break;
        Box bi = boxAt(boxes, b * N + i, centre);
        bool suppressed = std::any_of(kept.begin(), kept.end(),
                                      [&](int64_t k) { return iou(bi, boxAt(boxes, b * N + k, centre)) > iouMax; });
        if (suppressed) continue;
        kept.push_back(i);
        out.insert(out.end(), {b, c, i});
      }
    }
  return Tensor::fromInts(DType::I64, {int64_t(out.size() / 3), 3}, out);
}

void inferNms(InferContext& ctx) {
  std::vector<const Tensor*> in;
  const char* names[] = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    in.push_back(ctx.hasInput(i) ? &ctx.requireConstant(i, names[i]) : nullptr);
  ctx.outputs[0] = nonMaxSuppression(ctx.node(), in).type();
}

std::vector<Tensor> evalNms(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
  return {nonMaxSuppression(node, in)};
}

}  // namespace

void registerDataDependentOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template (see README)
  addOp(r, {"NonZero", other, "coordinates of the non-zero elements (input known at compile time)", 1, 1, 1, 1, {0},
            inferNonZero, evalNonZero});
  addOp(r, {"Compress", other, "slices along axis where condition holds (condition known at compile time)", 2, 2, 1, 1,
            {0, 1}, inferCompress, evalCompress});
  addOp(r, {"Unique", other, "distinct elements or slices, with first indices, inverse indices and counts (input "
            "known at compile time)", 1, 1, 1, 4, {0}, inferUnique, evalUnique});
  addOp(r, {"NonMaxSuppression", other, "boxes kept per batch and class by score and IoU (inputs known at compile "
            "time)", 2, 5, 1, 1, {0, 1, 2, 3, 4}, inferNms, evalNms});
}

}  // namespace tessera
