// Sequence ops: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
// SplitToSequence, ConcatFromSequence. A sequence's length and its elements' shapes are data, not type
// (ir/shape.h), so the ops that take a tensor out of one (SequenceAt, ConcatFromSequence) need its value to type
// their output: a constant (folded, or a loop body specialized to its iteration's values), or else the values of
// the sample inputs the node is specialized on (ops/specialize.h). All run on the host (category Other).
#include <cstring>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/sequence_support.h"
#include "ops/specialize.h"

namespace tessera {
namespace {
using namespace ops;

// A sequence position (an integer scalar, ONNX's -n..n-1, or -n..n where `end` may be named) as an index.
int64_t sequencePosition(const Node& node, const Tensor& position, int64_t n, bool endAllowed) {
  if (!isInteger(position.dtype()) || position.numElements() != 1)
    failNode(node, "position must be one integer, not " + position.type().toString());
  int64_t p = position.getInt(0);
  int64_t hi = endAllowed ? n : n - 1;
  if (p < -n || p > hi)
    failNode(node, "position " + std::to_string(p) + " is out of range for a sequence of " + std::to_string(n) +
                       " elements (" + std::to_string(-n) + ".." + std::to_string(hi) + " are valid)");
  return p < 0 ? p + n : p;
}

void requirePositionType(const InferContext& ctx, size_t i) {
  if (!ctx.hasInput(i)) return;
  const TensorType& t = ctx.input(i);
  // ONNX says a scalar; its own tests also pass a one-element 1-D tensor
  if ((t.dtype != DType::I32 && t.dtype != DType::I64) || t.shape.size() > 1 || t.numElements() != 1)
    ctx.error("input " + std::to_string(i) + " (position) must be one i32 or i64, not " + t.toString());
}

// ---- SequenceEmpty, SequenceConstruct, SequenceLength ----

void inferSequenceEmpty(InferContext& ctx) {
  std::optional<DType> dtype = dtypeFromOnnxCode(ctx.node().attrInt("dtype", 1));
  if (!dtype) ctx.error("attribute 'dtype' = " + std::to_string(ctx.node().attrInt("dtype", 1)) + " is not a Tessera dtype");
  ctx.outputs[0] = TensorType::container(ValueKind::Sequence, *dtype);
}

void inferSequenceConstruct(InferContext& ctx) {
  for (size_t i = 1; i < ctx.numInputs(); ++i) requireSameDType(ctx, 0, i);
  ctx.outputs[0] = TensorType::container(ValueKind::Sequence, ctx.input(0).dtype);
}

void inferSequenceLength(InferContext& ctx) {
  requireSequence(ctx, 0);
  ctx.outputs[0] = {DType::I64, {}};
}

// ---- SequenceInsert, SequenceErase, SequenceAt ----

void inferSequenceInsert(InferContext& ctx) {
  const TensorType& seq = requireSequence(ctx, 0);
  if (ctx.input(1).dtype != seq.dtype)
    ctx.error("input 1 is " + ctx.input(1).toString() + " but the sequence holds " + std::string(dtypeName(seq.dtype)));
  requirePositionType(ctx, 2);
  ctx.outputs[0] = seq;
}

std::vector<Tensor> evalSequenceInsert(const Node& node, const std::vector<const Tensor*>& in,
                                       const std::vector<TensorType>&) {
  std::vector<Tensor> elements = in[0]->elements();
  int64_t n = int64_t(elements.size());
  int64_t at = in.size() > 2 && in[2] ? sequencePosition(node, *in[2], n, true) : n;
  elements.insert(elements.begin() + at, *in[1]);
  return {Tensor::sequence(in[0]->dtype(), std::move(elements))};
}

void inferSequenceErase(InferContext& ctx) {
  ctx.outputs[0] = requireSequence(ctx, 0);
  requirePositionType(ctx, 1);
}

std::vector<Tensor> evalSequenceErase(const Node& node, const std::vector<const Tensor*>& in,
                                      const std::vector<TensorType>&) {
  std::vector<Tensor> elements = in[0]->elements();
  int64_t n = int64_t(elements.size());
  if (n == 0) failNode(node, "cannot erase from an empty sequence");
  int64_t at = in.size() > 1 && in[1] ? sequencePosition(node, *in[1], n, false) : n - 1;
  elements.erase(elements.begin() + at);
  return {Tensor::sequence(in[0]->dtype(), std::move(elements))};
}

void inferSequenceAt(InferContext& ctx) {
  requireSequence(ctx, 0);
  requirePositionType(ctx, 1);
  const Tensor& seq = ctx.requireConstant(0, "input_sequence");
  const Tensor& position = ctx.requireConstant(1, "position");
  int64_t at = sequencePosition(ctx.node(), position, int64_t(seq.elements().size()), false);
  ctx.outputs[0] = seq.elements()[size_t(at)].type();
}

std::vector<Tensor> evalSequenceAt(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>&) {
  const std::vector<Tensor>& elements = in[0]->elements();
  return {elements[size_t(sequencePosition(node, *in[1], int64_t(elements.size()), false))]};
}

// ---- SplitToSequence, ConcatFromSequence ----

void inferSplitToSequence(InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.shape.empty()) ctx.error("input 0 must have rank >= 1");
  normalizedAxis(ctx, ctx.node().attrInt("axis", 0), int64_t(x.shape.size()));
  if (ctx.hasInput(1)) {
    requireDType(ctx, 1, {DType::I32, DType::I64});
    if (ctx.input(1).shape.size() > 1) ctx.error("input 1 (split) must be a scalar or 1-D, not " + ctx.input(1).toString());
  }
  ctx.outputs[0] = TensorType::container(ValueKind::Sequence, x.dtype);
}

// The extents of the pieces along the axis: split absent (pieces of 1), a scalar (pieces of it, the last
// smaller) or a list (summing to the extent).
std::vector<int64_t> splitLengths(const Node& node, const Tensor* split, int64_t extent) {
  if (!split) return std::vector<int64_t>(size_t(extent), 1);
  std::vector<int64_t> sizes = split->toInts();
  if (split->shape().empty()) {
    int64_t piece = sizes[0];
    if (piece <= 0) failNode(node, "split = " + std::to_string(piece) + " must be positive");
    std::vector<int64_t> out(size_t(extent / piece), piece);
    if (extent % piece) out.push_back(extent % piece);
    return out;
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) failNode(node, "split " + intsToString(sizes) + " has a negative length");
    total += s;
  }
  if (total != extent)
    failNode(node, "split " + intsToString(sizes) + " sums to " + std::to_string(total) + ", not the axis extent " +
                       std::to_string(extent));
  return sizes;
}

