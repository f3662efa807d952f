// Unary elementwise ops: math, activations and predicates. Floats are computed in double and rounded once to
// the output dtype; integer variants are exact in int64 (wrapping to the dtype like a C cast).
#include <cmath>
#include <functional>

#include "ops/elementwise_parts.h"
#include "ops/op_support.h"

namespace tessera {
namespace {
using namespace ops;  // the shared helpers of op_support.h

using FloatFn = std::function<double(double)>;

struct UnaryOp {
  const char* name;
  const char* summary;
  DTypeClass accepts;
  FloatFn (*makeFloat)(const Node&);          // builds the float function from the node's attributes
  int64_t (*onInt)(int64_t) = nullptr;        // integer and bool inputs; required when `accepts` admits them
  bool outputsBool = false;                   // IsNaN, IsInf: float in, bool out
  void (*check)(const InferContext&) = nullptr;  // extra attribute checks
};

// std:: math functions may not have their address taken, so they are wrapped in a lambda.
#define TESSERA_STD_FN(f) [](const Node&) -> FloatFn { return [](double x) { return f(x); }; }
template <double (*F)(double)>
FloatFn plain(const Node&) {
  return F;
}

double neg(double x) { return -x; }
double reciprocal(double x) { return 1.0 / x; }
double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x)); }
double relu(double x) { return x < 0 ? 0.0 : x; }
double sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }  // keeps 0 and NaN
double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x))); }
double softsign(double x) { return x / (1.0 + std::fabs(x)); }
double hardswish(double x) { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); }
double roundHalfEven(double x) { return std::nearbyint(x); }  // default rounding mode: ties to even
double isNaN(double x) { return std::isnan(x) ? 1.0 : 0.0; }
double fabsD(double x) { return std::fabs(x); }

// Integer arithmetic through uint64 so that overflow wraps instead of being undefined.
int64_t negI(int64_t x) { return int64_t(0 - uint64_t(x)); }
int64_t absI(int64_t x) { return x < 0 ? negI(x) : x; }
int64_t reluI(int64_t x) { return x < 0 ? 0 : x; }
int64_t signI(int64_t x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
int64_t notI(int64_t x) { return x == 0; }
int64_t bitwiseNotI(int64_t x) { return ~x; }  // stored back truncated to the dtype's width
double mish(double x) { return x * std::tanh(softplus(x)); }

FloatFn leakyRelu(const Node& n) {
  double a = n.attrFloat("alpha", 0.01);
  return [a](double x) { return x < 0 ? a * x : x; };
}
FloatFn hardSigmoid(const Node& n) {
  double a = n.attrFloat("alpha", 0.2), b = n.attrFloat("beta", 0.5);
  return [a, b](double x) { return std::clamp(a * x + b, 0.0, 1.0); };
}
FloatFn elu(const Node& n) {
  double a = n.attrFloat("alpha", 1.0);
  return [a](double x) { return x < 0 ? a * std::expm1(x) : x; };
}
FloatFn selu(const Node& n) {
  double a = n.attrFloat("alpha", 1.67326319217681884765625), g = n.attrFloat("gamma", 1.05070102214813232421875);
  return [a, g](double x) { return x <= 0 ? g * a * std::expm1(x) : g * x; };
}
FloatFn celu(const Node& n) {
  double a = n.attrFloat("alpha", 1.0);
  return [a](double x) { return std::max(0.0, x) + std::min(0.0, a * std::expm1(x / a)); };
}
FloatFn thresholdedRelu(const Node& n) {
  double a = n.attrFloat("alpha", 1.0);
  return [a](double x) { return x > a ? x : 0.0; };
}
FloatFn gelu(const Node& n) {
  if (n.attrString("approximate", "none") == "tanh")
    return [](double x) {
      constexpr double k = 0.79788456080286535588;  // sqrt(2 / pi)
      return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    };
  return [](double x) { return 0.5 * x * (1.0 + std::erf(x * 0.70710678118654752440)); };
}
FloatFn isInf(const Node& n) {
  bool neg = n.attrInt("detect_negative", 1) != 0, pos = n.attrInt("detect_positive", 1) != 0;
  return [neg, pos](double x) { return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg)) ? 1.0 : 0.0; };
}
FloatFn swish(const Node& n) {
  double a = n.attrFloat("alpha", 1.0);
  return [a](double x) { return x * sigmoid(a * x); };
}
FloatFn shrink(const Node& n) {
  double lambd = n.attrFloat("lambd", 0.5), bias = n.attrFloat("bias", 0.0);
  return [lambd, bias](double x) { return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0; };
}
FloatFn notOnFloats(const Node&) { return nullptr; }  // Not only admits bool, which takes the integer path

