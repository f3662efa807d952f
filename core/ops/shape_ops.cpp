// Reshaping and layout ops: Reshape Flatten Squeeze Unsqueeze (same bytes, new shape), Transpose Expand Tile
// (strided copies). Slicing and gathering live in slice_ops.cpp and gather.cpp.
#include <algorithm>

#include "ops/broadcast.h"
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/shape_parts.h"

namespace tessera {
namespace ops {
namespace {

// Ops whose output is the input's bytes under the inferred shape.
std::vector<Tensor> evalSameBytes(const Node&, const std::vector<const Tensor*>& in,
                                  const std::vector<TensorType>& types) {
  return {in[0]->reshaped(types[0].shape)};
}

// Axes normalized to [0, rank), rejecting out-of-range and repeated axes.
std::vector<int64_t> normalizedAxes(const InferContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    auto n = normalizeAxis(a, rank);
    if (!n) ctx.error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (std::find(out.begin(), out.end(), *n) != out.end())
      ctx.error("axis " + std::to_string(a) + " is repeated in " + intsToString(axes));
    out.push_back(*n);
  }
  return out;
}

// --- Reshape ---

void inferReshape(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  std::vector<int64_t> target = constantInts(ctx, 1, "shape");
  bool allowZero = ctx.node().attrInt("allowzero", 0) != 0;
  Shape out;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t v = target[i];
    if (v == -1) {
      if (inferred >= 0) ctx.error("shape " + intsToString(target) + " has more than one -1");
      inferred = int64_t(i);
      out.push_back(1);
      continue;
    }
    if (v < -1) ctx.error("shape " + intsToString(target) + " has a negative extent");
    if (v == 0 && !allowZero) {
      if (i >= in.size())
        ctx.error("shape " + intsToString(target) + " copies dimension " + std::to_string(i) + " (0) but the input " +
                  shapeToString(in) + " has rank " + std::to_string(in.size()));
      v = in[i];
    }
    out.push_back(v);
    known = numElements({known, v});
  }
  int64_t total = numElements(in);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      ctx.error("cannot infer the -1 in shape " + intsToString(target) + " for input " + shapeToString(in));
    out[size_t(inferred)] = total / known;
  } else if (known != total) {
    ctx.error("cannot reshape " + shapeToString(in) + " (" + std::to_string(total) + " elements) to " +
              shapeToString(out));
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

// --- Flatten ---

void inferFlatten(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  int64_t rank = int64_t(in.size()), axis = ctx.node().attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    ctx.error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  Shape outer(in.begin(), in.begin() + axis), inner(in.begin() + axis, in.end());
  ctx.outputs[0] = {ctx.input(0).dtype, {numElements(outer), numElements(inner)}};
}

// --- Squeeze / Unsqueeze ---

void inferSqueeze(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  Shape out;
  if (!ctx.hasInput(1)) {
    for (int64_t d : in)
      if (d != 1) out.push_back(d);
  } else {
    std::vector<int64_t> axes = normalizedAxes(ctx, constantInts(ctx, 1, "axes"), int64_t(in.size()));
    for (int64_t a : axes)
      if (in[size_t(a)] != 1)
        ctx.error("cannot squeeze axis " + std::to_string(a) + " of " + shapeToString(in) + ": its extent is not 1");
    for (size_t i = 0; i < in.size(); ++i)
      if (std::find(axes.begin(), axes.end(), int64_t(i)) == axes.end()) out.push_back(in[i]);
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

void inferUnsqueeze(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  std::vector<int64_t> raw = constantInts(ctx, 1, "axes");
  int64_t rank = int64_t(in.size() + raw.size());
  std::vector<int64_t> axes = normalizedAxes(ctx, raw, rank);
  Shape out;
  auto next = in.begin();
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(std::find(axes.begin(), axes.end(), i) != axes.end() ? 1 : *next++);
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

// --- Transpose ---

std::vector<int64_t> permutation(const Node& node, size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = int64_t(rank - 1 - i);
  perm = node.attrInts("perm", perm);
  std::vector<bool> seen(rank, false);
  bool valid = perm.size() == rank;
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < int64_t(rank) && !seen[size_t(p)];
    if (valid) seen[size_t(p)] = true;
  }
  if (!valid)
    failNode(node, "attribute perm " + intsToString(perm) + " is not a permutation of " + std::to_string(rank) +
                       " axes");
  return perm;
}

void inferTranspose(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  std::vector<int64_t> perm = permutation(ctx.node(), in.size());
  Shape out;
  for (int64_t p : perm) out.push_back(in[size_t(p)]);
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalTranspose(const Node& node, const std::vector<const Tensor*>& in,
                                  const std::vector<TensorType>& types) {
  std::vector<int64_t> perm = permutation(node, in[0]->shape().size());
  std::vector<int64_t> inStrides = stridesOf(in[0]->shape()), strides;
  for (int64_t p : perm) strides.push_back(inStrides[size_t(p)]);
  return {stridedCopy(*in[0], types[0], strides, 0)};
}

// --- Expand ---

void inferExpand(InferContext& ctx) {
  std::vector<int64_t> shape = constantInts(ctx, 1, "shape");
  for (int64_t d : shape)
    if (d < 0) ctx.error("shape " + intsToString(shape) + " has a negative extent");
  auto out = broadcastShapes({ctx.input(0).shape, shape});
  if (!out) ctx.error("input " + shapeToString(ctx.input(0).shape) + " does not broadcast to " + intsToString(shape));
  ctx.outputs[0] = {ctx.input(0).dtype, *out};
}

// Input strides aligned to the right of `out`, zero where the input broadcasts.
std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0), s = stridesOf(in);
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) strides[offset + i] = in[i] == 1 ? 0 : s[i];
  return strides;
}

std::vector<Tensor> evalExpand(const Node&, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  return {stridedCopy(*in[0], types[0], broadcastStrides(in[0]->shape(), types[0].shape), 0)};
}

// --- Tile ---

void inferTile(InferContext& ctx) {
  const Shape& in = ctx.input(0).shape;
  std::vector<int64_t> repeats = constantInts(ctx, 1, "repeats");
  if (repeats.size() != in.size())
    ctx.error("repeats " + intsToString(repeats) + " must have one value per axis of " + shapeToString(in));
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (repeats[i] < 0) ctx.error("repeats " + intsToString(repeats) + " has a negative value");
    out.push_back(numElements({in[i], repeats[i]}));
  }
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

// The output seen as [r0, d0, r1, d1, ...]: each repeat axis has stride 0 into the input.
std::vector<Tensor> evalTile(const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  const Shape& shape = in[0]->shape();
  std::vector<int64_t> s = stridesOf(shape), strides;
  Shape split;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t repeats = shape[i] ? types[0].shape[i] / shape[i] : 0;
    split.insert(split.end(), {repeats, shape[i]});
    strides.insert(strides.end(), {0, s[i]});
  }
  return {stridedCopy(*in[0], {types[0].dtype, split}, strides, 0).reshaped(types[0].shape)};
}

}  // namespace
}  // namespace ops

