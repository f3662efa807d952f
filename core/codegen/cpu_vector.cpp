// The CPU vector path: a vectorized loop whose body is f32 arithmetic (+ - * /, max, min, exp, erf) on consecutive
// elements becomes a loop over f32 vectors of the host's width (TSR_VF lanes a step, prelude.cpp), each
// statement one vector statement.
// A register buffer it accesses this way is declared as an array of vectors: indexed by constants once the
// loops around are unrolled, GCC keeps it in vector registers, which it does not do for a float array (a gemm's
// register tile measured 85 against 228 GFLOP/s on the build machine, docs/codegen.md). Any other loop keeps the
// generator's scalar form (`#pragma omp simd`).
#include <algorithm>
#include <functional>

#include "codegen/generator.h"
#include "codegen/vector_access.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

// f32 lanes of the widest vector (AVX-512). A kernel's vector loops' extents and its vector arrays' offsets are
// multiples of its lanes (cpuVectorLanes: 16, else 8 or 4), so every width the module may be compiled for
// (4, 8 or 16 lanes, capped at the kernel's) divides them.
constexpr int64_t kMaxLanes = 16;

// The most lanes (16, 8, 4) that divide `extent`; 0 for none.
int64_t lanesDividing(int64_t extent) {
  for (int64_t lanes = kMaxLanes; lanes >= 4; lanes /= 2)
    if (extent > 0 && extent % lanes == 0) return lanes;
  return 0;
}

int64_t countOf(const Buffer& b) { return numElements(b.shape); }

// Whether loop `f`'s body can be written on vectors, `arrays` being the register buffers declared as vectors.
class VectorForm {
 public:
  VectorForm(const Kernel& k, const ForStmt& f, const std::set<std::string>& arrays, int64_t lanes)
      : k_(k), lane_(f.h.var), width_(f.h.extent), lanes_(lanes), arrays_(arrays) {}

  bool ok(const ForStmt& f) {
    if (f.h.reduction || width_ % lanes_ != 0 || width_ == 0) return false;
    return collectWrites(f.body) && stmt(f.body);
  }
  const std::set<std::string>& registerBuffers() const { return registers_; }
  bool uniform(const Expr& e) const {
    bool u = true;
    walkExpr(e, [&](const ExprNode& n) {
      if (n.kind == ExprKind::Var) {
        const std::string& name = static_cast<const Var&>(n).name;
        u = u && name != lane_ && !vectors_.count(name);
      }
    });
    return u;
  }

