// ScatterElements (one update per index along an axis; Scatter, its opset-9 name, is the same op), ScatterND
// (whole slices addressed by index tuples) and TensorScatter (a KV-cache write: each batch's update placed at its
// write index along an axis, wrapping in circular mode). Both copy `data` and write `updates` into it, combined by
// `reduction`: none (replace), add, mul, max, min, each applied in the output dtype, in index order.
#include <cstring>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/scatter.h"

namespace tessera {
namespace {
using namespace ops;

enum class Reduction { None, Add, Mul, Max, Min };

Reduction reductionOf(const Node& node) {
  std::string r = node.attrString("reduction", "none");
  if (r == "none") return Reduction::None;
  if (r == "add") return Reduction::Add;
  if (r == "mul") return Reduction::Mul;
  if (r == "max") return Reduction::Max;
  if (r == "min") return Reduction::Min;
  failNode(node, "attribute 'reduction' = '" + r + "' is not one of none, add, mul, max, min");
}

template <class T>
T combine(Reduction r, T old, T update) {
  switch (r) {
    case Reduction::None: return update;
    case Reduction::Add: return old + update;
    case Reduction::Mul: return old * update;
    case Reduction::Max: return old < update ? update : old;
    case Reduction::Min: return update < old ? update : old;
  }
  return update;
}

// out[to] = reduction(out[to], updates[from]): bytes for `none`, int64 for integers, double (rounded to the
// dtype at each step, as a fixed-width scatter would) for floats.
void scatterOne(Tensor& out, int64_t to, const Tensor& updates, int64_t from, Reduction r) {
  if (r == Reduction::None) {
    size_t e = dtypeSize(out.dtype());
    std::memcpy(out.mutableBytes().data() + size_t(to) * e, updates.bytes().data() + size_t(from) * e, e);
  } else if (isFloat(out.dtype())) {
    out.setDouble(to, combine(r, out.getDouble(to), updates.getDouble(from)));
  } else {
    out.setInt(to, combine(r, out.getInt(to), updates.getInt(from)));
  }
}

// Index `i`, at flat `position` of the indices (of shape `indexShape`), into an axis of `extent`: the gathers'
// words for one out of range (ops::indexOutOfRange), which a generated scatter kernel's index check gives too.
int64_t checkedIndex(const Node& node, int64_t i, int64_t extent, size_t axis, const Shape& indexShape, int64_t position) {
  if (i < -extent || i >= extent)
    failNode(node, indexOutOfRange(1, node.input(1) ? node.input(1)->name() : "", indexShape, position, i, int64_t(axis), extent));
  return i < 0 ? i + extent : i;
}

// A fresh copy (Tensor copies share their bytes; the scatter writes into its own).
Tensor copyOf(const Tensor& t) {
  Tensor out(t.dtype(), t.shape());
  if (t.byteSize()) std::memcpy(out.mutableBytes().data(), t.bytes().data(), t.byteSize());
  return out;
}

const std::initializer_list<DType> kIndexDTypes = {DType::I64, DType::I32};

void requireUpdates(InferContext& ctx, const Shape& want) {
  requireSameDType(ctx, 0, 2);
  if (ctx.input(2).shape != want)
    ctx.error("input 2 (updates) is " + ctx.input(2).toString() + "; it must have shape " + shapeToString(want));
}

// --- ScatterElements(data, indices, updates): out[c with c[axis] = indices[c]] = updates[c] ---

void inferScatterElements(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  requireDType(ctx, 1, kIndexDTypes);
  if (data.empty() || idx.size() != data.size())
    ctx.error("data " + shapeToString(data) + " and indices " + shapeToString(idx) + " must have the same rank >= 1");
  int64_t axis = normalizedAxis(ctx, ctx.node().attrInt("axis", 0), int64_t(data.size()));
  for (size_t d = 0; d < data.size(); ++d)
    if (int64_t(d) != axis && idx[d] > data[d])
      ctx.error("indices " + shapeToString(idx) + " exceed data " + shapeToString(data) + " on axis " +
                std::to_string(d));
  requireUpdates(ctx, idx);
  reductionOf(ctx.node());
  ctx.outputs[0] = ctx.input(0);
}

// Target offsets of ScatterElements: update k at c (k's coordinates) goes to c with c[axis] = indices[k].
std::vector<int64_t> elementTargets(const Node& node, const Shape& data, const Shape& shape, const std::vector<int64_t>& idx) {
  size_t axis = size_t(evalAxis(node, node.attrInt("axis", 0), int64_t(data.size())));
  std::vector<int64_t> strides = stridesOf(data), to(idx.size());
  std::vector<int64_t> c(shape.size(), 0);
  for (size_t k = 0; k < idx.size(); ++k) {
    for (size_t d = 0; d < shape.size(); ++d)
      to[k] += (d == axis ? checkedIndex(node, idx[k], data[axis], axis, shape, int64_t(k)) : c[d]) * strides[d];
    for (size_t d = shape.size(); d-- > 0;)
      if (++c[d] < shape[d]) break; else c[d] = 0;
  }
  return to;
}

std::vector<Tensor> evalScatter(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>&) {
  std::vector<int64_t> to = scatterTargets(node, in[0]->shape(), in[1]->shape(), in[1]->toInts());
  Reduction r = reductionOf(node);
  Tensor out = copyOf(*in[0]);
  for (size_t k = 0; k < to.size(); ++k) scatterOne(out, to[k], *in[2], int64_t(k), r);
  return {out};
}

// --- ScatterND(data, indices, updates): out[indices[i...]] (a slice of data.shape[k:]) = updates[i...] ---

void inferScatterND(InferContext& ctx) {
  const Shape& data = ctx.input(0).shape;
  const Shape& idx = ctx.input(1).shape;
  requireDType(ctx, 1, {DType::I64});
  if (data.empty() || idx.empty() || idx.back() > int64_t(data.size()))
    ctx.error("indices " + shapeToString(idx) + " need rank >= 1 and a last dim of at most data's rank " +
              std::to_string(data.size()));
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), data.begin() + idx.back(), data.end());
  requireUpdates(ctx, want);
  reductionOf(ctx.node());
  ctx.outputs[0] = ctx.input(0);
}

