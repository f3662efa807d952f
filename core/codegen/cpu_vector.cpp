// The CPU vector path: a vectorized loop whose body is f32 arithmetic (+ - * /, max, min, exp, erf) on consecutive
// elements becomes a loop over f32 vectors of the host's width (TSR_VF lanes a step, prelude.cpp), each
// statement one vector statement.
// A guard on the lanes (`base + lane < bound`, `>=`, and conditions free of the lane, joined by &&: a padded
// patch's row, a tile's overhang) masks them: the statements under it load and store only the lanes it keeps,
// and `cond ? x[.. lane ..] : c` loads x's kept lanes and puts c in the others (tsr_vloadm, tsr_vstorem).
// A register buffer it accesses this way is declared as an array of vectors: indexed by constants once the
// loops around are unrolled, GCC keeps it in vector registers, which it does not do for a float array (a gemm's
// register tile measured 85 against 228 GFLOP/s on the build machine, docs/codegen.md). Any other loop keeps the
// generator's scalar form (`#pragma omp simd`).
#include <algorithm>
#include <functional>
#include <optional>

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

// The lanes a condition keeps, relative to the vector's first lane (the loop variable's value in the emitted
// loop): those in [max(lo), min(hi)) where every `uniform` condition holds.
struct LaneRange {
  std::vector<Expr> lo, hi, uniform;
};

std::string joined(const ExprPrinter& ep, const std::vector<Expr>& terms, const std::string& fn, const std::string& none) {
  if (terms.empty()) return none;
  std::string out = "(int64_t)(" + ep.print(terms.front()) + ")";
  for (size_t i = 1; i < terms.size(); ++i) out = fn + "<int64_t>(" + out + ", " + ep.print(terms[i]) + ")";
  return out;
}
std::string loText(const ExprPrinter& ep, const LaneRange& r) { return joined(ep, r.lo, "tsr_max", "(int64_t)0"); }
// No upper bound is 64 lanes, past any vector's.
std::string hiText(const ExprPrinter& ep, const LaneRange& r) {
  std::string hi = joined(ep, r.hi, "tsr_min", "(int64_t)64");
  if (r.uniform.empty()) return hi;
  std::string cond = ep.print(r.uniform.front());
  for (size_t i = 1; i < r.uniform.size(); ++i) cond += " && " + ep.print(r.uniform[i]);
  return "((" + cond + ") ? " + hi + " : (int64_t)0)";
}
// One lane test, c·i OP gap on lane i (i counted from the vector's first lane), and a conjunction of them.
struct LaneTest {
  int64_t coef;
  BinaryOp op;
  Expr gap;
};
struct LaneTests {
  std::vector<LaneTest> tests;
  std::vector<Expr> uniform;
};

// The tests as a mask vector (tsr_vi: i32 lanes as many as the f32 vector's): lane indices times c against the
// gap clamped to i32 (a gap that far out passes or fails every lane alike).
std::string maskText(const ExprPrinter& ep, const LaneTests& t) {
  const std::string vi = ep.vectorName("tsr_vi");
  std::string mask;
  for (const LaneTest& test : t.tests) {
    std::string one = "(" + ep.vectorName("tsr_viota") + "() * " + std::to_string(test.coef) + " " +
                      std::string(binaryOpName(test.op)) + " tsr_gap(" + ep.print(test.gap) + "))";
    mask = mask.empty() ? one : mask + " & " + one;
  }
  if (mask.empty()) mask = "(" + vi + "){} - 1";
  for (const Expr& u : t.uniform) mask = "(" + mask + ") & ((" + vi + "){} - (int32_t)(" + ep.print(u) + "))";
  return "(" + mask + ")";
}

LaneRange intersect(LaneRange a, const LaneRange& b) {
  a.lo.insert(a.lo.end(), b.lo.begin(), b.lo.end());
  a.hi.insert(a.hi.end(), b.hi.begin(), b.hi.end());
  a.uniform.insert(a.uniform.end(), b.uniform.begin(), b.uniform.end());
  return a;
}

