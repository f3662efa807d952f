// Slice, Split, Concat and Pad: ops that cut tensors into regions or assemble them from regions.
#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/broadcast.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/shape_parts.h"

namespace tessera::ops {
namespace {

int64_t axisAttr(const Node& node, int64_t rank, int64_t fallback) {
  int64_t axis = node.attrInt("axis", fallback);
  auto n = normalizeAxis(axis, rank);
  if (!n) failNode(node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return *n;
}

// --- Slice ---

// Per input axis: first element, step and count of the slice (step 1, whole extent where not sliced).
struct SliceRegion {
  std::vector<int64_t> start, step;
  Shape count;
};

// One axis with ONNX clamping: starts to [0, d] (or [0, d-1] walking back), ends to [0, d] (or [-1, d-1]).
void sliceAxis(int64_t d, int64_t start, int64_t end, int64_t step, int64_t& first, int64_t& count) {
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, std::max<int64_t>(d - 1, 0));
    end = std::clamp<int64_t>(end, -1, d - 1);
    int64_t back = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
    count = d > 0 && start > end ? (start - end - 1) / back + 1 : 0;
  }
  first = start;
}

SliceRegion sliceRegion(const Node& node, const Shape& in, const std::vector<const Tensor*>& operands) {
  auto ints = [&](size_t i, const char* what) { return tensorInts(node, *operands[i], i, what); };
  std::vector<int64_t> starts = ints(0, "starts"), ends = ints(1, "ends");
  size_t n = starts.size();
  std::vector<int64_t> axes(n), steps(n, 1);
  for (size_t i = 0; i < n; ++i) axes[i] = int64_t(i);
  if (operands[2]) axes = ints(2, "axes");
  if (operands[3]) steps = ints(3, "steps");
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    failNode(node, "starts, ends, axes and steps must have the same length, got " + std::to_string(n) + ", " +
                       std::to_string(ends.size()) + ", " + std::to_string(axes.size()) + ", " +
                       std::to_string(steps.size()));
  SliceRegion r{std::vector<int64_t>(in.size(), 0), std::vector<int64_t>(in.size(), 1), in};
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < n; ++i) {
    auto a = normalizeAxis(axes[i], int64_t(in.size()));
    if (!a || seen[size_t(*a)])
      failNode(node, "axes " + intsToString(axes) + " has an axis out of range or repeated for rank " +
                         std::to_string(in.size()));
    if (steps[i] == 0) failNode(node, "steps " + intsToString(steps) + " has a zero step");
    seen[size_t(*a)] = true;
    r.step[size_t(*a)] = steps[i];
    sliceAxis(in[size_t(*a)], starts[i], ends[i], steps[i], r.start[size_t(*a)], r.count[size_t(*a)]);
  }
  return r;
}

void inferSlice(InferContext& ctx) {
  std::vector<const Tensor*> operands;
  operands.push_back(&ctx.requireConstant(1, "starts"));
  operands.push_back(&ctx.requireConstant(2, "ends"));
  operands.push_back(ctx.hasInput(3) ? &ctx.requireConstant(3, "axes") : nullptr);
  operands.push_back(ctx.hasInput(4) ? &ctx.requireConstant(4, "steps") : nullptr);
  ctx.outputs[0] = {ctx.input(0).dtype, sliceRegion(ctx.node(), ctx.input(0).shape, operands).count};
}

std::vector<Tensor> evalSlice(const Node& node, const std::vector<const Tensor*>& in,
                              const std::vector<TensorType>& types) {
  std::vector<const Tensor*> operands{in[1], in[2], in.size() > 3 ? in[3] : nullptr, in.size() > 4 ? in[4] : nullptr};
  SliceRegion r = sliceRegion(node, in[0]->shape(), operands);
  std::vector<int64_t> s = stridesOf(in[0]->shape()), strides;
  int64_t offset = 0;
  for (size_t d = 0; d < s.size(); ++d) {
    strides.push_back(s[d] * r.step[d]);
    offset += r.start[d] * s[d];
  }
  return {stridedCopy(*in[0], types[0], strides, offset)};
}

// --- Split ---

// Extents of the parts along the axis: the split input, else num_outputs (or the output count) parts of
// ceil(d / n), the last one smaller.
std::vector<int64_t> splitSizes(const Node& node, int64_t d, size_t outputs, const Tensor* split) {
  std::vector<int64_t> sizes;
  if (split) {
    sizes = tensorInts(node, *split, 1, "split");
    int64_t sum = 0;
    for (int64_t v : sizes) {
      if (v < 0) failNode(node, "split " + intsToString(sizes) + " has a negative size");
      sum += v;
    }
    if (sum != d)
      failNode(node, "split " + intsToString(sizes) + " does not add up to the extent " + std::to_string(d));
  } else {
    int64_t n = node.attrInt("num_outputs", int64_t(outputs));
    if (n < 1 || n > kMaxVariadic) failNode(node, "num_outputs " + std::to_string(n) + " must be positive");
    int64_t chunk = (d + n - 1) / n, last = d - chunk * (n - 1);
    if (last < 0)
      failNode(node, "extent " + std::to_string(d) + " cannot be split into " + std::to_string(n) + " parts");
    sizes.assign(size_t(n - 1), chunk);
    sizes.push_back(last);
  }
  if (sizes.size() != outputs)
    failNode(node, "splits into " + std::to_string(sizes.size()) + " parts but has " + std::to_string(outputs) +
                       " outputs");
  return sizes;
}