void checkGelu(const InferContext& ctx) {
  std::string a = ctx.node().attrString("approximate", "none");
  if (a != "none" && a != "tanh") ctx.error("attribute 'approximate' is '" + a + "'; expected 'none' or 'tanh'");
}
void checkCelu(const InferContext& ctx) {
  if (ctx.node().attrFloat("alpha", 1.0) == 0.0) ctx.error("attribute 'alpha' must not be 0");
}

const UnaryOp kUnaryOps[] = {
    {"Neg", "y = -x", DTypeClass::SignedNumeric, plain<neg>, negI},
    {"Abs", "y = |x|", DTypeClass::Numeric, plain<fabsD>, absI},
    {"Sign", "y = -1, 0 or 1 by the sign of x", DTypeClass::Numeric, plain<sign>, signI},
    {"Relu", "y = max(x, 0)", DTypeClass::SignedNumeric, plain<relu>, reluI},
    {"Exp", "y = e^x", DTypeClass::Float, TESSERA_STD_FN(std::exp)},
    {"Log", "y = ln x", DTypeClass::Float, TESSERA_STD_FN(std::log)},
    {"Sqrt", "y = sqrt(x)", DTypeClass::Float, TESSERA_STD_FN(std::sqrt)},
    {"Reciprocal", "y = 1 / x", DTypeClass::Float, plain<reciprocal>},
    {"Erf", "y = erf(x)", DTypeClass::Float, TESSERA_STD_FN(std::erf)},
    {"Tanh", "y = tanh(x)", DTypeClass::Float, TESSERA_STD_FN(std::tanh)},
    {"Sin", "y = sin(x)", DTypeClass::Float, TESSERA_STD_FN(std::sin)},
    {"Cos", "y = cos(x)", DTypeClass::Float, TESSERA_STD_FN(std::cos)},
    {"Tan", "y = tan(x)", DTypeClass::Float, TESSERA_STD_FN(std::tan)},
    {"Asin", "y = asin(x)", DTypeClass::Float, TESSERA_STD_FN(std::asin)},
    {"Acos", "y = acos(x)", DTypeClass::Float, TESSERA_STD_FN(std::acos)},
    {"Atan", "y = atan(x)", DTypeClass::Float, TESSERA_STD_FN(std::atan)},
    {"Sinh", "y = sinh(x)", DTypeClass::Float, TESSERA_STD_FN(std::sinh)},
    {"Cosh", "y = cosh(x)", DTypeClass::Float, TESSERA_STD_FN(std::cosh)},
    {"Asinh", "y = asinh(x)", DTypeClass::Float, TESSERA_STD_FN(std::asinh)},
    {"Acosh", "y = acosh(x)", DTypeClass::Float, TESSERA_STD_FN(std::acosh)},
    {"Atanh", "y = atanh(x)", DTypeClass::Float, TESSERA_STD_FN(std::atanh)},
    {"Ceil", "y = ceil(x)", DTypeClass::Float, TESSERA_STD_FN(std::ceil)},
    {"Floor", "y = floor(x)", DTypeClass::Float, TESSERA_STD_FN(std::floor)},
    {"Round", "y = x rounded to the nearest integer, ties to even", DTypeClass::Float, plain<roundHalfEven>},
    {"Sigmoid", "y = 1 / (1 + e^-x)", DTypeClass::Float, plain<sigmoid>},
    {"Softplus", "y = ln(1 + e^x)", DTypeClass::Float, plain<softplus>},
    {"Softsign", "y = x / (1 + |x|)", DTypeClass::Float, plain<softsign>},
    {"HardSwish", "y = x * clamp(x/6 + 1/2, 0, 1)", DTypeClass::Float, plain<hardswish>},
    {"LeakyRelu", "y = x < 0 ? alpha*x : x", DTypeClass::Float, leakyRelu},
    {"HardSigmoid", "y = clamp(alpha*x + beta, 0, 1)", DTypeClass::Float, hardSigmoid},
    {"Elu", "y = x < 0 ? alpha*(e^x - 1) : x", DTypeClass::Float, elu},
    {"Selu", "y = gamma * (x <= 0 ? alpha*(e^x - 1) : x)", DTypeClass::Float, selu},
    {"Celu", "y = max(0, x) + min(0, alpha*(e^(x/alpha) - 1))", DTypeClass::Float, celu, nullptr, false, checkCelu},
    {"ThresholdedRelu", "y = x > alpha ? x : 0", DTypeClass::Float, thresholdedRelu},
    {"Gelu", "y = x * Phi(x) (approximate = none | tanh)", DTypeClass::Float, gelu, nullptr, false, checkGelu},
    {"IsNaN", "y = x is NaN (bool)", DTypeClass::Float, plain<isNaN>, nullptr, true},
    {"IsInf", "y = x is +inf / -inf as selected (bool)", DTypeClass::Float, isInf, nullptr, true},
    {"Not", "y = !x (bool)", DTypeClass::Bool, notOnFloats, notI},
    {"BitwiseNot", "y = ~x (integers)", DTypeClass::Integer, notOnFloats, bitwiseNotI},
    {"Mish", "y = x * tanh(ln(1 + e^x))", DTypeClass::Float, plain<mish>},
    {"Swish", "y = x * sigmoid(alpha * x)", DTypeClass::Float, swish},
    {"Shrink", "y = x < -lambd ? x + bias : x > lambd ? x - bias : 0", DTypeClass::Float, shrink},
};

