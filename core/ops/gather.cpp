// Gather (whole slices picked by index along an axis) and GatherElements (one element per index).
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

}  // namespace

void registerGatherOps(OpRegistry& r) {
  auto dm = OpCategory::DataMovement;
  addOp(r, {"Gather", dm, "pick slices along an axis by index (negative indices count from the end)", 2, 2, 1, 1, {},
            inferGather, evalGather});
  addOp(r, {"GatherElements", dm, "pick one element per index along an axis", 2, 2, 1, 1, {}, inferGatherElements,
            evalGatherElements});
}

}  // namespace tessera::ops