void inferSplit(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  int64_t axis = axisAttr(ctx.node(), int64_t(in.size()), 0);
  const Tensor* split = ctx.hasInput(1) ? &ctx.requireConstant(1, "split") : nullptr;
  std::vector<int64_t> sizes = splitSizes(ctx.node(), in[size_t(axis)], ctx.outputs.size(), split);
  for (size_t i = 0; i < sizes.size(); ++i) {
    Shape s = in;
    s[size_t(axis)] = sizes[i];
    ctx.outputs[i] = {ctx.input(0).dtype, s};
  }
}

std::vector<Tensor> evalSplit(const Node& node, const std::vector<const Tensor*>& in,
                              const std::vector<TensorType>& types) {
  const Shape& shape = in[0]->shape();
  int64_t axis = axisAttr(node, int64_t(shape.size()), 0);
  std::vector<int64_t> sizes = splitSizes(node, shape[size_t(axis)], types.size(), in.size() > 1 ? in[1] : nullptr);
  std::vector<int64_t> strides = stridesOf(shape);
  std::vector<Tensor> out;
  int64_t begin = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out.push_back(stridedCopy(*in[0], types[i], strides, begin * strides[size_t(axis)]));
    begin += sizes[i];
  }
  return out;
}

// --- Concat ---

void inferConcat(InferContext& ctx) {
  const Shape& first = ctx.input(0).shape;
  if (first.empty()) ctx.error("input 0 is a scalar; Concat needs rank >= 1");
  if (!ctx.node().hasAttr("axis")) ctx.error("attribute axis is required");
  int64_t axis = axisAttr(ctx.node(), int64_t(first.size()), 0);
  Shape out = first;
  out[size_t(axis)] = 0;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    requireSameDType(ctx, 0, i);
    const Shape& s = ctx.input(i).shape;
    bool same = s.size() == first.size();
    for (size_t d = 0; same && d < s.size(); ++d) same = int64_t(d) == axis || s[d] == first[d];
    if (!same)
      ctx.error("input " + std::to_string(i) + " " + shapeToString(s) + " differs from input 0 " +
                shapeToString(first) + " outside axis " + std::to_string(axis));
    if (s[size_t(axis)] > std::numeric_limits<int64_t>::max() - out[size_t(axis)])
      ctx.error("the joined extent along axis " + std::to_string(axis) + " overflows");
    out[size_t(axis)] += s[size_t(axis)];
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

// Each input contributes a contiguous block of (its axis extent x inner) elements to every outer row.
std::vector<Tensor> evalConcat(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  const Shape& out = types[0].shape;
  int64_t axis = axisAttr(node, int64_t(out.size()), 0);
  size_t esize = dtypeSize(types[0].dtype);
  Shape outerShape(out.begin(), out.begin() + axis), innerShape(out.begin() + axis + 1, out.end());
  int64_t outer = numElements(outerShape), inner = numElements(innerShape);
  if (types[0].dtype == DType::String) {  // strings: the same blocks, element by element
    std::vector<std::string> joined;
    for (int64_t o = 0; o < outer; ++o)
      for (const Tensor* t : in) {
        const int64_t block = t->shape()[size_t(axis)] * inner;
        const auto first = t->strings().begin() + o * block;
        joined.insert(joined.end(), first, first + block);
      }
    return {Tensor::strings(out, std::move(joined))};
  }
  Tensor result(types[0].dtype, out);
  if (result.numElements() == 0) return {result};
  std::byte* dst = result.mutableBytes().data();
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor* t : in) {
      size_t block = size_t(t->shape()[size_t(axis)] * inner) * esize;
      if (block == 0) continue;
      std::memcpy(dst, t->bytes().data() + size_t(o) * block, block);
      dst += block;
    }
  return {result};
}

// --- Pad ---

struct PadSpec {
  std::vector<int64_t> begin, end;  // per input axis; negative values crop
  std::string mode;
};

