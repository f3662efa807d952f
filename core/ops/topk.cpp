// TopK: the k largest (or smallest) elements along an axis and their indices, sorted, ties broken by the lower
// index (as ONNX specifies), NaN ordered after +inf. K is a shape input: the output extent along the axis is its
// value.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

int64_t topkCount(const InferContext& ctx) {
  std::vector<int64_t> k = constantInts(ctx, 1, "K");
  if (k.size() != 1) ctx.error("input 1 (K) must hold one value, not " + intsToString(k));
  return k[0];
}

void inferTopK(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Numeric);
  const Shape& x = ctx.input(0).shape;
  if (x.empty()) ctx.error("input 0 must have rank >= 1");
  int64_t axis = normalizedAxis(ctx, ctx.node().attrInt("axis", -1), int64_t(x.size()));
  int64_t k = topkCount(ctx);
  if (k < 0 || k > x[size_t(axis)])
    ctx.error("K = " + std::to_string(k) + " is out of range for axis " + std::to_string(axis) + " of extent " +
              std::to_string(x[size_t(axis)]));
  Shape out = x;
  out[size_t(axis)] = k;
  ctx.outputs[0] = {ctx.input(0).dtype, out};
  ctx.outputs[1] = {DType::I64, out};
}

std::vector<Tensor> evalTopK(const Node& node, const std::vector<const Tensor*>& in,
                             const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  int64_t axis = evalAxis(node, node.attrInt("axis", -1), int64_t(x.shape().size()));
  bool largest = node.attrInt("largest", 1) != 0;
  AxisSplit sp = splitAtAxis(x.shape(), axis);
  int64_t k = types[0].shape[size_t(axis)];
  std::vector<double> v = x.toDoubles();
  std::vector<int64_t> ints = isInteger(x.dtype()) ? x.toInts() : std::vector<int64_t>{};
  // Integers compare as int64 (doubles lose precision above 2^53); floats as doubles, NaN after +inf (first with
  // largest), as PyTorch orders it: a strict weak order, which stable_sort needs.
  auto before = [&](int64_t a, int64_t b) {
    if (!ints.empty()) return largest ? ints[size_t(a)] > ints[size_t(b)] : ints[size_t(a)] < ints[size_t(b)];
    double va = v[size_t(a)], vb = v[size_t(b)];
    if (std::isnan(va) || std::isnan(vb)) return largest ? !std::isnan(vb) : !std::isnan(va);
    return largest ? va > vb : va < vb;
  };
  Tensor values(types[0].dtype, types[0].shape), indices(DType::I64, types[1].shape);
  size_t esize = dtypeSize(x.dtype());
  std::vector<int64_t> order(size_t(sp.extent));
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      auto at = [&](int64_t a) { return (o * sp.extent + a) * sp.inner + i; };
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return before(at(a), at(b)); });
      for (int64_t j = 0; j < k; ++j) {
        int64_t to = (o * k + j) * sp.inner + i;
        std::copy_n(x.bytes().data() + size_t(at(order[size_t(j)])) * esize, esize,
                    values.mutableBytes().data() + size_t(to) * esize);
        indices.setInt(to, order[size_t(j)]);
      }
    }
  return {values, indices};
}

}  // namespace

void registerTopKOps(OpRegistry& r) {
  addOp(r, {"TopK", OpCategory::Other, "the K largest (largest=1) or smallest elements along axis, with indices", 2, 2,
            2, 2, {1}, inferTopK, evalTopK});
}

}  // namespace tessera
