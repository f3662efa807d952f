// Broadcasting elementwise ops with two or more inputs: arithmetic, comparison, logic, Where, Clip, PRelu and
// the variadic Max/Min/Sum/Mean. Float inputs are combined in double and rounded once to the output dtype;
// integer and bool inputs are combined exactly in int64 and wrap to the output dtype like a C cast.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "ops/broadcast.h"
#include "ops/elementwise_parts.h"
#include "ops/op_support.h"

namespace tessera {
namespace {
using namespace ops;  // the shared helpers of op_support.h

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The element function of an op, for float inputs and for integer/bool inputs. u64 values travel as int64
// bit patterns: Add, Sub and Mul wrap the same either way, but ops that order or divide need `onU64` (when
// null, onInt serves u64 too).
struct BinaryFns {
  std::function<double(double, double)> onFloat;
  std::function<int64_t(int64_t, int64_t)> onInt;
  std::function<int64_t(int64_t, int64_t)> onU64 = nullptr;
};

template <class T, class F>
std::vector<T> combine(const std::vector<T>& a, const Shape& sa, const std::vector<T>& b, const Shape& sb,
                       const Shape& out, const F& f) {
  // Over the cores for a large result (a batch of activations): f is a pure function of the two elements.
  if (sa == out && sb == out) {  // no broadcast (a residual Add): element k of each, without index maps
    std::vector<T> r(a.size());
    parallelFor(int64_t(r.size()), kElementCost, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) r[size_t(k)] = f(a[size_t(k)], b[size_t(k)]);
    });
    return r;
  }
  std::vector<T> r(size_t(numElements(out)));
  parallelFor(int64_t(r.size()), kElementCost, [&](int64_t begin, int64_t end) {
    forEachBroadcast(sa, sb, out, begin, end,
                     [&](int64_t k, int64_t ia, int64_t ib) { r[size_t(k)] = f(a[size_t(ia)], b[size_t(ib)]); });
  });
  return r;
}

// Two f32 inputs made one f32 result (a BatchNorm's scale and shift, a residual Add), read and written in place:
// each value computed in double and rounded once, as foldInputs does, without its three vectors of doubles (a
// third of the reference's time on densenet121-light went to allocating and zeroing them). Empty otherwise.
Tensor combineF32(const std::vector<const Tensor*>& ins, const TensorType& outType,
                  const std::function<double(double, double)>& f) {
  if (ins.size() != 2 || outType.dtype != DType::F32 || ins[0]->dtype() != DType::F32 || ins[1]->dtype() != DType::F32)
    return Tensor();
  Tensor y = Tensor::uninitialized(DType::F32, outType.shape);
  const float *a = ins[0]->data<float>(), *b = ins[1]->data<float>();
  float* r = y.mutableData<float>();
  parallelFor(y.numElements(), kElementCost, [&](int64_t begin, int64_t end) {
    forEachBroadcast(ins[0]->shape(), ins[1]->shape(), outType.shape, begin, end, [&](int64_t k, int64_t ia, int64_t ib) {
      r[k] = float(f(double(a[ia]), double(b[ib])));
    });
  });
  return y;
}

// Folds every input (broadcast to `out`) with fns, left to right, then stores the result as `outType`.
// Integer math is used only when no input is a float.
Tensor foldInputs(const std::vector<const Tensor*>& ins, const TensorType& outType, const BinaryFns& fns) {
  if (Tensor y = combineF32(ins, outType, fns.onFloat); !y.empty()) return y;
  bool anyFloat = false;
  for (const Tensor* t : ins) anyFloat |= isFloat(t->dtype());
  const Shape& out = outType.shape;
  if (anyFloat) {
    std::vector<double> acc = ins[0]->toDoubles();
    Shape accShape = ins[0]->shape();
    for (size_t i = 1; i < ins.size(); ++i) {
      acc = combine(acc, accShape, ins[i]->toDoubles(), ins[i]->shape(), out, fns.onFloat);
      accShape = out;
    }
    if (accShape != out) acc = combine(acc, accShape, acc, accShape, out, [](double a, double) { return a; });
    return fromDoublesRounded(outType.dtype, out, acc);
  }
  bool u64 = fns.onU64 && ins[0]->dtype() == DType::U64;
  const auto& onInt = u64 ? fns.onU64 : fns.onInt;
  std::vector<int64_t> acc = ins[0]->toInts();
  Shape accShape = ins[0]->shape();
  for (size_t i = 1; i < ins.size(); ++i) {
    acc = combine(acc, accShape, ins[i]->toInts(), ins[i]->shape(), out, onInt);
    accShape = out;
  }
  if (accShape != out) acc = combine(acc, accShape, acc, accShape, out, [](int64_t a, int64_t) { return a; });
  return Tensor::fromInts(outType.dtype, out, acc);
}

