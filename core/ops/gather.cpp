// Gather (whole slices picked by index along an axis), GatherElements (one element per index) and GatherND
// (slices addressed by index tuples, after batch_dims shared leading dims).
#include <algorithm>
#include <cstring>

#include "ops/broadcast.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/shape_parts.h"

namespace tessera::ops {
namespace {

int64_t gatherAxis(const Node& node, int64_t rank) {
  int64_t axis = node.attrInt("axis", 0);
  auto n = normalizeAxis(axis, rank);
  if (!n) failNode(node, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return *n;
}

// Index values (input 1) checked against [-extent, extent) and made non-negative; the first bad one in
// row-major order is the error (generated kernels say the same through indexOutOfRange).
std::vector<int64_t> checkedIndices(const Node& node, const Tensor& indices, int64_t axis, int64_t extent) {
  std::vector<int64_t> v = indices.toInts();
  for (size_t k = 0; k < v.size(); ++k) {
    int64_t& i = v[k];
    if (i < -extent || i >= extent)
      failNode(node, indexOutOfRange(1, node.input(1)->name(), indices.shape(), int64_t(k), i, axis, extent));
    if (i < 0) i += extent;
  }
  return v;
}

const std::initializer_list<DType> kIndexDTypes = {DType::I64, DType::I32, DType::I16, DType::I8, DType::U8};

// --- Gather: out = data[:axis] + indices.shape + data[axis+1:] ---

void inferGather(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  requireDType(ctx, 1, kIndexDTypes);
  if (data.empty()) ctx.error("input 0 (data) is a scalar; Gather needs rank >= 1");
  int64_t axis = gatherAxis(ctx.node(), int64_t(data.size()));
  Shape out(data.begin(), data.begin() + axis);
  const Shape& idx = ctx.input(1).shape;
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalGather(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  const Shape& data = in[0]->shape();
  int64_t axis = gatherAxis(node, int64_t(data.size())), extent = data[size_t(axis)];
  std::vector<int64_t> idx = checkedIndices(node, *in[1], axis, extent);
  int64_t outer = numElements(Shape(data.begin(), data.begin() + axis));
  if (in[0]->holdsStrings()) {  // strings: the same blocks, element by element
    const int64_t block = numElements(Shape(data.begin() + axis + 1, data.end()));
    std::vector<std::string> picked;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i : idx) {
        const auto first = in[0]->strings().begin() + (o * extent + i) * block;
        picked.insert(picked.end(), first, first + block);
      }
    return {Tensor::strings(types[0].shape, std::move(picked))};
  }
  size_t block = size_t(numElements(Shape(data.begin() + axis + 1, data.end()))) * dtypeSize(types[0].dtype);
  Tensor out(types[0].dtype, types[0].shape);
  if (out.numElements() == 0) return {out};
  std::byte* dst = out.mutableBytes().data();
  const std::byte* src = in[0]->bytes().data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      std::memcpy(dst, src + (size_t(o * extent + i)) * block, block);
      dst += block;
    }
  return {out};
}

// --- GatherElements: out[c] = data[c with c[axis] = indices[c]] ---

void inferGatherElements(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  requireDType(ctx, 1, kIndexDTypes);
  if (data.empty() || idx.size() != data.size())
    ctx.error("data " + shapeToString(data) + " and indices " + shapeToString(idx) + " must have the same rank >= 1");
  int64_t axis = gatherAxis(ctx.node(), int64_t(data.size()));
  for (size_t d = 0; d < data.size(); ++d)
    if (int64_t(d) != axis && idx[d] > data[d])
      ctx.error("indices " + shapeToString(idx) + " exceed data " + shapeToString(data) + " on axis " +
                std::to_string(d));
  ctx.outputs[0] = {ctx.input(0).dtype, idx};
}

std::vector<Tensor> evalGatherElements(const Node& node, const std::vector<const Tensor*>& in,
                                       const std::vector<TensorType>& types) {
  const Shape& data = in[0]->shape();
  const Shape& shape = types[0].shape;
  size_t axis = size_t(gatherAxis(node, int64_t(data.size()))), esize = dtypeSize(types[0].dtype);
  std::vector<int64_t> idx = checkedIndices(node, *in[1], int64_t(axis), data[axis]), strides = stridesOf(data);
  Tensor out(types[0].dtype, shape);
  std::byte* dst = out.mutableBytes().data();
  const std::byte* src = in[0]->bytes().data();
  std::vector<int64_t> c(shape.size(), 0);
  for (size_t k = 0; k < idx.size(); ++k, dst += esize) {
    int64_t from = 0;
    for (size_t d = 0; d < shape.size(); ++d) from += (d == axis ? idx[k] : c[d]) * strides[d];
    std::memcpy(dst, src + size_t(from) * esize, esize);
    for (size_t d = shape.size(); d-- > 0;)
      if (++c[d] < shape[d]) break; else c[d] = 0;
  }
  return {out};
}

// --- GatherND: out[b..., i...] = data[b..., indices[b..., i..., :]] (a slice of data's dims after the tuple) ---

struct GatherNDShapes {
  int64_t batchDims, tupleSize;
  Shape out;
};

GatherNDShapes gatherNDShapes(const Node& node, const Shape& data, const Shape& idx) {
  int64_t b = node.attrInt("batch_dims", 0);
  if (idx.empty() || b < 0 || b >= int64_t(idx.size()) || b >= int64_t(data.size()))
    failNode(node, "batch_dims " + std::to_string(b) + " must be below the ranks of data " + shapeToString(data) +
                       " and indices " + shapeToString(idx));
  int64_t m = idx.back();
  if (m < 1 || b + m > int64_t(data.size()))
    failNode(node, "indices' last dim " + std::to_string(m) + " plus batch_dims must be in [1, rank of data " +
                       shapeToString(data) + "]");
  for (size_t d = 0; d < size_t(b); ++d)
    if (idx[d] != data[d])
      failNode(node, "batch dim " + std::to_string(d) + " differs: data " + shapeToString(data) + ", indices " +
                         shapeToString(idx));
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + m, data.end());
  return {b, m, out};
}

void inferGatherND(InferContext& ctx) {
  requireDType(ctx, 1, {DType::I64});
  GatherNDShapes s = gatherNDShapes(ctx.node(), ctx.input(0).shape, ctx.input(1).shape);
  ctx.outputs[0] = {ctx.input(0).dtype, s.out};
}

std::vector<Tensor> evalGatherND(const Node& node, const std::vector<const Tensor*>& in,
                                 const std::vector<TensorType>& types) {
  const Shape& data = in[0]->shape();
  GatherNDShapes s = gatherNDShapes(node, data, in[1]->shape());
  std::vector<int64_t> idx = in[1]->toInts(), strides = stridesOf(data);
  size_t b = size_t(s.batchDims), m = size_t(s.tupleSize), esize = dtypeSize(types[0].dtype);
  int64_t batches = numElements(Shape(data.begin(), data.begin() + int64_t(b)));
  int64_t tuples = int64_t(idx.size() / m), perBatch = batches ? tuples / batches : 0;
  int64_t slice = numElements(Shape(data.begin() + int64_t(b + m), data.end()));
  Tensor out(types[0].dtype, types[0].shape);
  std::byte* dst = out.mutableBytes().data();
  const std::byte* src = in[0]->bytes().data();
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t from = (t / std::max<int64_t>(perBatch, 1)) * (b ? strides[b - 1] : 0);
    for (size_t d = 0; d < m; ++d) {
      int64_t extent = data[b + d], i = idx[size_t(t) * m + d];
      if (i < -extent || i >= extent)  // the first in row-major order, as a generated kernel reports it
        failNode(node, indexOutOfRange(1, node.input(1)->name(), in[1]->shape(), t * int64_t(m) + int64_t(d), i,
                                       int64_t(b + d), extent));
      from += (i < 0 ? i + extent : i) * strides[b + d];
    }
    std::memcpy(dst + size_t(t * slice) * esize, src + size_t(from) * esize, size_t(slice) * esize);
  }
  return {out};
}

}  // namespace

void registerGatherOps(OpRegistry& r) {
  auto dm = OpCategory::DataMovement;
  const OpTraits kReindex{.movement = MovementKind::Reindex};
  addOp(r, {"Gather", dm, "pick slices along an axis by index (negative indices count from the end)", 2, 2, 1, 1, {},
            inferGather, evalGather}, {.strings = true, .movement = MovementKind::Reindex});
  addOp(r, {"GatherElements", dm, "pick one element per index along an axis", 2, 2, 1, 1, {}, inferGatherElements,
            evalGatherElements}, kReindex);
  addOp(r, {"GatherND", dm, "pick slices addressed by index tuples (after batch_dims leading dims)", 2, 2, 1, 1, {},
            inferGatherND, evalGatherND}, kReindex);
}

}  // namespace tessera::ops