bool hasLoad(const Expr& e) {
  bool found = false;
  walkExpr(e, [&](const ExprNode& n) { found = found || n.kind == ExprKind::Load || n.kind == ExprKind::CheckedIndex; });
  return found;
}

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
  // The lanes a guard or a select's condition keeps (those VectorForm accepted).
  const LaneRange& rangeOf(const void* node) const { return ranges_.at(node); }
  bool even(const void* load) const { return even_.count(load) > 0; }
  // A select computed on every lane and blended: its condition's tests (nullptr for a masked load).
  const LaneTests* blendOf(const void* node) const {
    auto it = blends_.find(node);
    return it == blends_.end() ? nullptr : &it->second;
  }
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
  // A load of every other element (lane coefficient 2: a stride-2 window's taps) from a local array outside any
  // guard: two vectors loaded and their even lanes kept (tsr_vload_even). The array spans the lanes' indices
  // and the odd elements between them.
  bool evenLanes(const Load& l) {
    const Buffer* b = f32Buffer(l.buffer);
    if (!b || b->scope != MemScope::Shared || arrays_.count(l.buffer) || guards_) return false;
    auto form = laneOffset(*b, l.indices, lane_, width_);
    if (!form || form->coef != 2) return false;
    even_.insert(&l);
    return true;
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
  // `cond` as a test of each lane: a conjunction of conditions free of the lane and of comparisons between an
  // index `base + c·lane` and a bound free of the lane (an || or a lane under a division is none).
  std::optional<LaneTests> laneTests(const Expr& cond) const {
    if (uniform(cond)) return hasLoad(cond) ? std::nullopt : std::optional<LaneTests>(LaneTests{{}, {cond}});
    if (cond->kind != ExprKind::Binary) return std::nullopt;
    const auto& b = static_cast<const Binary&>(*cond);
    if (b.op == BinaryOp::And) {
      auto l = laneTests(b.a), r = laneTests(b.b);
      if (!l || !r) return std::nullopt;
      l->tests.insert(l->tests.end(), r->tests.begin(), r->tests.end());
      l->uniform.insert(l->uniform.end(), r->uniform.begin(), r->uniform.end());
      return l;
    }
    if (b.op != BinaryOp::Lt && b.op != BinaryOp::Le && b.op != BinaryOp::Gt && b.op != BinaryOp::Ge) return std::nullopt;
    auto l = laneForm(b.a, lane_, width_), r = laneForm(b.b, lane_, width_);
    if (!l || !r || hasLoad(cond)) return std::nullopt;
    // Written `lane side OP bound`: a lane on the right flips the comparison.
    BinaryOp op = b.op;
    Expr side = b.a, bound = b.b;
    int64_t coef = l->coef;
    if (l->coef == 0) {
      std::swap(side, bound);
      coef = r->coef;
      op = op == BinaryOp::Lt ? BinaryOp::Gt : op == BinaryOp::Le ? BinaryOp::Ge : op == BinaryOp::Gt ? BinaryOp::Lt : BinaryOp::Le;
    } else if (r->coef != 0) {
      return std::nullopt;
    }
    // side = first + c·i on lane i: side OP bound is c·i OP bound - first.
    return LaneTests{{LaneTest{coef, op, sub(bound, side)}}, {}};
  }
  // The lanes a condition keeps as a range: its tests all on `first + i`.
  std::optional<LaneRange> laneRange(const Expr& cond) const {
    auto tests = laneTests(cond);
    if (!tests) return std::nullopt;
    LaneRange out{{}, {}, tests->uniform};
    for (const LaneTest& t : tests->tests) {
      if (t.coef != 1) return std::nullopt;
      const Expr next = add(t.gap, intImm(1));
      if (t.op == BinaryOp::Lt) out.hi.push_back(t.gap);
      if (t.op == BinaryOp::Le) out.hi.push_back(next);
      if (t.op == BinaryOp::Gt) out.lo.push_back(next);
      if (t.op == BinaryOp::Ge) out.lo.push_back(t.gap);
    }
    return out;
  }
  // Every load in `e` may be made on every lane, whatever a select around it keeps: a register or a local
  // array (a cache's box spans its loops' whole extents, so each lane's index lands inside it).
  bool safeOnEveryLane(const Expr& e) const {
    bool safe = true;
    walkExpr(e, [&](const ExprNode& n) {
      if (n.kind == ExprKind::CheckedIndex) safe = false;
      if (n.kind != ExprKind::Load) return;
      const Buffer* b = k_.findBuffer(static_cast<const Load&>(n).buffer);
      safe = safe && b && (b->scope == MemScope::Register || b->scope == MemScope::Shared);
    });
    return safe;
  }

  bool expr(const Expr& e) {
    if (uniform(e)) return loadsOk(e);
    if (e->dtype != DType::F32) return false;
    switch (e->kind) {
      case ExprKind::Load: {
        const auto& l = static_cast<const Load&>(*e);
        if (!readsWhereWritten(l)) return false;
        if (evenLanes(l)) return true;
        return laneAccess(l.buffer, l.indices);
      }
      case ExprKind::Select: {
        const auto& sel = static_cast<const Select&>(*e);
        // Both sides safe on every lane: computed whole and blended by the condition's lane mask.
        if (safeOnEveryLane(sel.t) && safeOnEveryLane(sel.f)) {
          auto tests = laneTests(sel.cond);
          if (!tests || !expr(sel.t) || !expr(sel.f)) return false;
          blends_[e.get()] = *tests;
          return true;
        }
        // cond ? x[.. lane ..] : c, x loaded on the lanes cond keeps alone.
        auto range = laneRange(sel.cond);
        if (!range || sel.t->kind != ExprKind::Load || !uniform(sel.f) || hasLoad(sel.f) || !expr(sel.t)) return false;
        if (arrays_.count(static_cast<const Load&>(*sel.t).buffer)) return false;
        ranges_[e.get()] = *range;
        return true;
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
      case StmtKind::IfThen: {
        auto& g = static_cast<IfThenStmt&>(*s);
        auto range = laneRange(g.cond);
        if (!range) return false;
        ranges_[s.get()] = *range;
        ++guards_;
        const bool fine = stmt(g.body);
        --guards_;
        return fine;
      }
      case StmtKind::Compute: {
        auto& c = static_cast<ComputeStmt&>(*s);
        if (c.dtype != DType::F32 || !expr(c.value)) return false;
        vectors_.insert(c.name);
        return true;
      }
      // Under a guard, only memory is written (a vector array's masked lanes would need a blend).
      case StmtKind::Store: {
        auto& st = static_cast<StoreStmt&>(*s);
        return laneAccess(st.buffer, st.indices) && expr(st.value) && !(guards_ && arrays_.count(st.buffer));
      }
      case StmtKind::Reduce: {
        auto& r = static_cast<ReduceStmt&>(*s);
        bool op = r.op == ReduceOp::Sum || r.op == ReduceOp::Max || r.op == ReduceOp::Min;
        return op && laneAccess(r.buffer, r.indices) && expr(r.value) && !(guards_ && arrays_.count(r.buffer));
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
  std::map<const void*, LaneRange> ranges_;
  std::map<const void*, LaneTests> blends_;
  std::set<const void*> even_;
  int guards_ = 0;
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
// Under a guard (`guard` not null) a load of memory reads only the lanes the guard keeps, 0 in the others.
namespace {
std::string maskedLoad(const ExprPrinter& ep, const Load& l, const LaneRange& r, const std::string& fill) {
  return ep.vectorName("tsr_vloadm") + "(&" + identifier(l.buffer) + "[" + ep.linear(l.buffer, l.indices) + "], " +
         loText(ep, r) + ", " + hiText(ep, r) + ", " + fill + ")";
}

std::string vectorExpr(const ExprPrinter& ep, const VectorForm& form, const Expr& e, bool alone, const LaneRange* guard) {
  if (form.uniform(e)) return alone ? ep.vectorName("tsr_vsplat") + "(" + ep.print(e) + ")" : ep.print(e);
  auto recurse = [&](const Expr& x, bool a) { return vectorExpr(ep, form, x, a, guard); };
  switch (e->kind) {
    case ExprKind::Load: {
      const auto& l = static_cast<const Load&>(*e);
      std::string at = ep.linear(l.buffer, l.indices);
      if (ep.isVectorArray(l.buffer)) return identifier(l.buffer) + "[(" + at + ") / " + ep.vectorName("TSR_VF") + "]";
      if (guard) return maskedLoad(ep, l, *guard, "0.0f");
      const std::string load = form.even(&l) ? "tsr_vload_even" : "tsr_vload";
      return ep.vectorName(load) + "(&" + identifier(l.buffer) + "[" + at + "])";
    }
    case ExprKind::Select: {  // VectorForm accepted it: blended, or a load on the lanes its condition keeps
      const auto& sel = static_cast<const Select&>(*e);
      if (const LaneTests* tests = form.blendOf(e.get()))
        return "(" + maskText(ep, *tests) + " ? " + recurse(sel.t, true) + " : " + recurse(sel.f, true) + ")";
      const LaneRange& kept = form.rangeOf(e.get());
      return maskedLoad(ep, static_cast<const Load&>(*sel.t), guard ? intersect(*guard, kept) : kept, "(float)(" + ep.print(sel.f) + ")");
    }
    case ExprKind::Var: return identifier(static_cast<const Var&>(*e).name);
    case ExprKind::Unary: {
      const auto& u = static_cast<const Unary&>(*e);
      if (u.op == UnaryOp::Exp) return "tsr_vexp(" + recurse(u.a, true) + ")";  // prelude: within 0.85 ulp
      if (u.op == UnaryOp::Erf) return "tsr_verf(" + recurse(u.a, true) + ")";  // prelude: within 2.2 ulp
      return "(-" + recurse(u.a, false) + ")";
    }
    default: {
      const auto& b = static_cast<const Binary&>(*e);
      if (b.op == BinaryOp::Max || b.op == BinaryOp::Min)  // NaN-keeping, as the scalar tsr_fmax; both operands vectors
        return std::string(b.op == BinaryOp::Max ? "tsr_vfmax(" : "tsr_vfmin(") + recurse(b.a, true) + ", " +
               recurse(b.b, true) + ")";
      return "(" + recurse(b.a, false) + " " + std::string(binaryOpName(b.op)) + " " + recurse(b.b, false) + ")";
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
  int guards = 0;
  std::function<void(const Stmt&, const LaneRange*)> emit = [&](const Stmt& s, const LaneRange* guard) {
    if (s->kind == StmtKind::Block) {
      for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts) emit(c, guard);
      return;
    }
    const auto& prov = s->provenance;
    if (s->kind == StmtKind::IfThen) {  // the lanes kept, once a vector: no statement under it runs when none is
      LaneRange kept = form.rangeOf(s.get());
      if (guard) kept = intersect(*guard, kept);
      const std::string n = std::to_string(guards++), lo = "lanes_lo" + n, hi = "lanes_hi" + n;
      line("{", prov);
      ++indent_;
      line("const int64_t " + lo + " = " + loText(ep_, kept) + ", " + hi + " = " + hiText(ep_, kept) + ";", prov);
      line("if (" + lo + " < " + hi + ") {", prov);
      ++indent_;
      const LaneRange named{{var(lo)}, {var(hi)}, {}};
      emit(static_cast<IfThenStmt&>(*s).body, &named);
      --indent_;
      line("}", prov);
      --indent_;
      line("}", prov);
      return;
    }
    if (s->kind == StmtKind::Compute) {
      auto& c = static_cast<ComputeStmt&>(*s);
      line("const " + type + " " + identifier(c.name) + " = " + vectorExpr(ep_, form, c.value, true, guard) + ";" + comment(prov), prov);
      return;
    }
    bool reduce = s->kind == StmtKind::Reduce;
    const std::string& buffer = reduce ? static_cast<ReduceStmt&>(*s).buffer : static_cast<StoreStmt&>(*s).buffer;
    const auto& idx = reduce ? static_cast<ReduceStmt&>(*s).indices : static_cast<StoreStmt&>(*s).indices;
    std::string value =
        vectorExpr(ep_, form, reduce ? static_cast<ReduceStmt&>(*s).value : static_cast<StoreStmt&>(*s).value, true, guard);
    std::string at = ep_.linear(buffer, idx), name = identifier(buffer);
    const ReduceOp op = reduce ? static_cast<ReduceStmt&>(*s).op : ReduceOp::Sum;
    // acc op= value: a sum adds, a max or min combines NaN-keeping.
    auto combine = [&](const std::string& acc) {
      if (!reduce) return value;
      if (op == ReduceOp::Sum) return acc + " + " + value;
      return std::string(op == ReduceOp::Max ? "tsr_vfmax(" : "tsr_vfmin(") + acc + ", " + value + ")";
    };
    if (ep_.isVectorArray(buffer)) {  // never under a guard (VectorForm)
      std::string element = name + "[(" + at + ") / " + step + "]";
      if (reduce && op == ReduceOp::Sum) line(element + " += " + value + ";" + comment(prov), prov);
      else line(element + " = " + combine(element) + ";" + comment(prov), prov);
    } else if (guard) {
      const std::string lanes = loText(ep_, *guard) + ", " + hiText(ep_, *guard);
      std::string old = ep_.vectorName("tsr_vloadm") + "(&" + name + "[" + at + "], " + lanes + ", 0.0f)";
      line(ep_.vectorName("tsr_vstorem") + "(&" + name + "[" + at + "], " + combine(old) + ", " + lanes + ");" + comment(prov), prov);
    } else {
      std::string old = ep_.vectorName("tsr_vload") + "(&" + name + "[" + at + "])";
      line(ep_.vectorName("tsr_vstore") + "(&" + name + "[" + at + "], " + combine(old) + ");" + comment(prov), prov);
    }
  };
  emit(f.body, nullptr);
  --indent_;
  line("}", f.provenance);
  return true;
}

}  // namespace tessera::codegen::detail
