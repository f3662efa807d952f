// Trilu (keep the upper or lower triangle of the last two dims), CumSum and CumProd (running sums and products
// along an axis). All keep their input's shape and dtype; integer scans wrap in int64 (stored back at the dtype's
// width), float scans accumulate in double and round once.
#include <cstring>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

// A scalar operand given as a 0-D or one-element 1-D integer tensor (Trilu's k, CumSum's axis).
int64_t scalarOperand(const Node& node, const Tensor& t, size_t i, const std::string& what) {
  if (!isInteger(t.dtype()) || t.numElements() != 1 || t.shape().size() > 1)
    failNode(node, "input " + std::to_string(i) + " (" + what + ") must be one integer, not " + t.type().toString());
  return t.getInt(0);
}

void requireScalarOperand(const InferContext& ctx, size_t i, const std::string& what) {
  if (!ctx.hasInput(i)) return;
  const TensorType& t = ctx.input(i);
  if (!isInteger(t.dtype) || t.numElements() != 1 || t.shape.size() > 1)
    ctx.error("input " + std::to_string(i) + " (" + what + ") must be one integer, not " + t.toString());
}

// --- Trilu(input, k?) keeps (row i, column j) where j - i >= k (upper) or j - i <= k (lower) ---

void inferTrilu(InferContext& ctx) {
  if (ctx.input(0).shape.size() < 2) ctx.error("input 0 must have rank >= 2, not " + ctx.input(0).toString());
  requireScalarOperand(ctx, 1, "k");
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalTrilu(const Node& node, const std::vector<const Tensor*>& in,
                              const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  int64_t k = in.size() > 1 && in[1] ? scalarOperand(node, *in[1], 1, "k") : 0;
  bool upper = node.attrInt("upper", 1) != 0;
  const Shape& s = x.shape();
  int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  size_t esize = dtypeSize(x.dtype());
  Tensor out(types[0].dtype, types[0].shape);  // zero-filled
  if (out.numElements() == 0) return {out};
  const std::byte* src = x.bytes().data();
  std::byte* dst = out.mutableBytes().data();
  for (int64_t m = 0; m < x.numElements() / (rows * cols); ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool keep = upper ? j - i >= k : j - i <= k;
        size_t at = size_t((m * rows + i) * cols + j) * esize;
        if (keep) std::memcpy(dst + at, src + at, esize);
      }
  return {out};
}

// --- CumSum / CumProd(x, axis): y[..., i, ...] = sum (product) of x[..., j, ...] for j up to i (exclusive:
// below i; reverse: from the end) ---

void inferCumSum(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Numeric);
  requireScalarOperand(ctx, 1, "axis");
  if (ctx.input(0).shape.empty()) ctx.error("input 0 must have rank >= 1");
  if (const Tensor* a = ctx.constantInput(1))
    normalizedAxis(ctx, scalarOperand(ctx.node(), *a, 1, "axis"), int64_t(ctx.input(0).shape.size()));
  ctx.outputs[0] = ctx.input(0);
}

// Running sums (products) of each line of `extent` elements `inner` apart, in the accumulator type Acc.
template <class Acc, class Get, class Set>
void cumulate(const AxisSplit& sp, bool exclusive, bool reverse, bool product, Get get, Set set) {
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      Acc sum = product ? 1 : 0;
      for (int64_t n = 0; n < sp.extent; ++n) {
        int64_t a = reverse ? sp.extent - 1 - n : n;
        int64_t at = (o * sp.extent + a) * sp.inner + i;
        Acc v = get(at);
        Acc next = product ? Acc(sum * v) : Acc(sum + v);
        set(at, exclusive ? sum : next);
        sum = next;
      }
    }
}

std::vector<Tensor> evalCumulative(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  bool product = node.op() == "CumProd";
  const Tensor& x = *in[0];
  int64_t axis = evalAxis(node, scalarOperand(node, *in[1], 1, "axis"), int64_t(x.shape().size()));
  AxisSplit sp = splitAtAxis(x.shape(), axis);
  bool exclusive = node.attrInt("exclusive", 0) != 0, reverse = node.attrInt("reverse", 0) != 0;
  Tensor out(types[0].dtype, types[0].shape);
  if (isInteger(x.dtype())) {
    // Wrapping int64 arithmetic: the stored width wraps as ONNX's fixed-width sums do.
    cumulate<uint64_t>(sp, exclusive, reverse, product, [&](int64_t i) { return uint64_t(x.getInt(i)); },
                       [&](int64_t i, uint64_t v) { out.setInt(i, int64_t(v)); });
    return {out};
  }
  std::vector<double> sums(static_cast<size_t>(x.numElements()));
  cumulate<double>(sp, exclusive, reverse, product, [&](int64_t i) { return x.getDouble(i); },
                   [&](int64_t i, double v) { sums[size_t(i)] = v; });
  return {fromDoublesRounded(types[0].dtype, types[0].shape, sums)};
}

}  // namespace

void registerTriangularOps(OpRegistry& r) {
  addOp(r, {"Trilu", OpCategory::Other, "keep the upper (upper=1) or lower triangle of the last two dims, "
            "shifted by diagonal k", 1, 2, 1, 1, {}, inferTrilu, evalTrilu});
  addOp(r, {"CumSum", OpCategory::Other, "running sum along axis (exclusive, reverse)", 2, 2, 1, 1, {}, inferCumSum,
            evalCumulative});
  addOp(r, {"CumProd", OpCategory::Other, "running product along axis (exclusive, reverse)", 2, 2, 1, 1, {},
            inferCumSum, evalCumulative});
}

}  // namespace tessera