PadSpec padSpec(const Node& node, const Shape& in, const Tensor& padsT, const Tensor* axesT) {
  int64_t rank = int64_t(in.size());
  std::vector<int64_t> pads = tensorInts(node, padsT, 1, "pads"), axes;
  if (axesT) {
    axes = tensorInts(node, *axesT, 3, "axes");
  } else {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size())
    failNode(node, "pads " + intsToString(pads) + " must have 2 values per padded axis (" +
                       std::to_string(axes.size()) + " axes)");
  PadSpec p{std::vector<int64_t>(in.size(), 0), std::vector<int64_t>(in.size(), 0),
            node.attrString("mode", "constant")};
  if (p.mode != "constant" && p.mode != "reflect" && p.mode != "edge" && p.mode != "wrap")
    failNode(node, "mode '" + p.mode + "' must be constant, reflect, edge or wrap");
  constexpr int64_t kMaxPad = int64_t(1) << 40;  // keeps the extent arithmetic in range
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = normalizeAxis(axes[i], rank);
    if (!a) failNode(node, "axes " + intsToString(axes) + " has an axis out of range for rank " + std::to_string(rank));
    int64_t b = pads[i], e = pads[i + axes.size()];
    if (std::abs(b) > kMaxPad || std::abs(e) > kMaxPad) failNode(node, "pads " + intsToString(pads) + " are too large");
    p.begin[size_t(*a)] = b;
    p.end[size_t(*a)] = e;
    int64_t extent = in[size_t(*a)] + b + e;
    if (extent < 0) failNode(node, "pads " + intsToString(pads) + " crop axis " + std::to_string(*a) + " below zero");
    if (p.mode != "constant" && in[size_t(*a)] == 0 && extent > 0)
      failNode(node, "mode '" + p.mode + "' cannot pad the empty axis " + std::to_string(*a));
  }
  return p;
}

void inferPad(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  if (ctx.hasInput(2)) {
    requireSameDType(ctx, 0, 2);
    if (ctx.input(2).numElements() != 1) ctx.error("input 2 (constant_value) must hold one value");
  }
  const Tensor* axes = ctx.hasInput(3) ? &ctx.requireConstant(3, "axes") : nullptr;
  PadSpec p = padSpec(ctx.node(), in, ctx.requireConstant(1, "pads"), axes);
  Shape out = in;
  for (size_t d = 0; d < in.size(); ++d) out[d] = in[d] + p.begin[d] + p.end[d];
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

// The input position an output position reads along one axis, or -1 for the constant.
int64_t padSource(int64_t o, int64_t begin, int64_t d, const std::string& mode) {
  int64_t x = o - begin;
  if (x >= 0 && x < d) return x;
  if (mode == "constant") return -1;
  if (mode == "edge") return x < 0 ? 0 : d - 1;
  if (mode == "wrap") return ((x % d) + d) % d;
  if (d == 1) return 0;  // reflect: period 2(d-1), mirrored without repeating the edge
  int64_t period = 2 * (d - 1), m = ((x % period) + period) % period;
  return m < d ? m : period - m;
}

std::vector<Tensor> evalPad(const Node& node, const std::vector<const Tensor*>& in,
                            const std::vector<TensorType>& types) {
  const Shape& shape = in[0]->shape();
  const Tensor* axes = in.size() > 3 ? in[3] : nullptr;
  PadSpec p = padSpec(node, shape, *in[1], axes);
  const Shape& out = types[0].shape;
  size_t rank = shape.size(), esize = dtypeSize(types[0].dtype);
  Tensor result(types[0].dtype, out);
  if (result.numElements() == 0) return {result};
  // Each extent is at most the (non-empty, size-capped) output's element count.
  std::vector<std::vector<int64_t>> source(rank);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < out[d]; ++o) source[d].push_back(padSource(o, p.begin[d], shape[d], p.mode));
  std::vector<std::byte> fill(esize, std::byte{0});
  if (in.size() > 2 && in[2]) std::memcpy(fill.data(), in[2]->bytes().data(), esize);
  std::vector<int64_t> strides = stridesOf(shape), idx(rank, 0);
  std::byte* dst = result.mutableBytes().data();
  const std::byte* src = in[0]->bytes().data();
  int64_t count = result.numElements();
  for (int64_t k = 0; k < count; ++k, dst += esize) {
    int64_t from = 0;
    for (size_t d = 0; d < rank && from >= 0; ++d) {
      int64_t x = source[d][size_t(idx[d])];
      from = x < 0 ? -1 : from + x * strides[d];
    }
    std::memcpy(dst, from < 0 ? fill.data() : src + size_t(from) * esize, esize);
    for (size_t d = rank; d-- > 0;)
      if (++idx[d] < out[d]) break; else idx[d] = 0;
  }
  return {result};
}

}  // namespace

void registerSliceOps(OpRegistry& r) {
  auto dm = OpCategory::DataMovement;
  const OpTraits kReindex{.strings = true, .movement = MovementKind::Reindex};
  addOp(r, {"Slice", dm, "strided sub-tensor (starts, ends, axes, steps; negative steps walk back)", 3, 5, 1, 1,
            {1, 2, 3, 4}, inferSlice, evalSlice}, kReindex);
  addOp(r, {"Split", dm, "cut along an axis into parts (split sizes or equal parts)", 1, 2, 1, kMaxVariadic, {1},
            inferSplit, evalSplit}, kReindex);
  addOp(r, {"Concat", dm, "join along an axis", 1, kMaxVariadic, 1, 1, {}, inferConcat, evalConcat},
        {.identityWhenUnary = true, .strings = true, .movement = MovementKind::Reindex});
  // Pad writes fill values: no movement kind, so the data-movement lowering does not take it.
  addOp(r, {"Pad", dm, "pad or crop each axis (constant, reflect, edge, wrap)", 2, 4, 1, 1, {1, 3}, inferPad, evalPad});
}

}  // namespace tessera::ops