std::vector<Tensor> evalSplitToSequence(const Node& node, const std::vector<const Tensor*>& in,
                                        const std::vector<TensorType>&) {
  const Tensor& x = *in[0];
  int64_t axis = evalAxis(node, node.attrInt("axis", 0), int64_t(x.shape().size()));
  const Tensor* split = in.size() > 1 ? in[1] : nullptr;
  bool squeeze = !split && node.attrInt("keepdims", 1) == 0;
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t length : splitLengths(node, split, x.shape()[size_t(axis)])) {
    Tensor piece = sliceAlong(x, axis, start, length);
    start += length;
    if (squeeze) {
      Shape s = piece.shape();
      s.erase(s.begin() + axis);
      piece = piece.reshaped(s);
    }
    pieces.push_back(std::move(piece));
  }
  return {Tensor::sequence(x.dtype(), std::move(pieces))};
}

// The output type of ConcatFromSequence over `elements`: equal shapes but along the axis (stacked along a new
// axis when new_axis, which needs equal shapes).
TensorType concatType(const Node& node, DType dtype, const std::vector<Tensor>& elements) {
  if (elements.empty()) failNode(node, "cannot concatenate an empty sequence");
  bool newAxis = node.attrInt("new_axis", 0) != 0;
  Shape first = elements[0].shape();
  int64_t rank = int64_t(first.size()) + (newAxis ? 1 : 0);
  int64_t axis = evalAxis(node, node.attrInt("axis", 0), rank);
  if (newAxis) first.insert(first.begin() + axis, 1);
  Shape out = first;
  out[size_t(axis)] = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    Shape s = elements[i].shape();
    if (newAxis) s.insert(s.begin() + axis, 1);
    Shape a = s, b = first;
    a[size_t(axis)] = b[size_t(axis)] = 0;
    if (s.size() != first.size() || a != b)
      failNode(node, "element " + std::to_string(i) + " is " + elements[i].type().toString() + " but element 0 is " +
                         elements[0].type().toString() + (newAxis ? "; stacking needs equal shapes" : ""));
    out[size_t(axis)] += s[size_t(axis)];
  }
  return {dtype, out};
}

void inferConcatFromSequence(InferContext& ctx) {
  const TensorType& seq = requireSequence(ctx, 0);
  const Tensor& value = ctx.requireConstant(0, "input_sequence");
  ctx.outputs[0] = concatType(ctx.node(), seq.dtype, value.elements());
}