 private:
  const Buffer* f32Buffer(const std::string& name) const {
    const Buffer* b = k_.findBuffer(name);
    return b && b->dtype == DType::F32 ? b : nullptr;
  }
  // buffer[indices] covers the lanes' consecutive elements (a vector array's at a multiple of kMaxLanes).
  bool laneAccess(const std::string& buffer, const std::vector<Expr>& indices) {
    const Buffer* b = f32Buffer(buffer);
    if (!b) return false;
    auto form = laneOffset(*b, indices, lane_, width_);
    if (!form || form->coef != 1) return false;
    if (b->scope == MemScope::Register) registers_.insert(buffer);
    return !arrays_.count(buffer) || form->divisor == 0 || form->divisor % lanes_ == 0;
  }
  // Each buffer the body writes is written by one statement and read only at the element it writes, so the
  // lanes do not depend on each other.
  bool collectWrites(const Stmt& s) {
    bool fine = true;
    walk(s, [&](StmtNode& n) {
      const std::string* buffer = nullptr;
      const std::vector<Expr>* idx = nullptr;
      if (n.kind == StmtKind::Store) buffer = &static_cast<StoreStmt&>(n).buffer, idx = &static_cast<StoreStmt&>(n).indices;
      if (n.kind == StmtKind::Reduce) buffer = &static_cast<ReduceStmt&>(n).buffer, idx = &static_cast<ReduceStmt&>(n).indices;
      if (!buffer) return;
      fine = fine && !written_.count(*buffer);
      written_[*buffer] = *idx;
    });
    return fine;
  }
  bool readsWhereWritten(const Load& l) const {
    auto it = written_.find(l.buffer);
    if (it == written_.end()) return true;
    if (it->second.size() != l.indices.size()) return false;
    for (size_t d = 0; d < l.indices.size(); ++d)
      if (l.indices[d] != it->second[d] && !(l.indices[d]->kind == ExprKind::Var && it->second[d]->kind == ExprKind::Var &&
                                              static_cast<const Var&>(*l.indices[d]).name == static_cast<const Var&>(*it->second[d]).name))
        return false;
    return true;
  }
  bool loadsOk(const Expr& e) const {
    bool fine = true;
    walkExpr(e, [&](const ExprNode& n) {
      if (n.kind == ExprKind::Load) fine = fine && readsWhereWritten(static_cast<const Load&>(n));
    });
    return fine;
  }
  bool expr(const Expr& e) {
    if (uniform(e)) return loadsOk(e);
    if (e->dtype != DType::F32) return false;
    switch (e->kind) {
      case ExprKind::Load: {
        const auto& l = static_cast<const Load&>(*e);
        return readsWhereWritten(l) && laneAccess(l.buffer, l.indices);
      }
      case ExprKind::Var: return true;  // not uniform: a vector of the body
      case ExprKind::Binary: {
        const auto& b = static_cast<const Binary&>(*e);
        bool arithmetic = b.op == BinaryOp::Add || b.op == BinaryOp::Sub || b.op == BinaryOp::Mul || b.op == BinaryOp::Div ||
                          b.op == BinaryOp::Max || b.op == BinaryOp::Min;
        return arithmetic && expr(b.a) && expr(b.b);
      }
      case ExprKind::Unary: {
        const auto& u = static_cast<const Unary&>(*e);
        return (u.op == UnaryOp::Neg || u.op == UnaryOp::Exp || u.op == UnaryOp::Erf) && expr(u.a);
      }
      default: return false;
    }
  }
  bool stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts)
          if (!stmt(c)) return false;
        return true;
      case StmtKind::Compute: {
        auto& c = static_cast<ComputeStmt&>(*s);
        if (c.dtype != DType::F32 || !expr(c.value)) return false;
        vectors_.insert(c.name);
        return true;
      }
      case StmtKind::Store: {
        auto& st = static_cast<StoreStmt&>(*s);
        return laneAccess(st.buffer, st.indices) && expr(st.value);
      }
      case StmtKind::Reduce: {
        auto& r = static_cast<ReduceStmt&>(*s);
        bool op = r.op == ReduceOp::Sum || r.op == ReduceOp::Max || r.op == ReduceOp::Min;
        return op && laneAccess(r.buffer, r.indices) && expr(r.value);
      }
      default: return false;
    }
  }

  const Kernel& k_;
  std::string lane_;
  int64_t width_, lanes_;
  std::set<std::string> arrays_;
  std::set<std::string> vectors_, registers_;
  std::map<std::string, std::vector<Expr>> written_;
};

std::set<std::string> candidateArrays(const Kernel& k, int64_t lanes) {
  std::set<std::string> pairs, out;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind == StmtKind::Reduce && static_cast<ReduceStmt&>(n).op == ReduceOp::MaxSumExp)
      pairs.insert(static_cast<ReduceStmt&>(n).buffer);
  });
  for (const Buffer& b : k.buffers)
    if (b.scope == MemScope::Register && b.dtype == DType::F32 && countOf(b) > 0 && countOf(b) % lanes == 0 &&
        !pairs.count(b.name))
      out.insert(b.name);
  return out;
}

}  // namespace

int64_t cpuVectorLanes(const Kernel& k) {
  int64_t lanes = kMaxLanes;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::For || static_cast<ForStmt&>(n).h.loopKind != LoopKind::Vectorized) return;
    if (int64_t fits = lanesDividing(static_cast<ForStmt&>(n).h.extent)) lanes = std::min(lanes, fits);
  });
  return lanes;
}

std::set<std::string> cpuVectorArrays(const Kernel& k) {
  const int64_t lanes = cpuVectorLanes(k);
  std::set<std::string> candidates = candidateArrays(k, lanes), out;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::For || static_cast<ForStmt&>(n).h.loopKind != LoopKind::Vectorized) return;
    auto& f = static_cast<ForStmt&>(n);
    VectorForm form(k, f, candidates, lanes);
    if (!form.ok(f)) return;
    for (const std::string& b : form.registerBuffers())
      if (candidates.count(b)) out.insert(b);
  });
  return out;
}

