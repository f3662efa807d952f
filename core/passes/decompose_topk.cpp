#include "passes/decompose_topk.h"

#include "ops/broadcast.h"
#include "ops/registry.h"
#include "passes/decompose_emitter.h"

namespace tessera {

namespace {
using decompose::Emitter;

bool comparedInKernels(DType t) {
  switch (t) {
    case DType::F32: case DType::F64: case DType::F16: case DType::BF16:
    case DType::I8: case DType::I16: case DType::I32: case DType::I64:
    case DType::U8: case DType::U16: case DType::U32: case DType::U64:
      return true;
    default:
      return false;
  }
}

// x's shape with a 1 inserted before position `at`.
Shape insertOne(Shape s, int64_t at) {
  s.insert(s.begin() + at, 1);
  return s;
}

}  // namespace

std::vector<Value*> topkAsRanks(Graph& g, const Node& n) {
  for (const char* op : {"Reshape", "Greater", "Less", "Equal", "And", "Or", "Not", "IsNaN", "Cast", "ReduceSum",
                         "ReduceMax", "Where", "GatherElements"})
    if (!OpRegistry::instance().find(op)) return {};
  Value* x = n.input(0);
  const Shape& xs = x->shape();
  if (!n.output(0) || xs.empty() || !comparedInKernels(x->dtype())) return {};
  int64_t rank = int64_t(xs.size());
  int64_t axis = normalizeAxis(n.attrInt("axis", -1), rank).value_or(rank - 1);
  int64_t extent = xs[size_t(axis)], k = n.output(0)->shape()[size_t(axis)];
  if (k == 0 || extent > kTopKMaxKernelAxis) return {};
  bool largest = n.attrInt("largest", 1) != 0;
  size_t after = size_t(rank - axis - 1);  // the axes past `axis`, which the iotas broadcast over
  Emitter e(g, n);
  // Pairs [.., j, i, ..]: xj varies along j (at `axis`), xi along i (at axis + 1), so that the count over i
  // is a reduction over the last axis when `axis` is: a row reduction, contiguous.
  Value* xj = e.reshape("xj", x, insertOne(xs, axis + 1));
  Value* xi = e.reshape("xi", x, insertOne(xs, axis));
  Value* earlier = e.op("earlier", "Less", {e.iota("i", DType::I32, extent, after),
                                            e.iota("j", DType::I32, extent, after + 1)});
  Value* ahead = e.op("ahead", largest ? "Greater" : "Less", {xi, xj});
  Value* tie = e.op("tie", "Equal", {xi, xj});
  Value* before = e.op("before", "Or", {ahead, e.op("tie_earlier", "And", {tie, earlier})});
  if (isFloat(x->dtype())) {
    // NaN orders after +inf (before it with largest), as PyTorch orders it, so the ranks stay a permutation.
    // A comparison with NaN is false, so `before` is false for such a pair; it comes before when it is the NaN
    // one (the number one with largest=0) and the other is a number, or both are NaN and it is earlier. Each
    // IsNaN has one reader, so that it joins the ranks' kernel rather than being stored.
    Value* nanI = e.op("nan_i", "IsNaN", {xi});
    Value* nanJ = e.op("nan_j", "IsNaN", {xj});
    Value* first = largest ? nanI : nanJ;
    Value* second = largest ? nanJ : nanI;
    Value* otherOk = e.op("nan_other", "Or", {e.op("nan_number", "Not", {second}), earlier});
    before = e.op("before_nan", "Or", {before, e.op("nan_before", "And", {first, otherOk})});
  }
  constexpr int64_t kOnnxInt32 = 6;
  Value* counted = e.op("count", "Cast", {before}, {{"to", kOnnxInt32}});
  // ranks[.., j, 1, ..]: how many elements come before j; is_rank[.., j, r, ..]: whether that is r.
  Value* ranks = e.op("ranks", "ReduceSum", {counted, e.ints("rank_axis", {axis + 1})}, {{"keepdims", int64_t(1)}});
  Value* isRank = e.op("is_rank", "Equal", {ranks, e.iota("r", DType::I32, k, after)});
  Value* j = e.iota("jj", DType::I64, extent, after + 1);
  Value* picked = e.op("picked", "Where", {isRank, j, e.scalar("none", -1, DType::I64)});
  Value* indices = e.op("indices", "ReduceMax", {picked, e.ints("pick_axis", {axis})}, {{"keepdims", int64_t(0)}});
  Value* values = e.op("values", "GatherElements", {x, indices}, {{"axis", axis}});
  return {values, indices};
}

}  // namespace tessera