std::vector<Tensor> evalConcatFromSequence(const Node& node, const std::vector<const Tensor*>& in,
                                           const std::vector<TensorType>& types) {
  const std::vector<Tensor>& elements = in[0]->elements();
  TensorType type = concatType(node, in[0]->dtype(), elements);
  if (type != types[0]) failNode(node, specializedMismatch(node, 0, type));
  int64_t axis = evalAxis(node, node.attrInt("axis", 0), int64_t(type.shape.size()));
  AxisSplit out = splitAtAxis(type.shape, axis);
  Tensor y(type.dtype, type.shape);
  size_t esize = dtypeSize(type.dtype);
  int64_t offset = 0;  // along the axis
  for (const Tensor& e : elements) {
    int64_t run = e.numElements() / std::max<int64_t>(out.outer, 1);  // this element's extent × inner
    for (int64_t o = 0; o < out.outer && run > 0; ++o)
      std::memcpy(y.mutableBytes().data() + size_t((o * out.extent + offset) * out.inner) * esize,
                  e.bytes().data() + size_t(o * run) * esize, size_t(run) * esize);
    offset += run / std::max<int64_t>(out.inner, 1);
  }
  return {y};
}

std::vector<Tensor> evalSequenceEmpty(const Node&, const std::vector<const Tensor*>&, const std::vector<TensorType>& types) {
  return {Tensor::sequence(types[0].dtype, {})};
}

std::vector<Tensor> evalSequenceConstruct(const Node&, const std::vector<const Tensor*>& in,
                                          const std::vector<TensorType>& types) {
  std::vector<Tensor> elements;
  for (const Tensor* t : in) elements.push_back(*t);
  return {Tensor::sequence(types[0].dtype, std::move(elements))};
}

std::vector<Tensor> evalSequenceLength(const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
  return {Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{int64_t(in[0]->elements().size())})};
}

}  // namespace

namespace ops {
const TensorType& requireSequence(const InferContext& ctx, size_t i) {
  const TensorType& t = ctx.input(i);
  if (t.kind != ValueKind::Sequence) ctx.error("input " + std::to_string(i) + " is a " + t.toString() + ", not a sequence");
  return t;
}

Tensor sliceAlong(const Tensor& x, int64_t axis, int64_t start, int64_t length) {
  TensorType type = x.type();
  type.shape[size_t(axis)] = length;
  std::vector<int64_t> strides = stridesOf(x.shape());
  return stridedCopy(x, type, strides, start * strides[size_t(axis)]);
}
}  // namespace ops

void registerSequenceOps(OpRegistry& r) {
  const OpTraits containers{.containers = true};
  addOp(r, {"SequenceEmpty", OpCategory::Other, "an empty sequence of attribute dtype", 0, 0, 1, 1, {},
            inferSequenceEmpty, evalSequenceEmpty}, containers);
  addOp(r, {"SequenceConstruct", OpCategory::Other, "a sequence of the inputs", 1, kMaxVariadic, 1, 1, {},
            inferSequenceConstruct, evalSequenceConstruct}, containers);
  addOp(r, {"SequenceLength", OpCategory::Other, "the number of tensors in a sequence", 1, 1, 1, 1, {},
            inferSequenceLength, evalSequenceLength}, containers);
  addOp(r, {"SequenceInsert", OpCategory::Other, "the sequence with a tensor inserted at position (default: the end)",
            2, 3, 1, 1, {}, inferSequenceInsert, evalSequenceInsert}, containers);
  addOp(r, {"SequenceErase", OpCategory::Other, "the sequence without the tensor at position (default: the last)",
            1, 2, 1, 1, {}, inferSequenceErase, evalSequenceErase}, containers);
  addOp(r, {"SequenceAt", OpCategory::Other, "the tensor at position in a sequence", 2, 2, 1, 1, {1},
            inferSequenceAt, evalSequenceAt}, containers);
  addOp(r, {"SplitToSequence", OpCategory::Other, "a tensor split along axis into a sequence", 1, 2, 1, 1, {},
            inferSplitToSequence, evalSplitToSequence}, containers);
  addOp(r, {"ConcatFromSequence", OpCategory::Other, "a sequence's tensors concatenated (or stacked) along axis", 1, 1,
            1, 1, {}, inferConcatFromSequence, evalConcatFromSequence}, containers);
  ops::registerSequenceMapOp(r);
  ops::registerOptionalOps(r);
}

}  // namespace tessera
