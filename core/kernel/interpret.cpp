#include "kernel/interpret.h"

#include <cmath>
#include <map>

#include "ir/error.h"

namespace tessera::kernel {
namespace {

// Rounds a double to what a value of type `t` can hold.
double roundTo(DType t, double v) {
  switch (t) {
    case DType::F32: return double(float(v));
    case DType::F16: return double(halfToFloat(floatToHalf(float(v))));
    case DType::BF16: return double(bf16ToFloat(floatToBf16(float(v))));
    case DType::F64: return v;
    case DType::Bool: return v != 0 ? 1 : 0;
    case DType::F8E4M3FN: case DType::F8E4M3FNUZ: case DType::F8E5M2: case DType::F8E5M2FNUZ: case DType::F8E8M0:
      return float8ToDouble(toFloat8(v, t, /*saturate=*/true), t);  // as generated code stores it
    case DType::I4: case DType::U4: case DType::I2: case DType::U2: {  // wrapped to the width, as codegen casts
      if (!std::isfinite(v)) return 0;
      const int64_t x = v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : int64_t(v);
      const int64_t bits = packedBits(t), low = x & ((int64_t(1) << bits) - 1), sign = int64_t(1) << (bits - 1);
      return double(isSigned(t) ? (low ^ sign) - sign : low);
    }
    default: return std::isfinite(v) ? std::trunc(v) : 0;
  }
}

double unary(UnaryOp op, double a) {
  switch (op) {
    case UnaryOp::Neg: return -a;
    case UnaryOp::Abs: return std::fabs(a);
    case UnaryOp::Exp: return std::exp(a);
    case UnaryOp::Log: return std::log(a);
    case UnaryOp::Sqrt: return std::sqrt(a);
    case UnaryOp::Rsqrt: return 1 / std::sqrt(a);
    case UnaryOp::Tanh: return std::tanh(a);
    case UnaryOp::Erf: return std::erf(a);
    case UnaryOp::Sigmoid: return 1 / (1 + std::exp(-a));
    case UnaryOp::Sin: return std::sin(a);
    case UnaryOp::Cos: return std::cos(a);
    case UnaryOp::Floor: return std::floor(a);
    case UnaryOp::Ceil: return std::ceil(a);
    case UnaryOp::Round: return std::nearbyint(a);
    case UnaryOp::Sign: return a > 0 ? 1 : a < 0 ? -1 : 0;
    case UnaryOp::Recip: return 1 / a;
    case UnaryOp::Not: return a == 0 ? 1 : 0;
    case UnaryOp::IsNan: return std::isnan(a) ? 1 : 0;
    case UnaryOp::IsInf: return std::isinf(a) ? 1 : 0;
    case UnaryOp::Tan: return std::tan(a);
    case UnaryOp::Asin: return std::asin(a);
    case UnaryOp::Acos: return std::acos(a);
    case UnaryOp::Atan: return std::atan(a);
    case UnaryOp::Sinh: return std::sinh(a);
    case UnaryOp::Cosh: return std::cosh(a);
    case UnaryOp::Asinh: return std::asinh(a);
    case UnaryOp::Acosh: return std::acosh(a);
    case UnaryOp::Atanh: return std::atanh(a);
  }
  return 0;
}

double binary(BinaryOp op, double a, double b, bool integer) {
  switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return integer ? (b == 0 ? 0 : std::trunc(a / b)) : a / b;
    case BinaryOp::Mod: return integer ? (b == 0 ? 0 : double(int64_t(a) % int64_t(b))) : std::fmod(a, b);
    case BinaryOp::Max: return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case BinaryOp::Min: return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    case BinaryOp::Pow: return std::pow(a, b);
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::And: return a != 0 && b != 0;
    case BinaryOp::Or: return a != 0 || b != 0;
    case BinaryOp::Xor: return (a != 0) != (b != 0);
  }
  return 0;
}

class Interpreter {
 public:
  explicit Interpreter(const Kernel& k) : k_(k) {}
  std::map<std::string, std::vector<double>> buffers;

  void run(const Stmt& s) { visitStmt(*s, *this); }

