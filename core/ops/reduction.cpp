// Reductions over a set of axes (Reduce*, axes as optional input 1) and ArgMax/ArgMin along one axis.
// Floats accumulate in double; integer Sum/Prod/Max/Min/SumSquare/L1 accumulate exactly in int64.
// An empty reduction set gives the identity of the reduction: sum 0, prod 1, max -inf (integers: the dtype's
// lowest value), min +inf (the dtype's highest value), mean NaN, log-sum-exp -inf.
#include <cmath>
#include <limits>

#include "ops/broadcast.h"
#include "ops/op_support.h"
#include "ops/families.h"

namespace tessera {
namespace {
using namespace ops;  // the shared helpers of op_support.h

enum class Reduce { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

struct ReduceOp {
  const char* name;
  const char* summary;
  Reduce kind;
  DTypeClass accepts;
};

const ReduceOp kReduceOps[] = {
    {"ReduceSum", "sum over axes", Reduce::Sum, DTypeClass::Numeric},
    {"ReduceMean", "mean over axes", Reduce::Mean, DTypeClass::Numeric},
    {"ReduceMax", "max over axes", Reduce::Max, DTypeClass::Any},
    {"ReduceMin", "min over axes", Reduce::Min, DTypeClass::Any},
    {"ReduceProd", "product over axes", Reduce::Prod, DTypeClass::Numeric},
    {"ReduceL1", "sum of |x| over axes", Reduce::L1, DTypeClass::Numeric},
    {"ReduceL2", "sqrt of the sum of squares over axes", Reduce::L2, DTypeClass::Numeric},
    {"ReduceSumSquare", "sum of squares over axes", Reduce::SumSquare, DTypeClass::Numeric},
    {"ReduceLogSum", "log of the sum over axes", Reduce::LogSum, DTypeClass::Numeric},
    {"ReduceLogSumExp", "log of the sum of exp over axes (stable)", Reduce::LogSumExp, DTypeClass::Numeric},
};

// The registry's coarse kind: the four the kernel lowering accumulates, Other for the rest.
ReduceKind reduceKind(Reduce k) {
  switch (k) {
    case Reduce::Sum: return ReduceKind::Sum;
    case Reduce::Mean: return ReduceKind::Mean;
    case Reduce::Max: return ReduceKind::Max;
    case Reduce::Min: return ReduceKind::Min;
    default: return ReduceKind::Other;
  }
}

// Which dims are reduced and the output shape.
struct ReducePlan {
  std::vector<bool> reduced;
  Shape out;
};

// From the input shape, the axes input (null when absent) and the attributes. Throws naming the node.
ReducePlan planReduce(const Node& node, const Shape& in, const Tensor* axesTensor) {
  int64_t rank = int64_t(in.size());
  std::vector<int64_t> axes = axesTensor ? axesTensor->toInts() : std::vector<int64_t>{};
  bool noop = node.attrInt("noop_with_empty_axes", 0) != 0;
  ReducePlan p{std::vector<bool>(in.size(), axes.empty() && !noop), {}};
  for (int64_t a : axes) {
    std::optional<int64_t> n = normalizeAxis(a, rank);
    if (!n)
      failNode(node, "axis " + std::to_string(a) + " is out of range for an input of rank " + std::to_string(rank));
    if (p.reduced[size_t(*n)]) failNode(node, "axis " + std::to_string(a) + " is repeated in axes");
    p.reduced[size_t(*n)] = true;
  }
  bool keep = node.attrInt("keepdims", 1) != 0;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!p.reduced[d]) p.out.push_back(in[d]);
    else if (keep) p.out.push_back(1);
  }
  return p;
}

// For every input element (row-major), the flat index of the output element it reduces into.
std::vector<int64_t> outputIndexMap(const Shape& in, const std::vector<bool>& reduced) {
  Shape kept = in;
  for (size_t d = 0; d < in.size(); ++d)
    if (reduced[d]) kept[d] = 1;
  std::vector<int64_t> strides = stridesOf(kept);
  for (size_t d = 0; d < in.size(); ++d)
    if (reduced[d]) strides[d] = 0;
  std::vector<int64_t> map(size_t(numElements(in)));
  std::vector<int64_t> idx(in.size(), 0);
  int64_t pos = 0;
  for (size_t k = 0; k < map.size(); ++k) {
    map[k] = pos;
    for (size_t d = in.size(); d-- > 0;) {  // odometer increment
      pos += strides[d];
      if (++idx[d] < in[d]) break;
      pos -= strides[d] * idx[d];
      idx[d] = 0;
    }
  }
  return map;
}

std::pair<int64_t, int64_t> intRange(DType t) {
  switch (t) {
    case DType::I32: return {INT32_MIN, INT32_MAX};
    case DType::I16: return {INT16_MIN, INT16_MAX};
    case DType::I8: return {INT8_MIN, INT8_MAX};
    case DType::I4: return {-8, 7};
    case DType::U4: return {0, 15};
    case DType::I2: return {-2, 1};
    case DType::U2: return {0, 3};
    case DType::U8: return {0, UINT8_MAX};
    case DType::U16: return {0, UINT16_MAX};
    case DType::U32: return {0, UINT32_MAX};
    case DType::U64: return {0, -1};  // the bit pattern of UINT64_MAX; Max/Min compare u64 unsigned
    case DType::Bool: return {0, 1};
    default: return {INT64_MIN, INT64_MAX};
  }
}

// Exact integer reductions (sum, prod, max, min, |x|, x^2), wrapping like the dtype would.
Tensor reduceInts(Reduce kind, const Tensor& x, const std::vector<int64_t>& map, const TensorType& out) {
  auto [lo, hi] = intRange(x.dtype());
  int64_t init = kind == Reduce::Prod ? 1 : kind == Reduce::Max ? lo : kind == Reduce::Min ? hi : 0;
  std::vector<int64_t> acc(size_t(out.numElements()), init);
  std::vector<int64_t> v = x.toInts();
  bool u64 = x.dtype() == DType::U64;  // its int64 values are bit patterns: order them as unsigned
  auto less = [u64](int64_t p, int64_t q) { return u64 ? uint64_t(p) < uint64_t(q) : p < q; };
  for (size_t k = 0; k < v.size(); ++k) {
    uint64_t a = uint64_t(acc[size_t(map[k])]), e = uint64_t(v[k]);
    int64_t& r = acc[size_t(map[k])];
    switch (kind) {
      case Reduce::Sum: r = int64_t(a + e); break;
      case Reduce::Prod: r = int64_t(a * e); break;
      case Reduce::Max: r = less(r, v[k]) ? v[k] : r; break;
      case Reduce::Min: r = less(v[k], r) ? v[k] : r; break;
      case Reduce::L1: r = int64_t(a + (!u64 && v[k] < 0 ? 0 - e : e)); break;
      default: r = int64_t(a + e * e); break;  // SumSquare
    }
  }
  return Tensor::fromInts(out.dtype, out.shape, acc);
}

// Double reductions; the max per output is found first so that log-sum-exp is stable.
Tensor reduceDoubles(Reduce kind, const Tensor& x, const std::vector<int64_t>& map, const TensorType& out) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  size_t n = size_t(out.numElements());
  std::vector<double> v = x.toDoubles(), acc(n, 0.0), count(n, 0.0), peak(n, -inf);
  for (size_t k = 0; k < v.size(); ++k) {
    size_t o = size_t(map[k]);
    count[o] += 1;
    if (v[k] > peak[o] || std::isnan(v[k])) peak[o] = std::isnan(peak[o]) ? peak[o] : v[k];
  }
  if (kind == Reduce::Prod) acc.assign(n, 1.0);
  if (kind == Reduce::Min) acc.assign(n, inf);
  if (kind == Reduce::Max) acc = peak;
  for (size_t k = 0; k < v.size(); ++k) {
    double e = v[k];
    double& r = acc[size_t(map[k])];
    switch (kind) {
      case Reduce::Sum: case Reduce::Mean: case Reduce::LogSum: r += e; break;
      case Reduce::Prod: r *= e; break;
      case Reduce::Min: r = std::isnan(e) || std::isnan(r) ? std::nan("") : std::min(r, e); break;
      case Reduce::L1: r += std::fabs(e); break;
      case Reduce::L2: case Reduce::SumSquare: r += e * e; break;
      case Reduce::LogSumExp: {
        double m = peak[size_t(map[k])];
        r += std::isinf(m) ? std::exp(e) : std::exp(e - m);
        break;
      }
      case Reduce::Max: break;
    }
  }
  for (size_t o = 0; o < n; ++o) {
    if (kind == Reduce::Mean) acc[o] /= count[o];  // 0 / 0 = NaN for an empty set
    if (kind == Reduce::L2) acc[o] = std::sqrt(acc[o]);
    if (kind == Reduce::LogSum) acc[o] = std::log(acc[o]);
    if (kind == Reduce::LogSumExp) acc[o] = std::log(acc[o]) + (std::isinf(peak[o]) ? 0.0 : peak[o]);
  }
  return fromDoublesRounded(out.dtype, out.shape, acc);
}

