// The op set of the pointwise graph ops as kernel IR expressions.
#include <cmath>
#include <functional>
#include <unordered_map>

#include "ir/error.h"
#include "kernel/lower/lower_context.h"
#include "ops/quantize.h"

namespace tessera::kernel {
namespace {

using Ins = std::vector<Expr>;
using Builder = std::function<Expr(const Node&, const Ins&, DType)>;

Expr fimm(double v, const Expr& like) { return FloatImm::make(v, like->dtype); }
Expr bin(BinaryOp op, Expr a, Expr b) {
  Expr cb = Cast::make(a->dtype, std::move(b));
  return Binary::make(op, std::move(a), std::move(cb));
}
Expr un(UnaryOp op, Expr a) { return Unary::make(op, std::move(a)); }
Expr lt0(const Expr& x) { return bin(BinaryOp::Lt, x, fimm(0, x)); }
Expr clamp01(const Expr& x) { return bin(BinaryOp::Max, fimm(0, x), bin(BinaryOp::Min, fimm(1, x), x)); }

Builder unary(UnaryOp op) {
  return [op](const Node&, const Ins& in, DType) { return un(op, in[0]); };
}
Builder binary(BinaryOp op) {
  return [op](const Node&, const Ins& in, DType) { return bin(op, in[0], in[1]); };
}
// Max, Min, Sum, Mean over any number of inputs, folded left to right.
Builder variadic(BinaryOp op, bool mean = false) {
  return [op, mean](const Node&, const Ins& in, DType) {
    Expr acc = in[0];
    for (size_t i = 1; i < in.size(); ++i) acc = bin(op, acc, in[i]);
    return mean ? bin(BinaryOp::Div, acc, fimm(double(in.size()), acc)) : acc;
  };
}

Expr gelu(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  Expr half = bin(BinaryOp::Mul, fimm(0.5, x), x);
  if (n.attrString("approximate", "none") == "tanh") {
    Expr cube = bin(BinaryOp::Mul, bin(BinaryOp::Mul, x, x), x);
    Expr inner = bin(BinaryOp::Mul, fimm(std::sqrt(2.0 / M_PI), x),
                     bin(BinaryOp::Add, x, bin(BinaryOp::Mul, fimm(0.044715, x), cube)));
    return bin(BinaryOp::Mul, half, bin(BinaryOp::Add, fimm(1, x), un(UnaryOp::Tanh, inner)));
  }
  Expr erf = un(UnaryOp::Erf, bin(BinaryOp::Mul, x, fimm(M_SQRT1_2, x)));
  return bin(BinaryOp::Mul, half, bin(BinaryOp::Add, fimm(1, x), erf));
}

Expr expm1Scaled(const Expr& x, double alpha) {
  return bin(BinaryOp::Mul, fimm(alpha, x), bin(BinaryOp::Sub, un(UnaryOp::Exp, x), fimm(1, x)));
}

// The activations and normalizations of more than one expression, each as ONNX defines it.
Expr leakyRelu(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  return Select::make(lt0(x), bin(BinaryOp::Mul, fimm(n.attrFloat("alpha", 0.01), x), x), x);
}
Expr selu(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  // ONNX's defaults are float attributes, so the float nearest the constant, as the reference uses (the exact
  // 1.6732632423543772 differed by 3e-8: a mismatch of an f64 Selu, found by diff_fuzz).
  Expr neg = expm1Scaled(x, n.attrFloat("alpha", 1.67326319217681884765625));
  Expr inner = Select::make(bin(BinaryOp::Le, x, fimm(0, x)), neg, x);
  return bin(BinaryOp::Mul, fimm(n.attrFloat("gamma", 1.05070102214813232421875), x), inner);
}
Expr celu(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  double a = n.attrFloat("alpha", 1.0);
  Expr neg = expm1Scaled(bin(BinaryOp::Div, x, fimm(a, x)), a);
  return bin(BinaryOp::Add, bin(BinaryOp::Max, fimm(0, x), x), bin(BinaryOp::Min, fimm(0, x), neg));
}
Expr hardSigmoid(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  Expr lin = bin(BinaryOp::Add, bin(BinaryOp::Mul, fimm(n.attrFloat("alpha", 0.2), x), x),
                 fimm(n.attrFloat("beta", 0.5), x));
  return clamp01(lin);
}
Expr hardSwish(const Node&, const Ins& in, DType) {
  const Expr& x = in[0];
  return bin(BinaryOp::Mul, x, clamp01(bin(BinaryOp::Add, bin(BinaryOp::Div, x, fimm(6, x)), fimm(0.5, x))));
}
Expr thresholdedRelu(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  return Select::make(bin(BinaryOp::Gt, x, fimm(n.attrFloat("alpha", 1.0), x)), x, fimm(0, x));
}
// x · tanh(softplus(x)), softplus in the reference's stable form max(x, 0) + log(1 + e^-|x|) (no overflow of e^x).
Expr mish(const Node&, const Ins& in, DType) {
  const Expr& x = in[0];
  Expr tail = un(UnaryOp::Log, bin(BinaryOp::Add, fimm(1, x), un(UnaryOp::Exp, un(UnaryOp::Neg, un(UnaryOp::Abs, x)))));
  return bin(BinaryOp::Mul, x, un(UnaryOp::Tanh, bin(BinaryOp::Add, bin(BinaryOp::Max, x, fimm(0, x)), tail)));
}
Expr shrink(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  double lambd = n.attrFloat("lambd", 0.5), bias = n.attrFloat("bias", 0.0);
  Expr above = Select::make(bin(BinaryOp::Gt, x, fimm(lambd, x)), bin(BinaryOp::Sub, x, fimm(bias, x)), fimm(0, x));
  return Select::make(bin(BinaryOp::Lt, x, fimm(-lambd, x)), bin(BinaryOp::Add, x, fimm(bias, x)), above);
}
Expr clip(const Node&, const Ins& in, DType) {
  Expr x = in[0];
  if (in.size() > 1 && in[1]) x = bin(BinaryOp::Max, x, in[1]);
  if (in.size() > 2 && in[2]) x = bin(BinaryOp::Min, x, in[2]);
  return x;
}
Expr batchNormalization(const Node& n, const Ins& in, DType) {  // inference; params per channel
  const Expr& x = in[0];
  Expr inv = un(UnaryOp::Rsqrt, bin(BinaryOp::Add, in[4], FloatImm::make(n.attrFloat("epsilon", 1e-5), in[4]->dtype)));
  return bin(BinaryOp::Add, bin(BinaryOp::Mul, bin(BinaryOp::Mul, bin(BinaryOp::Sub, x, in[3]), in[1]), inv), in[2]);
}
Expr isInf(const Node& n, const Ins& in, DType) {
  const Expr& x = in[0];
  Expr inf = un(UnaryOp::IsInf, x);
  bool pos = n.attrInt("detect_positive", 1) != 0, neg = n.attrInt("detect_negative", 1) != 0;
  if (pos && neg) return inf;
  Expr sign = pos ? bin(BinaryOp::Gt, x, fimm(0, x)) : bin(BinaryOp::Lt, x, fimm(0, x));
  return pos || neg ? bin(BinaryOp::And, inf, sign) : Cast::make(DType::Bool, intImm(0));
}
Expr firstInput(const Node&, const Ins& in, DType) { return in[0]; }

// Mod as ONNX defines it (and the reference computes it): floats, and integers under fmod = 1, the C remainder
// (the dividend's sign); integers under fmod = 0 the divisor's sign, as Python's %. A divisor of 0 (or -1, whose
// INT_MIN case traps in C) gives 0: the divisor is replaced by 1 there.
Expr mod(const Node& n, const Ins& in, DType) {
  const Expr& a = in[0];
  const DType t = a->dtype;
  Expr b = Cast::make(t, in[1]);
  if (isFloat(t)) return bin(BinaryOp::Mod, a, b);
  auto imm = [t](int64_t v) { return Cast::make(t, intImm(v)); };
  Expr degenerate = bin(BinaryOp::Eq, b, imm(0));
  if (isSigned(t)) degenerate = Binary::make(BinaryOp::Or, degenerate, bin(BinaryOp::Eq, b, imm(-1)));
  Expr divisor = Select::make(degenerate, imm(1), b);
  Expr r = bin(BinaryOp::Mod, a, divisor);
  if (n.attrInt("fmod", 0) != 0 || !isSigned(t)) return r;
  Expr signsDiffer = bin(BinaryOp::Ne, bin(BinaryOp::Lt, r, imm(0)), bin(BinaryOp::Lt, divisor, imm(0)));
  Expr adjust = Binary::make(BinaryOp::And, bin(BinaryOp::Ne, r, imm(0)), signsDiffer);
  return Select::make(adjust, bin(BinaryOp::Add, r, divisor), r);
}

// Cast and CastLike. Into a float8 type the generated code rounds saturating, Cast's default; saturate = 0
// (out-of-range values to infinity or NaN) stays with the reference.
Expr castTo(const Node& n, const Ins& in, DType t) {
  if (isFloat8(t) && n.attrInt("saturate", 1) == 0)
    tessera::fail("node '" + n.id() + "' (" + n.op() + "): a cast to " + std::string(dtypeName(t)) +
                  " with saturate = 0 has no kernel form (the saturating one has)");
  if (t == DType::F8E8M0 && n.attrString("round_mode", "up") != "up")
    tessera::fail("node '" + n.id() + "' (" + n.op() + "): a cast to f8e8m0 with round_mode '" +
                  n.attrString("round_mode", "up") + "' has no kernel form (round_mode 'up' has)");
  return Cast::make(t, in[0]);
}

// The float8 formats generated code holds (codegen's prelude encodes and decodes them): all but f8e8m0.
bool kernelFloat8(DType t) { return isFloat8(t) && t != DType::F8E8M0; }

// The integer range QuantizeLinear saturates to (the 2- and 4-bit integers are bytes in generated code); the
// float4 type has no kernel form.
std::pair<double, double> quantizedRange(const Node& n, DType t) {
  auto range = ops::quantizedIntegerRange(t);
  if (!range)
    tessera::fail("node '" + n.id() + "' (" + n.op() + "): quantized type " + std::string(dtypeName(t)) +
                  " has no kernel form; the 2- to 32-bit integers and the float8 types have");
  return *range;
}

// DequantizeLinear: (x - zero_point) * scale, the difference exact (in f64 for 32-bit integers), then one rounding
// in the scale's type as the reference rounds its double once. Scale and zero point come per tensor or, through
// Emitter::channelParam, per element of the axis.
Expr dequantize(const Node& n, const Ins& in, DType out) {
  if (!isFloat(out)) tessera::fail("node '" + n.id() + "' (DequantizeLinear): output " + std::string(dtypeName(out)) + " is no float");
  if (!kernelFloat8(in[0]->dtype)) quantizedRange(n, in[0]->dtype);  // the same integer types, or float8 decoded
  DType wide = in[0]->dtype == DType::I32 || in[0]->dtype == DType::U32 ? DType::F64 : accType(out);
  Expr x = Cast::make(wide, in[0]);
  if (in.size() > 2 && in[2]) x = bin(BinaryOp::Sub, x, Cast::make(wide, in[2]));
  return bin(BinaryOp::Mul, x, Cast::make(wide, in[1]));
}

// QuantizeLinear to an integer type: x / scale in the input's precision (f32 unless f64, as the reference
// divides), rounded half to even, plus the zero point, clamped into the type's range.
Expr quantize(const Node& n, const Ins& in, DType out) {
  DType q = in[0]->dtype == DType::F64 ? DType::F64 : DType::F32;
  if (kernelFloat8(out)) {  // no integer rounding: the quotient plus the zero point rounds once into the format
    if (n.attrInt("saturate", 1) == 0)
      tessera::fail("node '" + n.id() + "' (QuantizeLinear): quantizing to " + std::string(dtypeName(out)) +
                    " with saturate = 0 has no kernel form (the saturating one has)");
    Expr v = Cast::make(DType::F64, bin(BinaryOp::Div, Cast::make(q, in[0]), Cast::make(q, in[1])));
    return in.size() > 2 && in[2] ? bin(BinaryOp::Add, v, Cast::make(DType::F64, in[2])) : v;
  }
  Expr v = un(UnaryOp::Round, bin(BinaryOp::Div, Cast::make(q, in[0]), Cast::make(q, in[1])));
  if (in.size() > 2 && in[2]) v = bin(BinaryOp::Add, Cast::make(DType::F64, v), Cast::make(DType::F64, in[2]));
  auto [lo, hi] = quantizedRange(n, out);
  v = Cast::make(DType::F64, v);
  return bin(BinaryOp::Min, bin(BinaryOp::Max, v, FloatImm::make(lo, DType::F64)), FloatImm::make(hi, DType::F64));
}

const std::unordered_map<std::string, Builder>& table() {
  static const std::unordered_map<std::string, Builder> t = {
      {"Add", binary(BinaryOp::Add)}, {"Sub", binary(BinaryOp::Sub)}, {"Mul", binary(BinaryOp::Mul)},
      {"Div", binary(BinaryOp::Div)}, {"Pow", binary(BinaryOp::Pow)}, {"Mod", mod},
      {"Equal", binary(BinaryOp::Eq)}, {"Less", binary(BinaryOp::Lt)}, {"LessOrEqual", binary(BinaryOp::Le)},
      {"Greater", binary(BinaryOp::Gt)}, {"GreaterOrEqual", binary(BinaryOp::Ge)},
      {"And", binary(BinaryOp::And)}, {"Or", binary(BinaryOp::Or)}, {"Xor", binary(BinaryOp::Xor)},
      {"Max", variadic(BinaryOp::Max)}, {"Min", variadic(BinaryOp::Min)}, {"Sum", variadic(BinaryOp::Add)},
      {"Mean", variadic(BinaryOp::Add, true)},
      {"Neg", unary(UnaryOp::Neg)}, {"Abs", unary(UnaryOp::Abs)}, {"Exp", unary(UnaryOp::Exp)},
      {"Log", unary(UnaryOp::Log)}, {"Sqrt", unary(UnaryOp::Sqrt)}, {"Tanh", unary(UnaryOp::Tanh)},
      {"Erf", unary(UnaryOp::Erf)}, {"Sigmoid", unary(UnaryOp::Sigmoid)}, {"Sin", unary(UnaryOp::Sin)},
      {"Cos", unary(UnaryOp::Cos)}, {"Floor", unary(UnaryOp::Floor)}, {"Ceil", unary(UnaryOp::Ceil)},
      {"Round", unary(UnaryOp::Round)}, {"Sign", unary(UnaryOp::Sign)}, {"Reciprocal", unary(UnaryOp::Recip)},
      {"Not", unary(UnaryOp::Not)}, {"IsNaN", unary(UnaryOp::IsNan)},
      {"Tan", unary(UnaryOp::Tan)}, {"Asin", unary(UnaryOp::Asin)}, {"Acos", unary(UnaryOp::Acos)},
      {"Atan", unary(UnaryOp::Atan)}, {"Sinh", unary(UnaryOp::Sinh)}, {"Cosh", unary(UnaryOp::Cosh)},
      {"Asinh", unary(UnaryOp::Asinh)}, {"Acosh", unary(UnaryOp::Acosh)}, {"Atanh", unary(UnaryOp::Atanh)},
      {"Identity", firstInput},
      {"Dropout", firstInput},  // inference: identity
      {"Cast", castTo},
      {"CastLike", castTo},
      {"Relu", [](const Node&, const Ins& in, DType) { return bin(BinaryOp::Max, in[0], fimm(0, in[0])); }},
      {"Gelu", gelu},
      {"Where", [](const Node&, const Ins& in, DType) { return Select::make(in[0], in[1], Cast::make(in[1]->dtype, in[2])); }},
      {"LeakyRelu", leakyRelu},
      {"PRelu", [](const Node&, const Ins& in, DType) {
         return Select::make(lt0(in[0]), bin(BinaryOp::Mul, in[1], in[0]), in[0]);
       }},
      {"Elu", [](const Node& n, const Ins& in, DType) {
         return Select::make(lt0(in[0]), expm1Scaled(in[0], n.attrFloat("alpha", 1.0)), in[0]);
       }},
      {"Selu", selu},
      {"Celu", celu},
      {"HardSigmoid", hardSigmoid},
      {"HardSwish", hardSwish},
      {"Softplus", [](const Node&, const Ins& in, DType) {
         return un(UnaryOp::Log, bin(BinaryOp::Add, un(UnaryOp::Exp, in[0]), fimm(1, in[0])));
       }},
      {"Softsign", [](const Node&, const Ins& in, DType) {
         return bin(BinaryOp::Div, in[0], bin(BinaryOp::Add, fimm(1, in[0]), un(UnaryOp::Abs, in[0])));
       }},
      {"ThresholdedRelu", thresholdedRelu},
      {"Mish", mish},
      {"Swish", [](const Node& n, const Ins& in, DType) {
         return bin(BinaryOp::Mul, in[0], un(UnaryOp::Sigmoid, bin(BinaryOp::Mul, fimm(n.attrFloat("alpha", 1.0), in[0]), in[0])));
       }},
      {"Shrink", shrink},
      {"Clip", clip},
      {"BatchNormalization", batchNormalization},
      {"Range", firstInput},            // built by the Emitter (needs the index)
      {"ConstantOfShape", firstInput},  // built by the Emitter
      {"IsInf", isInf},
      {"DequantizeLinear", dequantize},
      {"QuantizeLinear", quantize},
  };
  return t;
}

}  // namespace

bool isPointwiseOp(const std::string& op) { return table().count(op) > 0; }

std::optional<Expr> pointwiseExpr(const Node& n, const std::vector<Expr>& in, DType outType) {
  auto it = table().find(n.op());
  if (it == table().end() || in.empty() || !in[0]) return std::nullopt;
  return Cast::make(outType, it->second(n, in, outType));
}

std::optional<Expr> pointwiseOutputExpr(const Node& n, size_t output) {
  if (n.op() == "Dropout" && output == 1) return Cast::make(DType::Bool, intImm(1));  // inference: keep all
  return std::nullopt;
}

}  // namespace tessera::kernel