  void operator()(const ForStmt& s) {
    for (int64_t i = 0; i < s.h.extent; ++i) {
      scalars_[s.h.var] = double(i);
      run(s.body);
    }
  }
  void operator()(const BlockStmt& s) {
    for (const Stmt& c : s.stmts) run(c);
  }
  void operator()(const AllocateStmt& s) {
    const Buffer* b = k_.findBuffer(s.buffer);
    if (!b) fail("kernel '" + k_.id + "': alloc of unknown buffer '" + s.buffer + "'");
    buffers[s.buffer].assign(size_t(numElements(b->shape)), 0.0);
  }
  void operator()(const ComputeStmt& s) { scalars_[s.name] = roundTo(s.dtype, eval(s.value)); }
  void operator()(const StoreStmt& s) { slot(s.buffer, s.indices) = roundTo(k_.findBuffer(s.buffer)->dtype, eval(s.value)); }
  void operator()(const ReduceStmt& s) {
    double& acc = slot(s.buffer, s.indices);
    double v = eval(s.value);
    if (s.op == ReduceOp::MaxSumExp) return maxSumExp(s, acc, v);
    double r = s.op == ReduceOp::Sum ? acc + v : s.op == ReduceOp::Max ? binary(BinaryOp::Max, acc, v, false)
                                                                        : binary(BinaryOp::Min, acc, v, false);
    acc = roundTo(k_.findBuffer(s.buffer)->dtype, r);
  }
  // The pair [m, s] at acc: the same update as the generated code's tsr_maxsumexp (codegen/prelude.cpp).
  void maxSumExp(const ReduceStmt& r, double& acc, double x) {
    const Buffer* b = k_.findBuffer(r.buffer);
    if (b->shape.empty() || b->shape.back() != 2 || !isConst(r.indices.back(), 0))
      fail("kernel '" + k_.id + "': maxsumexp on '" + r.buffer + "' must address element 0 of a last dimension of 2");
    double& m = acc;
    double& sum = (&acc)[1];
    if (x > m) {
      sum = roundTo(b->dtype, sum * roundTo(b->dtype, std::exp(m - x)) + 1);
      m = x;
    } else if (x != -INFINITY) {
      sum = roundTo(b->dtype, sum + roundTo(b->dtype, std::exp(x - m)));
    }
  }
  void operator()(const IfThenStmt& s) {
    if (eval(s.cond) != 0) run(s.body);
  }
  void operator()(const AsyncCopyStmt& s) {
    slot(s.dst, s.dstIndices) = !s.inside || eval(s.inside) != 0 ? slot(s.src, s.srcIndices) : 0.0;
  }
  void operator()(const StmtNode&) {}  // Sync, PipelineMarker: nothing to do in a serial run

  double eval(const Expr& e) { return visitExpr(*e, ExprEval{*this}); }

 private:
  struct ExprEval {
    Interpreter& in;
    double operator()(const IntImm& n) const { return double(n.value); }
    double operator()(const FloatImm& n) const { return n.value; }
    double operator()(const Var& n) const {
      auto it = in.scalars_.find(n.name);
      if (it == in.scalars_.end()) fail("kernel '" + in.k_.id + "': '" + n.name + "' is used before it is defined");
      return it->second;
    }
    double operator()(const Load& n) const { return in.slot(n.buffer, n.indices); }
    double operator()(const Unary& n) const { return roundTo(n.dtype, unary(n.op, in.eval(n.a))); }
    double operator()(const Binary& n) const {
      bool integer = isInteger(n.a->dtype);
      return roundTo(n.dtype, binary(n.op, in.eval(n.a), in.eval(n.b), integer));
    }
    double operator()(const Select& n) const { return in.eval(n.cond) != 0 ? in.eval(n.t) : in.eval(n.f); }
    double operator()(const Cast& n) const { return roundTo(n.dtype, in.eval(n.a)); }
    double operator()(const CheckedIndex& n) const {
      int64_t i = int64_t(in.eval(n.value));
      if (i < -n.extent || i >= n.extent) {
        if (n.check < 0 || size_t(n.check) >= in.k_.indexChecks.size())
          fail("kernel '" + in.k_.id + "': index check " + std::to_string(n.check) + " is not in the kernel's list");
        fail(indexCheckError(in.k_.indexChecks[size_t(n.check)], i, int64_t(in.eval(n.position))));
      }
      return double(i < 0 ? i + n.extent : i);
    }
  };

  double& slot(const std::string& name, const std::vector<Expr>& indices) {
    const Buffer* b = k_.findBuffer(name);
    auto it = buffers.find(name);
    if (!b || it == buffers.end()) fail("kernel '" + k_.id + "': buffer '" + name + "' is used before it is allocated");
    if (indices.size() != b->shape.size()) fail("kernel '" + k_.id + "': buffer '" + name + "' indexed with the wrong rank");
    int64_t flat = 0;
    for (size_t d = 0; d < indices.size(); ++d) {
      int64_t i = int64_t(eval(indices[d]));
      if (i < 0 || i >= b->shape[d])
        fail("kernel '" + k_.id + "': index " + std::to_string(i) + " out of bounds in dimension " + std::to_string(d) +
             " of '" + name + "'");
      flat = flat * b->shape[d] + i;
    }
    return it->second[size_t(flat)];
  }

  const Kernel& k_;
  std::map<std::string, double> scalars_;
};

}  // namespace

std::vector<Tensor> interpretKernel(const Kernel& k, const std::vector<const Tensor*>& inputs) {
  Interpreter in(k);
  size_t next = 0;
  for (const Buffer& b : k.buffers) {
    if (b.role == BufferRole::Input) {
      if (next >= inputs.size() || !inputs[next]) fail("kernel '" + k.id + "': no tensor for input '" + b.name + "'");
      const Tensor& t = *inputs[next++];
      if (t.shape() != b.graphShape()) fail("kernel '" + k.id + "': input '" + b.name + "' has shape " + shapeToString(t.shape()));
      in.buffers[b.name] = packTensor(b, t).toDoubles();
    } else if (b.role == BufferRole::Output) {
      in.buffers[b.name].assign(size_t(numElements(b.shape)), 0.0);
    }
  }
  in.run(k.body);
  std::vector<Tensor> out;
  for (const Buffer& b : k.buffers)
    if (b.role == BufferRole::Output)
      out.push_back(Tensor::fromDoubles(b.dtype, b.graphShape(), in.buffers[b.name]));
  return out;
}

}  // namespace tessera::kernel