// --- integer helpers: wrap on overflow (through uint64), never trap ---
int64_t addI(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t subI(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t mulI(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
// C division, truncating toward zero. ONNX leaves x / 0 undefined; we return 0 rather than trap.
int64_t divI(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? subI(0, a) : a / b; }
int64_t fmodI(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
// Python-style modulo: the result takes the sign of the divisor.
int64_t modI(int64_t a, int64_t b) {
  int64_t r = fmodI(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}
// Exact integer power (wrapping); a negative exponent truncates 1 / base^-e toward zero.
int64_t powI(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? (e % 2 ? -1 : 1) : 0;
  uint64_t result = 1, b = uint64_t(base);
  for (; e; e >>= 1, b *= b)
    if (e & 1) result *= b;
  return int64_t(result);
}
// The unsigned 64-bit forms (operands are bit patterns). x / 0 and x % 0 give 0, as for signed.
uint64_t u(int64_t a) { return uint64_t(a); }
int64_t divU(int64_t a, int64_t b) { return b == 0 ? 0 : int64_t(u(a) / u(b)); }
int64_t modU(int64_t a, int64_t b) { return b == 0 ? 0 : int64_t(u(a) % u(b)); }
int64_t maxU(int64_t a, int64_t b) { return u(a) < u(b) ? b : a; }
int64_t minU(int64_t a, int64_t b) { return u(b) < u(a) ? b : a; }
double maxF(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b); }
double minF(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b); }

BinaryFns arith(char op) {
  switch (op) {
    case '+': return {[](double a, double b) { return a + b; }, addI};
    case '-': return {[](double a, double b) { return a - b; }, subI};
    case '*': return {[](double a, double b) { return a * b; }, mulI};
    case '/': return {[](double a, double b) { return a / b; }, divI, divU};
    case '^': return {[](double a, double b) { return std::pow(a, b); }, powI};
    case 'M': return {maxF, [](int64_t a, int64_t b) { return std::max(a, b); }, maxU};
    case 'm': return {minF, [](int64_t a, int64_t b) { return std::min(a, b); }, minU};
  }
  return {};
}

// Equal of two string tensors, broadcasting.
Tensor equalStrings(const Tensor& a, const Tensor& b, const Shape& shape) {
  std::vector<int64_t> ia = broadcastIndexMap(a.shape(), shape), ib = broadcastIndexMap(b.shape(), shape);
  std::vector<int64_t> eq(ia.size());
  for (size_t k = 0; k < ia.size(); ++k) eq[k] = a.strings()[size_t(ia[k])] == b.strings()[size_t(ib[k])];
  return Tensor::fromInts(DType::Bool, shape, eq);
}

template <class Cmp>
BinaryFns compare() {
  return {[](double a, double b) { return Cmp{}(a, b) ? 1.0 : 0.0; },
          [](int64_t a, int64_t b) -> int64_t { return Cmp{}(a, b); },
          [](int64_t a, int64_t b) -> int64_t { return Cmp{}(u(a), u(b)); }};
}

BinaryFns logic(char op) {
  switch (op) {
    case '&': return {nullptr, [](int64_t a, int64_t b) -> int64_t { return a && b; }};
    case '|': return {nullptr, [](int64_t a, int64_t b) -> int64_t { return a || b; }};
    default: return {nullptr, [](int64_t a, int64_t b) -> int64_t { return (a != 0) != (b != 0); }};
  }
}

BinaryFns mod(const Node& n) {
  if (n.attrInt("fmod", 0)) return {[](double a, double b) { return std::fmod(a, b); }, fmodI, modU};
  return {nullptr, modI, modU};
}

// Bitwise ops on the int64 form; the result is stored back truncated to the dtype, which is exact for the bits.
BinaryFns bitwise(char op) {
  switch (op) {
    case '&': return {nullptr, [](int64_t a, int64_t b) { return a & b; }};
    case '|': return {nullptr, [](int64_t a, int64_t b) { return a | b; }};
    default: return {nullptr, [](int64_t a, int64_t b) { return a ^ b; }};
  }
}

// BitShift on unsigned dtypes: the value read zero-extended, shifted as uint64 (a shift of 64 or more is 0).
BinaryFns bitShift(const Node& n) {
  bool left = n.attrString("direction", "") == "LEFT";
  auto f = [left](int64_t a, int64_t b) {
    uint64_t x = uint64_t(a), by = uint64_t(b);
    return int64_t(by >= 64 ? 0 : left ? x << by : x >> by);
  };
  return {nullptr, f};
}

struct BinaryOp {
  const char* name;
  const char* summary;
  DTypeClass accepts;
  BinaryFns (*make)(const Node&);
  OpTraits traits = {};
  bool outputsBool = false;
  bool mixedDTypes = false;  // Pow: the exponent may have another dtype than the base
};

const BinaryOp kBinaryOps[] = {
    {"Add", "y = a + b (broadcasting)", DTypeClass::Numeric, [](const Node&) { return arith('+'); },
     {.commutative = true, .neutral = 0.0}},
    {"Sub", "y = a - b (broadcasting)", DTypeClass::Numeric, [](const Node&) { return arith('-'); },
     {.neutral = 0.0}},
    {"Mul", "y = a * b (broadcasting)", DTypeClass::Numeric, [](const Node&) { return arith('*'); },
     {.commutative = true, .neutral = 1.0}},
    {"Div", "y = a / b (broadcasting; integers truncate toward zero)", DTypeClass::Numeric,
     [](const Node&) { return arith('/'); }, {.neutral = 1.0}},
    {"Pow", "y = a ^ b (broadcasting; the result has a's dtype)", DTypeClass::Numeric,
     [](const Node&) { return arith('^'); }, {.neutral = 1.0}, false, true},
    {"Mod", "y = a mod b (fmod = 0: sign of b, integers only; fmod = 1: sign of a)", DTypeClass::Numeric, mod},
    {"Less", "y = a < b (bool)", DTypeClass::Numeric, [](const Node&) { return compare<std::less<>>(); }, {}, true},
    {"LessOrEqual", "y = a <= b (bool)", DTypeClass::Numeric,
     [](const Node&) { return compare<std::less_equal<>>(); }, {}, true},
    {"Greater", "y = a > b (bool)", DTypeClass::Numeric, [](const Node&) { return compare<std::greater<>>(); },
     {}, true},
    {"GreaterOrEqual", "y = a >= b (bool)", DTypeClass::Numeric,
     [](const Node&) { return compare<std::greater_equal<>>(); }, {}, true},
    {"Equal", "y = a == b (bool; strings compare byte for byte)", DTypeClass::Any,
     [](const Node&) { return compare<std::equal_to<>>(); }, {.commutative = true, .strings = true}, true},
    {"And", "y = a && b (bool)", DTypeClass::Bool, [](const Node&) { return logic('&'); }, {.commutative = true}, true},
    {"Or", "y = a || b (bool)", DTypeClass::Bool, [](const Node&) { return logic('|'); }, {.commutative = true}, true},
    {"Xor", "y = a != b (bool)", DTypeClass::Bool, [](const Node&) { return logic('^'); }, {.commutative = true}, true},
    {"BitwiseAnd", "y = a & b (integers)", DTypeClass::Integer, [](const Node&) { return bitwise('&'); },
     {.commutative = true}},
    {"BitwiseOr", "y = a | b (integers)", DTypeClass::Integer, [](const Node&) { return bitwise('|'); },
     {.commutative = true}},
    {"BitwiseXor", "y = a ^ b (integers)", DTypeClass::Integer, [](const Node&) { return bitwise('^'); },
     {.commutative = true}},
    {"BitShift", "y = a << b or a >> b (direction LEFT or RIGHT; unsigned integers)", DTypeClass::Integer, bitShift},
};

void checkBitShift(const InferContext& ctx) {
  std::string d = ctx.node().attrString("direction", "");
  if (d != "LEFT" && d != "RIGHT") ctx.error("attribute 'direction' is '" + d + "'; expected LEFT or RIGHT");
  if (isSigned(ctx.input(0).dtype))
    ctx.error("input 0 is " + ctx.input(0).toString() + "; BitShift takes unsigned integers");
}

OpSchema binarySchema(const BinaryOp& op) {
  OpSchema s;
  s.name = op.name;
  s.category = OpCategory::Pointwise;
  s.summary = op.summary;
  s.traits = op.traits;
  s.minInputs = s.maxInputs = 2;
  s.infer = [op](InferContext& ctx) {
    requireDType(ctx, 0, op.accepts);
    requireDType(ctx, 1, op.accepts);
    if (!op.mixedDTypes) requireSameDType(ctx, 0, 1);
    if (std::string(op.name) == "Mod" && isFloat(ctx.input(0).dtype) && ctx.node().attrInt("fmod", 0) == 0)
      ctx.error("float inputs need attribute fmod = 1 (fmod = 0 is defined for integers only)");
    if (std::string(op.name) == "BitShift") checkBitShift(ctx);
    ctx.outputs[0] = {op.outputsBool ? DType::Bool : ctx.input(0).dtype, broadcastInputs(ctx, {0, 1})};
  };
  s.eval = [op](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    if (in[0]->holdsStrings()) return std::vector<Tensor>{equalStrings(*in[0], *in[1], types[0].shape)};
    Tensor y = foldInputs({in[0], in[1]}, types[0], op.make(node));
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

// Max Min Sum Mean over one or more broadcasting inputs.
OpSchema variadicSchema(const char* name, const char* summary, DTypeClass accepts, char op) {
  OpSchema s;
  s.name = name;
  s.category = OpCategory::Pointwise;
  s.summary = summary;
  s.traits = {.commutative = true, .identityWhenUnary = true};
  s.minInputs = 1;
  s.maxInputs = 1 << 16;
  s.infer = [accepts](InferContext& ctx) {
    std::vector<size_t> all;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
      if (!ctx.hasInput(i)) ctx.error("input " + std::to_string(i) + " is missing");
      requireDType(ctx, i, accepts);
      requireSameDType(ctx, 0, i);
      all.push_back(i);
    }
    ctx.outputs[0] = {ctx.input(0).dtype, broadcastInputs(ctx, all)};
  };
  s.eval = [op](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    BinaryFns fns = arith(op == 'a' ? '+' : op);
    if (op == 'a') {  // Mean: sum, then divide by the count (floats only)
      double n = double(in.size());
      TensorType f64{DType::F64, types[0].shape};
      std::vector<double> sum = foldInputs(in, f64, fns).toDoubles();
      for (double& v : sum) v /= n;
      return std::vector<Tensor>{fromDoublesRounded(types[0].dtype, types[0].shape, sum)};
    }
    Tensor y = foldInputs(in, types[0], fns);
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

// Where(cond, x, y): x where cond else y, all three broadcasting. Elements are copied byte for byte.
OpSchema whereSchema() {
  OpSchema s;
  s.name = "Where";
  s.category = OpCategory::Pointwise;
  s.summary = "y = cond ? a : b (broadcasting)";
  s.minInputs = s.maxInputs = 3;
  s.infer = [](InferContext& ctx) {
    requireDType(ctx, 0, DTypeClass::Bool);
    requireSameDType(ctx, 1, 2);
    ctx.outputs[0] = {ctx.input(1).dtype, broadcastInputs(ctx, {0, 1, 2})};
  };
  s.eval = [](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    Tensor y(types[0].dtype, types[0].shape);
    size_t es = dtypeSize(y.dtype());
    std::vector<int64_t> mc = broadcastIndexMap(in[0]->shape(), y.shape());
    std::vector<int64_t> ma = broadcastIndexMap(in[1]->shape(), y.shape());
    std::vector<int64_t> mb = broadcastIndexMap(in[2]->shape(), y.shape());
    std::byte* out = y.mutableBytes().data();
    for (size_t k = 0; k < mc.size(); ++k) {
      const Tensor* src = in[0]->getInt(mc[k]) ? in[1] : in[2];
      int64_t from = src == in[1] ? ma[k] : mb[k];
      std::memcpy(out + k * es, src->bytes().data() + size_t(from) * es, es);
    }
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

// Clip(x, min?, max?): y = min(max(x, min), max); min > max gives max, as numpy.clip.
OpSchema clipSchema() {
  OpSchema s;
  s.name = "Clip";
  s.category = OpCategory::Pointwise;
  s.summary = "y = clamp(x, min, max) (bounds are optional scalar inputs)";
  s.minInputs = 1;
  s.maxInputs = 3;
  s.infer = [](InferContext& ctx) {
    requireDType(ctx, 0, DTypeClass::Numeric);
    for (size_t i = 1; i < 3; ++i) {
      if (!ctx.hasInput(i)) continue;
      requireSameDType(ctx, 0, i);
      if (ctx.input(i).numElements() != 1)
        ctx.error("input " + std::to_string(i) + " (" + (i == 1 ? "min" : "max") + ") must be a scalar but is " +
                  ctx.input(i).toString());
    }
    ctx.outputs[0] = ctx.input(0);
  };
  s.eval = [](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    const Tensor& x = *in[0];
    const Tensor* lo = in.size() > 1 ? in[1] : nullptr;
    const Tensor* hi = in.size() > 2 ? in[2] : nullptr;
    Tensor y;
    if (isFloat(x.dtype())) {
      std::vector<double> v = x.toDoubles();
      for (double& e : v) {
        if (lo && e < lo->getDouble(0)) e = lo->getDouble(0);
        if (hi && e > hi->getDouble(0)) e = hi->getDouble(0);
      }
      y = fromDoublesRounded(types[0].dtype, x.shape(), v);
    } else {
      std::vector<int64_t> v = x.toInts();
      bool u64 = x.dtype() == DType::U64;
      for (int64_t& e : v) {
        if (lo) e = u64 ? maxU(e, lo->getInt(0)) : std::max(e, lo->getInt(0));
        if (hi) e = u64 ? minU(e, hi->getInt(0)) : std::min(e, hi->getInt(0));
      }
      y = Tensor::fromInts(types[0].dtype, x.shape(), v);
    }
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

// PRelu(x, slope): slope broadcasts to x (one direction only).
OpSchema preluSchema() {
  OpSchema s;
  s.name = "PRelu";
  s.category = OpCategory::Pointwise;
  s.summary = "y = x < 0 ? slope * x : x (slope broadcasts to x)";
  s.minInputs = s.maxInputs = 2;
  s.infer = [](InferContext& ctx) {
    requireDType(ctx, 0, DTypeClass::SignedNumeric);
    requireSameDType(ctx, 0, 1);
    if (broadcastInputs(ctx, {0, 1}) != ctx.input(0).shape)
      ctx.error("slope " + ctx.input(1).toString() + " must broadcast to x " + ctx.input(0).toString());
    ctx.outputs[0] = ctx.input(0);
  };
  s.eval = [](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    BinaryFns fns{[](double x, double a) { return x < 0 ? a * x : x; },
                  [](int64_t x, int64_t a) { return x < 0 ? mulI(a, x) : x; }};
    Tensor y = foldInputs({in[0], in[1]}, types[0], fns);
    requireType(node, y, types[0]);
    return std::vector<Tensor>{y};
  };
  return s;
}

}  // namespace

void registerBinaryOps(OpRegistry& r) {
  for (const BinaryOp& op : kBinaryOps) ops::addOp(r, binarySchema(op));
  ops::addOp(r, variadicSchema("Max", "y = elementwise max of the inputs (broadcasting)", DTypeClass::Numeric, 'M'));
  ops::addOp(r, variadicSchema("Min", "y = elementwise min of the inputs (broadcasting)", DTypeClass::Numeric, 'm'));
  ops::addOp(r, variadicSchema("Sum", "y = sum of the inputs (broadcasting)", DTypeClass::Numeric, '+'));
  ops::addOp(r, variadicSchema("Mean", "y = mean of the inputs (broadcasting)", DTypeClass::Float, 'a'));
  ops::addOp(r, whereSchema());
  ops::addOp(r, clipSchema());
  ops::addOp(r, preluSchema());
}

}  // namespace tessera