// Target offsets of ScatterND: tuple t's slice of data.shape[k:] starts where its k indices point.
std::vector<int64_t> tupleTargets(const Node& node, const Shape& data, const Shape& idxShape, const std::vector<int64_t>& idx) {
  size_t k = size_t(idxShape.back());
  std::vector<int64_t> strides = stridesOf(data), to;
  int64_t slice = numElements(Shape(data.begin() + int64_t(k), data.end()));
  int64_t tuples = k ? int64_t(idx.size() / k) : numElements(Shape(idxShape.begin(), idxShape.end() - 1));
  to.reserve(size_t(tuples * slice));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (size_t d = 0; d < k; ++d)
      base += checkedIndex(node, idx[size_t(t) * k + d], data[d], d, idxShape, t * int64_t(k) + int64_t(d)) * strides[d];
    for (int64_t e = 0; e < slice; ++e) to.push_back(base + e);
  }
  return to;
}

// --- TensorScatter(past_cache, update, write_indices? [B]) -> present_cache ---

void inferTensorScatter(InferContext& ctx) {
  const Shape& cache = ctx.input(0).shape;
  const Shape& upd = ctx.input(1).shape;
  requireSameDType(ctx, 0, 1);
  if (cache.size() < 2 || upd.size() != cache.size()) ctx.error("past_cache and update must have the same rank >= 2");
  int64_t axis = normalizedAxis(ctx, ctx.node().attrInt("axis", -2), int64_t(cache.size()));
  if (axis == 0) ctx.error("axis 0 is the batch");
  for (size_t d = 0; d < cache.size(); ++d)
    if (int64_t(d) != axis && upd[d] != cache[d])
      ctx.error("update " + ctx.input(1).toString() + " differs from past_cache " + ctx.input(0).toString() +
                " outside axis " + std::to_string(axis));
  if (ctx.hasInput(2) && ctx.input(2).shape != Shape{cache[0]}) ctx.error("write_indices must be [batch]");
  std::string mode = ctx.node().attrString("mode", "linear");
  if (mode != "linear" && mode != "circular") ctx.error("mode '" + mode + "' is not linear or circular");
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalTensorScatter(const Node& node, const std::vector<const Tensor*>& in,
                                      const std::vector<TensorType>&) {
  const Shape& cache = in[0]->shape();
  const Shape& upd = in[1]->shape();
  int64_t axis = evalAxis(node, node.attrInt("axis", -2), int64_t(cache.size()));
  bool circular = node.attrString("mode", "linear") == "circular";
  std::vector<int64_t> write = in.size() > 2 && in[2] ? in[2]->toInts() : std::vector<int64_t>(size_t(cache[0]), 0);
  Tensor out = copyOf(*in[0]);
  std::vector<int64_t> cs = stridesOf(cache), us = stridesOf(upd);
  std::vector<int64_t> c(upd.size(), 0);
  for (int64_t k = 0; k < in[1]->numElements(); ++k) {
    int64_t to = 0;
    for (size_t d = 0; d < upd.size(); ++d) {
      int64_t i = int64_t(d) == axis ? write[size_t(c[0])] + c[d] : c[d];
      if (int64_t(d) == axis && circular) i = ((i % cache[d]) + cache[d]) % cache[d];
      if (i < 0 || i >= cache[d])
        failNode(node, "write position " + std::to_string(i) + " is outside the cache's " + std::to_string(cache[d]));
      to += i * cs[d];
    }
    scatterOne(out, to, *in[1], k, Reduction::None);
    for (size_t d = upd.size(); d-- > 0;)
      if (++c[d] < upd[d]) break; else c[d] = 0;
  }
  return {out};
}

}  // namespace

namespace ops {

bool isScatterOp(const std::string& op) { return op == "ScatterElements" || op == "Scatter" || op == "ScatterND"; }

std::vector<int64_t> scatterTargets(const Node& node, const Shape& data, const Shape& indicesShape,
                                    const std::vector<int64_t>& indices) {
  if (node.op() == "ScatterND") return tupleTargets(node, data, indicesShape, indices);
  return elementTargets(node, data, indicesShape, indices);
}

}  // namespace ops

void registerScatterOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template: see README
  const char* elements = "copy data, then write updates one element per index along axis (reduction: none add mul max "
                         "min)";
  addOp(r, {"ScatterElements", other, elements, 3, 3, 1, 1, {}, inferScatterElements, evalScatter});
  addOp(r, {"Scatter", other, std::string("opset-9 name of ScatterElements: ") + elements, 3, 3, 1, 1, {},
            inferScatterElements, evalScatter});
  addOp(r, {"ScatterND", other, "copy data, then write updates as slices addressed by index tuples (reduction)", 3, 3,
            1, 1, {}, inferScatterND, evalScatter});
  addOp(r, {"TensorScatter", other, "write each batch's update into the cache at its write index along axis", 2, 3, 1,
            1, {}, inferTensorScatter, evalTensorScatter});
}

}  // namespace tessera