bool exactOnInts(Reduce k) {
  return k == Reduce::Sum || k == Reduce::Prod || k == Reduce::Max || k == Reduce::Min || k == Reduce::L1 ||
         k == Reduce::SumSquare;
}

const Tensor* axesOf(const InferContext& ctx) {
  if (!ctx.hasInput(1)) return nullptr;
  if (ctx.input(1).dtype != DType::I64 || ctx.input(1).shape.size() != 1)
    ctx.error("input 1 (axes) must be a 1-D i64 tensor but is " + ctx.input(1).toString());
  return &ctx.requireConstant(1, "axes");
}

OpSchema reduceSchema(const ReduceOp& op) {
  OpSchema s;
  s.name = op.name;
  s.category = OpCategory::Reduction;
  s.summary = std::string(op.summary) + " (axes input, keepdims, noop_with_empty_axes)";
  s.maxInputs = 2;
  s.shapeInputs = {1};
  s.infer = [op](InferContext& ctx) {
    requireDType(ctx, 0, op.accepts);
    ctx.outputs[0] = {ctx.input(0).dtype, planReduce(ctx.node(), ctx.input(0).shape, axesOf(ctx)).out};
  };
  s.eval = [op](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    const Tensor& x = *in[0];
    ReducePlan plan = planReduce(node, x.shape(), in.size() > 1 ? in[1] : nullptr);
    if (plan.out != types[0].shape)
      failNode(node, "the reduced shape differs from the inferred " + types[0].toString());
    std::vector<int64_t> map = outputIndexMap(x.shape(), plan.reduced);
    Tensor y = !isFloat(x.dtype()) && exactOnInts(op.kind) ? reduceInts(op.kind, x, map, types[0])
                                                            : reduceDoubles(op.kind, x, map, types[0]);
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

// For each (outer, inner) position, the index along the axis of the first (or last) extreme value.
template <class T>
std::vector<int64_t> argExtreme(const std::vector<T>& v, const AxisSplit& sp, bool isMax, bool last) {
  std::vector<int64_t> out(size_t(sp.outer * sp.inner));
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      auto at = [&](int64_t a) { return v[size_t((o * sp.extent + a) * sp.inner + i)]; };
      int64_t best = 0;
      for (int64_t a = 1; a < sp.extent; ++a) {
        T e = at(a), b = at(best);
        if (isMax ? (last ? e >= b : e > b) : (last ? e <= b : e < b)) best = a;
      }
      out[size_t(o * sp.inner + i)] = best;
    }
  return out;
}

// ArgMax / ArgMin along `axis`: the first (or with select_last_index, the last) position of the extreme.
OpSchema argSchema(const char* name, bool isMax) {
  OpSchema s;
  s.name = name;
  s.category = OpCategory::Reduction;
  s.summary = std::string("index of the ") + (isMax ? "max" : "min") + " along axis (i64)";
  s.infer = [](InferContext& ctx) {
    requireDType(ctx, 0, DTypeClass::Numeric);
    Shape shape = ctx.input(0).shape;
    int64_t axis = normalizedAxis(ctx, ctx.node().attrInt("axis", 0), int64_t(shape.size()));
    if (shape[size_t(axis)] == 0) ctx.error("cannot take the index of an extreme along an empty axis");
    if (ctx.node().attrInt("keepdims", 1)) shape[size_t(axis)] = 1;
    else shape.erase(shape.begin() + axis);
    ctx.outputs[0] = {DType::I64, shape};
  };
  s.eval = [isMax](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    const Tensor& x = *in[0];
    int64_t axis = evalAxis(node, node.attrInt("axis", 0), int64_t(x.shape().size()));
    bool last = node.attrInt("select_last_index", 0) != 0;
    AxisSplit sp = splitAtAxis(x.shape(), axis);
    std::vector<int64_t> out = isFloat(x.dtype()) ? argExtreme(x.toDoubles(), sp, isMax, last)
                                                  : argExtreme(x.toInts(), sp, isMax, last);
    Tensor y = Tensor::fromInts(DType::I64, types[0].shape, out);
    return std::vector<Tensor>{y};
  };
  return s;
}

}  // namespace

void registerReductionOps(OpRegistry& r) {
  for (const ReduceOp& op : kReduceOps) ops::addOp(r, reduceSchema(op), {.reduce = reduceKind(op.kind)});
  ops::addOp(r, argSchema("ArgMax", true));
  ops::addOp(r, argSchema("ArgMin", false));
}

}  // namespace tessera