void registerShapeOps(OpRegistry& r) {
  using namespace ops;
  auto dm = OpCategory::DataMovement;
  // Data movement moves strings too (ops/op_support.h stridedCopy; Reshape's kind shares them).
  const OpTraits kView{.strings = true, .movement = MovementKind::View};
  const OpTraits kReindex{.strings = true, .movement = MovementKind::Reindex};
  const OpTraits kReindexOrCopy{.identityWhenTypeKept = true, .strings = true, .movement = MovementKind::Reindex};
  addOp(r, {"Reshape", dm, "same elements under a new shape (0 copies a dimension, -1 is inferred)", 2, 2, 1, 1, {1},
            inferReshape, evalSameBytes}, kView);
  addOp(r, {"Flatten", dm, "reshape to 2-D around an axis", 1, 1, 1, 1, {}, inferFlatten, evalSameBytes}, kView);
  addOp(r, {"Squeeze", dm, "remove extent-1 axes (all of them when no axes are given)", 1, 2, 1, 1, {1}, inferSqueeze,
            evalSameBytes}, kView);
  addOp(r, {"Unsqueeze", dm, "insert extent-1 axes", 2, 2, 1, 1, {1}, inferUnsqueeze, evalSameBytes}, kView);
  addOp(r, {"Transpose", dm, "permute axes (reversed by default)", 1, 1, 1, 1, {}, inferTranspose, evalTranspose},
        kReindex);
  addOp(r, {"Expand", dm, "broadcast to a shape (numpy rules, both directions)", 2, 2, 1, 1, {1}, inferExpand,
            evalExpand}, kReindexOrCopy);
  addOp(r, {"Tile", dm, "repeat the tensor along each axis", 2, 2, 1, 1, {1}, inferTile, evalTile}, kReindexOrCopy);
  registerSliceOps(r);
  registerGatherOps(r);
}

}  // namespace tessera
