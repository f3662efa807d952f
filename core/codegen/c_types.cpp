#include "codegen/c_types.h"

#include <cmath>
#include <cstdio>

#include "ir/error.h"

namespace tessera::codegen {
bool hasGeneratedForm(DType t) {
  return detail::float8Code(t) >= 0 || (!isFloat8(t) && t != DType::F4E2M1 && t != DType::String);
}
}  // namespace tessera::codegen

namespace tessera::codegen::detail {

using namespace kernel;

bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

int float8Code(DType t) {
  switch (t) {
    case DType::F8E4M3FN: return 0;
    case DType::F8E4M3FNUZ: return 1;
    case DType::F8E5M2: return 2;
    case DType::F8E5M2FNUZ: return 3;
    case DType::F8E8M0: return 4;
    default: return -1;
  }
}

namespace {
// A float8 value's storage byte as the f32 it holds, and an f32 (or double) rounded into the byte, saturating
// (Cast's default; saturate = 0 stays on the host: kernel/lower/lower_ops.cpp).
std::string float8Decode(DType t, const std::string& bits) {
  return "tsr_f8_decode(" + bits + ", " + std::to_string(float8Code(t)) + ")";
}
std::string float8Encode(DType t, const std::string& v) {
  return "tsr_f8_encode((double)(" + v + "), " + std::to_string(float8Code(t)) + ", 1)";
}
}  // namespace

namespace {
// The 4- and 2-bit integers are held a byte each (ir/dtype.h), sign-extended or zero-extended: generated code
// reads them as 8-bit integers, and a value made in one wraps to its width, as Tensor::setInt stores it.
std::string wrapToWidth(DType t, const std::string& v) {
  const int bits = packedBits(t);
  const std::string mask = std::to_string((1 << bits) - 1), sign = std::to_string(1 << (bits - 1));
  const std::string low = "((int)(" + v + ") & " + mask + ")";
  return isSigned(t) ? "((" + low + " ^ " + sign + ") - " + sign + ")" : low;
}
}  // namespace

std::string storageType(DType t, Target target) {
  bool cuda = target == Target::Cuda;
  if (!hasGeneratedForm(t))
    fail(std::string(dtypeName(t)) + " values have no form in generated code yet; the cpu and cuda "
         "backends do not take float4");
  if (packedBits(t) > 0) return isSigned(t) ? (cuda ? "signed char" : "int8_t") : (cuda ? "unsigned char" : "uint8_t");
  switch (t) {
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::F16: return cuda ? "__half" : "uint16_t";
    case DType::BF16: return cuda ? "__nv_bfloat16" : "uint16_t";
    case DType::I64: return cuda ? "long long" : "int64_t";
    case DType::I32: return cuda ? "int" : "int32_t";
    case DType::I16: return cuda ? "short" : "int16_t";
    case DType::I8: return cuda ? "signed char" : "int8_t";
    case DType::U8: return cuda ? "unsigned char" : "uint8_t";
    case DType::F8E4M3FN: case DType::F8E4M3FNUZ: case DType::F8E5M2: case DType::F8E5M2FNUZ: case DType::F8E8M0:
      return cuda ? "unsigned char" : "uint8_t";
    case DType::Bool: return "bool";
    default: break;
  }
  // Other unsigned integer types, by size (the enum grows; this keeps up without a case each).
  std::string bits = std::to_string(dtypeSize(t) * 8);
  if (cuda) return dtypeSize(t) == 8 ? "unsigned long long" : dtypeSize(t) == 4 ? "unsigned int" : "unsigned short";
  return "uint" + bits + "_t";
}

std::string computeType(DType t, Target target) {
  return isHalf(t) || float8Code(t) >= 0 ? "float" : storageType(t, target);
}
std::string indexType(Target target) { return target == Target::Cuda ? "long long" : "int64_t"; }

const Buffer& ExprPrinter::buffer(const std::string& name) const {
  const Buffer* b = k_.findBuffer(name);
  if (!b) fail("codegen: kernel '" + k_.id + "': unknown buffer '" + name + "'");
  return *b;
}

bool ExprPrinter::storedAsStorage(const std::string& name) const {
  return buffer(name).scope != MemScope::Register;
}

std::string ExprPrinter::toStorage(const std::string& name, const std::string& v) const {
  const Buffer& b = buffer(name);
  if (float8Code(b.dtype) >= 0 && b.scope != MemScope::Register) return float8Encode(b.dtype, v);
  if (!isHalf(b.dtype) || b.scope == MemScope::Register) return v;
  if (target_ == Target::Cuda) return (b.dtype == DType::F16 ? "__float2half(" : "__float2bfloat16(") + v + ")";
  return (b.dtype == DType::F16 ? "tsr_f2h(" : "tsr_f2bf(") + v + ")";
}

std::string ExprPrinter::fromStorage(const std::string& name, const std::string& v) const {
  const Buffer& b = buffer(name);
  if (float8Code(b.dtype) >= 0 && b.scope != MemScope::Register) return float8Decode(b.dtype, v);
  if (!isHalf(b.dtype) || b.scope == MemScope::Register) return v;
  if (target_ == Target::Cuda) return (b.dtype == DType::F16 ? "__half2float(" : "__bfloat162float(") + v + ")";
  return (b.dtype == DType::F16 ? "tsr_h2f(" : "tsr_bf2f(") + v + ")";
}

std::string ExprPrinter::linear(const std::string& name, const std::vector<Expr>& idx) const {
  const Buffer& b = buffer(name);
  if (idx.empty()) return "0";
  if (idx.size() != b.shape.size())
    fail("codegen: kernel '" + k_.id + "': buffer '" + name + "' of rank " + std::to_string(b.shape.size()) +
         " indexed with " + std::to_string(idx.size()) + " indices");
  return b.swizzleBytes ? swizzled(b, idx, true) : rowMajor(b, idx, idx.size());
}

std::string ExprPrinter::atomOffset(const std::string& name, const std::vector<Expr>& idx) const {
  const Buffer& b = buffer(name);
  return b.swizzleBytes ? swizzled(b, idx, false) : linear(name, idx);
}

// The row-major offset of the first `dims` indices over the first `dims` extents. Horner form:
// ((i0 * s1 + i1) * s2 + i2); extents of 1 contribute nothing.
std::string ExprPrinter::rowMajor(const Buffer& b, const std::vector<Expr>& idx, size_t dims) const {
  std::string s;
  for (size_t d = 0; d < dims; ++d) {
    bool zero = isConst(idx[d], 0);
    if (s.empty()) {
      if (!zero) s = print(idx[d]);
      continue;
    }
    if (b.shape[d] != 1) s = "(" + s + ") * " + std::to_string(b.shape[d]);
    if (!zero) s += " + " + print(idx[d]);
  }
  return s.empty() ? "0" : s;
}

// Buffer::swizzleBytes: with W elements to a chunk of the swizzle's width and R rows (the leading indices,
// row-major), element (row, c) lies at chunk (c / W) * R * W + row * W + c % W, and with the XOR its 16-byte
// piece within the chunk is (c % W) / P ^ row % 8 (P elements to a piece).
std::string ExprPrinter::swizzled(const Buffer& b, const std::vector<Expr>& idx, bool xorPieces) const {
  int64_t elem = int64_t(dtypeSize(b.dtype)), chunk = b.swizzleBytes / elem, piece = 16 / elem;
  int64_t rows = numElements(b.shape) / b.shape.back();
  std::string row = "(" + rowMajor(b, idx, idx.size() - 1) + ")", col = "(" + print(idx.back()) + ")";
  std::string within = b.shape.back() == chunk ? col : "(" + col + " % " + std::to_string(chunk) + ")";
  std::string out = b.shape.back() == chunk ? "" : "(" + col + " / " + std::to_string(chunk) + ") * " + std::to_string(rows * chunk) + " + ";
  out += row + " * " + std::to_string(chunk) + " + ";
  if (!xorPieces) return out + within;
  int shift = 0;
  while ((int64_t(1) << shift) < piece) ++shift;
  return out + "(" + within + " ^ ((" + row + " & 7) << " + std::to_string(shift) + "))";
}

std::string ExprPrinter::element(const std::string& name, const std::vector<Expr>& idx) const {
  std::string at = linear(name, idx);
  if (!isVectorArray(name)) return identifier(name) + "[" + at + "]";
  const std::string lanes = vectorName("TSR_VF");
  return identifier(name) + "[(" + at + ") / " + lanes + "][(" + at + ") % " + lanes + "]";
}

std::string ExprPrinter::fn(const std::string& base, DType t) const {
  return t == DType::F64 ? base : base + "f";
}

std::string ExprPrinter::floatLiteral(double v, DType t) const {
  if (!isFloat(t)) return std::string("((") + computeType(t, target_) + ")" + std::to_string(static_cast<int64_t>(v)) + ")";
  std::string s;
  if (std::isnan(v)) s = "NAN";
  else if (std::isinf(v)) s = v < 0 ? "(-INFINITY)" : "INFINITY";
  if (!s.empty()) return t == DType::F64 ? "((double)" + s + ")" : s;
  char buf[64];
  std::snprintf(buf, sizeof buf, t == DType::F64 ? "%.17g" : "%.9g", v);
  s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (t != DType::F64) s += "f";
  return v < 0 ? "(" + s + ")" : s;
}

std::string ExprPrinter::print(const Expr& e) const {
  return visitExpr(*e, [&](const auto& n) -> std::string {
    using N = std::decay_t<decltype(n)>;
    if constexpr (std::is_same_v<N, IntImm>) {
      std::string s = std::to_string(n.value);
      if (n.value > 2147483647LL || n.value < -2147483647LL) s += "LL";
      return n.value < 0 ? "(" + s + ")" : s;
    } else if constexpr (std::is_same_v<N, FloatImm>) {
      return floatLiteral(n.value, n.dtype);
    } else if constexpr (std::is_same_v<N, Var>) {
      return identifier(n.name);
    } else if constexpr (std::is_same_v<N, Load>) {
      if (auto it = loadText_.find(&n); it != loadText_.end()) return it->second;
      return fromStorage(n.buffer, element(n.buffer, n.indices));
    } else if constexpr (std::is_same_v<N, Unary>) {
      return unary(n);
    } else if constexpr (std::is_same_v<N, Binary>) {
      return binary(n);
    } else if constexpr (std::is_same_v<N, Select>) {
      return std::string("(") + print(n.cond) + " ? " + print(n.t) + " : " + print(n.f) + ")";
    } else if constexpr (std::is_same_v<N, CheckedIndex>) {  // prelude.cpp
      return "tsr_index(tsr_err, " + std::to_string(n.check) + ", " + print(n.value) + ", " + std::to_string(n.extent) +
             ", " + print(n.position) + ")";
    } else {
      return cast(n);
    }
  });
}

std::string ExprPrinter::unary(const Unary& u) const {
  std::string a = print(u.a);
  DType t = u.a->dtype;
  std::string ct = computeType(t, target_);
  bool fl = isFloat(t);
  std::string one = fl ? floatLiteral(1.0, t) : "1";
  std::string stdp = target_ == Target::Cpu ? "__builtin_" : "";  // the C++ prelude has no <cmath>
  switch (u.op) {
    case UnaryOp::Neg: return "(-" + a + ")";
    case UnaryOp::Abs: return fl ? fn("fabs", t) + "(" + a + ")" : "(" + a + " < 0 ? -" + a + " : " + a + ")";
    case UnaryOp::Exp: return fn("exp", t) + "(" + a + ")";
    case UnaryOp::Log: return fn("log", t) + "(" + a + ")";
    case UnaryOp::Sqrt: return fn("sqrt", t) + "(" + a + ")";
    case UnaryOp::Rsqrt: return std::string("(") + one + " / " + fn("sqrt", t) + "(" + a + "))";
    case UnaryOp::Tanh: return fn("tanh", t) + "(" + a + ")";
    case UnaryOp::Erf: return fn("erf", t) + "(" + a + ")";
    case UnaryOp::Sigmoid: return std::string("(") + one + " / (" + one + " + " + fn("exp", t) + "(-" + a + ")))";
    case UnaryOp::Sin: return fn("sin", t) + "(" + a + ")";
    case UnaryOp::Cos: return fn("cos", t) + "(" + a + ")";
    case UnaryOp::Floor: return fl ? fn("floor", t) + "(" + a + ")" : a;
    case UnaryOp::Ceil: return fl ? fn("ceil", t) + "(" + a + ")" : a;
    case UnaryOp::Round: return fl ? fn("rint", t) + "(" + a + ")" : a;
    case UnaryOp::Sign: return std::string("((") + ct + ")((" + a + " > 0) - (" + a + " < 0)))";
    case UnaryOp::Recip: return std::string("(") + one + " / " + a + ")";
    case UnaryOp::Not: return "(!" + a + ")";
    case UnaryOp::IsNan: return fl ? stdp + "isnan(" + a + ")" : "false";
    case UnaryOp::IsInf: return fl ? stdp + "isinf(" + a + ")" : "false";
    case UnaryOp::Tan: case UnaryOp::Asin: case UnaryOp::Acos: case UnaryOp::Atan: case UnaryOp::Sinh:
    case UnaryOp::Cosh: case UnaryOp::Asinh: case UnaryOp::Acosh: case UnaryOp::Atanh:
      return fn(std::string(unaryOpName(u.op)), t) + "(" + a + ")";  // the C library's name: tanf, asinhf, ...
  }
  fail("codegen: kernel '" + k_.id + "': unknown unary op");
}

std::string ExprPrinter::binary(const Binary& b) const {
  std::string x = print(b.a), y = print(b.b);
  DType t = b.a->dtype;
  bool fl = isFloat(t);
  std::string ct = computeType(t, target_);
  switch (b.op) {
    case BinaryOp::Mod:
      if (fl) return fn("fmod", t) + "(" + x + ", " + y + ")";
      break;
    case BinaryOp::Max:  // floats keep a NaN, as the reference does (fmax would drop it)
      return (fl ? "tsr_fmax(" : "tsr_max(") + x + ", " + y + ")";
    case BinaryOp::Min:
      return (fl ? "tsr_fmin(" : "tsr_min(") + x + ", " + y + ")";
    case BinaryOp::Pow:
      if (fl) return fn("pow", t) + "(" + x + ", " + y + ")";
      return std::string("((") + ct + ")pow((double)" + x + ", (double)" + y + "))";
    case BinaryOp::Xor: return "((bool)(" + x + ") != (bool)(" + y + "))";
    default: break;
  }
  return std::string("(") + x + " " + std::string(binaryOpName(b.op)) + " " + y + ")";
}

std::string ExprPrinter::cast(const Cast& c) const {
  std::string a = print(c.a);
  DType to = c.dtype, from = c.a->dtype;
  if (to == DType::Bool) return std::string("(") + a + " != 0)";
  if (float8Code(to) >= 0) return float8Decode(to, float8Encode(to, a));  // the value rounded into the format
  if (isHalf(to)) {
    std::string f = "(float)(" + a + ")";
    if (target_ == Target::Cuda)
      return to == DType::F16 ? "__half2float(__float2half(" + f + "))" : "__bfloat162float(__float2bfloat16(" + f + "))";
    return to == DType::F16 ? "tsr_h2f(tsr_f2h(" + f + "))" : "tsr_bf2f(tsr_f2bf(" + f + "))";
  }
  if (isFloat(from) && isInteger(to)) {
    // Out-of-range and NaN conversions are undefined in C; go through a saturating helper of the target.
    a = "tsr_ftoi((double)(" + a + "))";
    if (packedBits(to) > 0) a = wrapToWidth(to, a);
    return std::string("((") + computeType(to, target_) + ")" + a + ")";
  }
  if (packedBits(to) > 0) return std::string("((") + computeType(to, target_) + ")" + wrapToWidth(to, a) + ")";
  return std::string("((") + computeType(to, target_) + ")(" + a + "))";
}

std::string reduceCombine(ReduceOp op, DType t, Target target, const std::string& a, const std::string& b) {
  (void)target;
  bool fl = isFloat(t);
  switch (op) {
    case ReduceOp::Sum: return a + " + " + b;
    case ReduceOp::Max: return (fl ? "tsr_fmax(" : "tsr_max(") + a + ", " + b + ")";  // a NaN is kept
    case ReduceOp::Min: return (fl ? "tsr_fmin(" : "tsr_min(") + a + ", " + b + ")";
    case ReduceOp::MaxSumExp: break;  // a pair, combined by tsr_maxsumexp_merge (combine.cpp)
  }
  return a;
}

std::string reduceIdentity(ReduceOp op, DType t, Target target) {
  std::string ct = computeType(t, target);
  if (op == ReduceOp::Sum) return std::string("(") + ct + ")0";
  if (isFloat(t)) return op == ReduceOp::Max ? "(" + ct + ")(-INFINITY)" : "(" + ct + ")INFINITY";
  bool mx = op == ReduceOp::Max;  // the identity is the type's lowest (max) or highest (min) value
  if (t == DType::Bool) return mx ? "false" : "true";
  if (!isSigned(t)) return mx ? "(" + ct + ")0" : "(" + ct + ")(-1)";  // unsigned: -1 converts to the highest
  switch (dtypeSize(t)) {
    case 8: return mx ? "(" + ct + ")(-9223372036854775807LL - 1)" : "(" + ct + ")9223372036854775807LL";
    case 4: return mx ? "(" + ct + ")(-2147483647 - 1)" : "(" + ct + ")2147483647";
    case 2: return mx ? "(" + ct + ")(-32768)" : "(" + ct + ")32767";
    default: return mx ? "(" + ct + ")(-128)" : "(" + ct + ")127";
  }
}

}  // namespace tessera::codegen::detail