// The vector text of an expression VectorForm accepted; a uniform one is the scalar text (GCC widens a scalar
// operand of a vector operation), splat when it stands alone.
namespace {
std::string vectorExpr(const ExprPrinter& ep, const VectorForm& form, const Expr& e, bool alone) {
  if (form.uniform(e)) return alone ? ep.vectorName("tsr_vsplat") + "(" + ep.print(e) + ")" : ep.print(e);
  switch (e->kind) {
    case ExprKind::Load: {
      const auto& l = static_cast<const Load&>(*e);
      std::string at = ep.linear(l.buffer, l.indices);
      if (ep.isVectorArray(l.buffer)) return identifier(l.buffer) + "[(" + at + ") / " + ep.vectorName("TSR_VF") + "]";
      return ep.vectorName("tsr_vload") + "(&" + identifier(l.buffer) + "[" + at + "])";
    }
    case ExprKind::Var: return identifier(static_cast<const Var&>(*e).name);
    case ExprKind::Unary: {
      const auto& u = static_cast<const Unary&>(*e);
      if (u.op == UnaryOp::Exp) return "tsr_vexp(" + vectorExpr(ep, form, u.a, true) + ")";  // prelude: within 0.85 ulp
      if (u.op == UnaryOp::Erf) return "tsr_verf(" + vectorExpr(ep, form, u.a, true) + ")";  // prelude: within 2.2 ulp
      return "(-" + vectorExpr(ep, form, u.a, false) + ")";
    }
    default: {
      const auto& b = static_cast<const Binary&>(*e);
      if (b.op == BinaryOp::Max || b.op == BinaryOp::Min)  // NaN-keeping, as the scalar tsr_fmax; both operands vectors
        return std::string(b.op == BinaryOp::Max ? "tsr_vfmax(" : "tsr_vfmin(") + vectorExpr(ep, form, b.a, true) + ", " +
               vectorExpr(ep, form, b.b, true) + ")";
      return "(" + vectorExpr(ep, form, b.a, false) + " " + std::string(binaryOpName(b.op)) + " " +
             vectorExpr(ep, form, b.b, false) + ")";
    }
  }
}
}  // namespace

bool Generator::cpuVectorLoop(const ForStmt& f) {
  if (target_ != Target::Cpu) return false;
  VectorForm form(k_, f, ep_.vectorArrays(), ep_.vectorLanes());  // decided once, in the Generator's constructor
  if (!form.ok(f)) return false;
  std::string v = identifier(f.h.var);
  const std::string step = ep_.vectorName("TSR_VF"), type = ep_.vectorName("tsr_vf");
  line("#pragma GCC unroll " + std::to_string(std::min<int64_t>(f.h.extent / 4, 64)), f.provenance);
  line("for (" + indexType(target_) + " " + v + " = 0; " + v + " < " + std::to_string(f.h.extent) + "; " + v +
           " += " + step + ") {  // vectorized: " + step + " f32 lanes a step",
       f.provenance);
  ++indent_;
  std::function<void(const Stmt&)> emit = [&](const Stmt& s) {
    if (s->kind == StmtKind::Block) {
      for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts) emit(c);
      return;
    }
    const auto& prov = s->provenance;
    if (s->kind == StmtKind::Compute) {
      auto& c = static_cast<ComputeStmt&>(*s);
      line("const " + type + " " + identifier(c.name) + " = " + vectorExpr(ep_, form, c.value, true) + ";" + comment(prov), prov);
      return;
    }
    bool reduce = s->kind == StmtKind::Reduce;
    const std::string& buffer = reduce ? static_cast<ReduceStmt&>(*s).buffer : static_cast<StoreStmt&>(*s).buffer;
    const auto& idx = reduce ? static_cast<ReduceStmt&>(*s).indices : static_cast<StoreStmt&>(*s).indices;
    std::string value = vectorExpr(ep_, form, reduce ? static_cast<ReduceStmt&>(*s).value : static_cast<StoreStmt&>(*s).value, true);
    std::string at = ep_.linear(buffer, idx), name = identifier(buffer);
    const ReduceOp op = reduce ? static_cast<ReduceStmt&>(*s).op : ReduceOp::Sum;
    // acc op= value: a sum adds, a max or min combines NaN-keeping.
    auto combine = [&](const std::string& acc) {
      if (!reduce) return value;
      if (op == ReduceOp::Sum) return acc + " + " + value;
      return std::string(op == ReduceOp::Max ? "tsr_vfmax(" : "tsr_vfmin(") + acc + ", " + value + ")";
    };
    if (ep_.isVectorArray(buffer)) {
      std::string element = name + "[(" + at + ") / " + step + "]";
      if (reduce && op == ReduceOp::Sum) line(element + " += " + value + ";" + comment(prov), prov);
      else line(element + " = " + combine(element) + ";" + comment(prov), prov);
    } else {
      std::string old = ep_.vectorName("tsr_vload") + "(&" + name + "[" + at + "])";
      line(ep_.vectorName("tsr_vstore") + "(&" + name + "[" + at + "], " + combine(old) + ");" + comment(prov), prov);
    }
  };
  emit(f.body);
  --indent_;
  line("}", f.provenance);
  return true;
}

}  // namespace tessera::codegen::detail