Tensor evalUnary(const UnaryOp& op, const Node& node, const Tensor& x, const TensorType& out) {
  Tensor y;
  if (x.dtype() == DType::F32 && out.dtype == DType::F32) {  // read and written in place, rounded once as below
    FloatFn f = op.makeFloat(node);
    y = Tensor::uninitialized(DType::F32, x.shape());
    const float* in = x.data<float>();
    float* r = y.mutableData<float>();
    parallelFor(x.numElements(), kElementCost, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) r[i] = float(f(double(in[i])));
    });
  } else if (isFloat(x.dtype())) {
    FloatFn f = op.makeFloat(node);
    std::vector<double> v = x.toDoubles();
    // Over the cores for a large tensor (a batch of activations): f is a pure function of the element.
    parallelFor(int64_t(v.size()), kElementCost, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) v[size_t(i)] = f(v[size_t(i)]);
    });
    y = fromDoublesRounded(out.dtype, x.shape(), v);
  } else {
    std::vector<int64_t> v = x.toInts();
    for (int64_t& e : v) e = op.onInt(e);
    y = Tensor::fromInts(out.dtype, x.shape(), v);
  }
  requireType(node, y, out);
  return y;
}

OpSchema unarySchema(const UnaryOp& op) {
  OpSchema s;
  s.name = op.name;
  s.category = OpCategory::Pointwise;
  s.summary = op.summary;
  s.infer = [op](InferContext& ctx) {
    requireDType(ctx, 0, op.accepts);
    if (op.check) op.check(ctx);
    ctx.outputs[0] = {op.outputsBool ? DType::Bool : ctx.input(0).dtype, ctx.input(0).shape};
  };
  s.eval = [op](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    return std::vector<Tensor>{evalUnary(op, node, *in[0], types[0])};
  };
  return s;
}

}  // namespace

void registerUnaryOps(OpRegistry& r) {
  for (const UnaryOp& op : kUnaryOps) ops::addOp(r, unarySchema(op));
}

}  // namespace tessera
