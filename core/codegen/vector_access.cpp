#include "codegen/vector_access.h"

#include <map>
#include <numeric>

#include "kernel/launch.h"
#include "kernel/printer.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

std::optional<int64_t> constOf(const Expr& e) {
  if (e->kind != ExprKind::IntImm) return std::nullopt;
  return static_cast<const IntImm&>(*e).value;
}

// A number known to divide the lane-free index `e` (0: e is 0); 1 when nothing better is known.
int64_t divisorOf(const Expr& e) {
  if (auto c = constOf(e)) return *c < 0 ? -*c : *c;
  if (e->kind != ExprKind::Binary) return 1;
  const auto& b = static_cast<const Binary&>(*e);
  switch (b.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: return std::gcd(divisorOf(b.a), divisorOf(b.b));
    case BinaryOp::Mul: {
      int64_t p;
      if (__builtin_mul_overflow(divisorOf(b.a), divisorOf(b.b), &p)) return 1;
      return p;
    }
    case BinaryOp::Mod: {
      auto n = constOf(b.b);
      return n && *n > 0 ? std::gcd(divisorOf(b.a), *n) : 1;
    }
    default: return 1;
  }
}

// (x + lane) / n and (x + lane) % n over width lanes: when n and x share a divisor g larger than the lane
// step's reach (coef * (width - 1) < g), x % n is a multiple of g at most n - g, so no lane crosses a
// multiple of n: the quotient is x / n for every lane and the remainder x % n + coef * lane.
std::optional<LaneForm> divMod(const Binary& b, const std::string& lane, int64_t width) {
  auto n = constOf(b.b);
  auto a = laneForm(b.a, lane, width);
  if (!n || *n <= 0 || !a || a->coef < 0) return std::nullopt;
  int64_t g = std::gcd(a->divisor, *n);
  if (a->coef * (width - 1) >= g) return std::nullopt;
  if (b.op == BinaryOp::Div) return LaneForm{idiv(a->base, b.b), 0, 1};
  return LaneForm{imod(a->base, b.b), a->coef, g};
}

}  // namespace

std::optional<LaneForm> laneForm(const Expr& e, const std::string& lane, int64_t width) {
  if (!usesVar(e, lane)) return LaneForm{e, 0, divisorOf(e)};
  if (e->kind == ExprKind::Var) return LaneForm{intImm(0), 1, 0};
  if (e->kind != ExprKind::Binary) return std::nullopt;
  const auto& b = static_cast<const Binary&>(*e);
  switch (b.op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      auto l = laneForm(b.a, lane, width), r = laneForm(b.b, lane, width);
      if (!l || !r) return std::nullopt;
      bool plus = b.op == BinaryOp::Add;
      return LaneForm{plus ? add(l->base, r->base) : sub(l->base, r->base), plus ? l->coef + r->coef : l->coef - r->coef,
                      std::gcd(l->divisor, r->divisor)};
    }
    case BinaryOp::Mul: {
      auto c = constOf(b.a) ? constOf(b.a) : constOf(b.b);
      auto inner = laneForm(constOf(b.a) ? b.b : b.a, lane, width);
      if (!c || !inner) return std::nullopt;
      int64_t d;
      if (__builtin_mul_overflow(inner->divisor, *c < 0 ? -*c : *c, &d)) d = 1;
      return LaneForm{mul(inner->base, intImm(*c)), inner->coef * *c, d};
    }
    case BinaryOp::Div:
    case BinaryOp::Mod: return divMod(b, lane, width);
    default: return std::nullopt;
  }
}

namespace {

// (x / n) * n + x % n is x: a flattened index split back into rows and columns and flattened again.
std::optional<Expr> rejoined(const Expr& outer, const Expr& inner, int64_t n) {
  if (outer->kind != ExprKind::Binary || inner->kind != ExprKind::Binary) return std::nullopt;
  const auto& q = static_cast<const Binary&>(*outer);
  const auto& r = static_cast<const Binary&>(*inner);
  if (q.op != BinaryOp::Div || r.op != BinaryOp::Mod || constOf(q.b) != n || constOf(r.b) != n) return std::nullopt;
  if (printExpr(q.a) != printExpr(r.a)) return std::nullopt;
  return q.a;
}


// The offset dimension by dimension, each index a LaneForm (a flattened index split back and joined again).
std::optional<LaneForm> laneOffsetByDimension(const Buffer& b, const std::vector<Expr>& indices, const std::string& lane,
                                              int64_t width) {
  LaneForm total{intImm(0), 0, 0};
  for (size_t d = 0; d < indices.size(); ++d) {
    auto f = laneForm(indices[d], lane, width);
    if (!f) return std::nullopt;
    int64_t n = b.shape[d], scaled;
    if (__builtin_mul_overflow(total.divisor, n, &scaled)) scaled = 1;
    total.divisor = std::gcd(scaled, f->divisor);
    total.coef = total.coef * n + f->coef;
    auto joined = d > 0 ? rejoined(total.base, f->base, n) : std::nullopt;
    total.base = joined ? *joined : add(mul(total.base, intImm(n)), f->base);
  }
  return total;
}

// The row-major offset of buffer[indices] as a sum of terms coef · atom (atoms: anything but a sum or a product
// by a constant), with x / n % m · n + x % n joined into x % (n·m) and x / n · n + x % n into x, as often as
// they apply: a conv's weight tile read as [channels, taps, kh, kw] from one flattened index f gives
// f / 9 % 8 · 9 + f / 3 % 3 · 3 + f % 3 = f % 72, whose lanes laneForm can then follow across the taps.
class FlatOffset {
 public:
  FlatOffset(const Buffer& b, const std::vector<Expr>& indices) {
    int64_t stride = 1;
    for (size_t d = indices.size(); d-- > 0;) {
      collect(indices[d], stride);
      if (__builtin_mul_overflow(stride, b.shape[d], &stride)) ok_ = false;
    }
    while (ok_ && join()) {
    }
  }
  std::optional<Expr> sum() const {
    if (!ok_) return std::nullopt;
    Expr out = intImm(constant_);
    for (const auto& [atom, coef] : terms_) out = add(out, coef == 1 ? atom : mul(atom, intImm(coef)));
    return out;
  }

 private:
  void collect(const Expr& e, int64_t coef) {
    if (auto c = constOf(e)) {
      if (__builtin_mul_overflow(*c, coef, &*c) || __builtin_add_overflow(constant_, *c, &constant_)) ok_ = false;
      return;
    }
    if (e->kind == ExprKind::Binary) {
      const auto& b = static_cast<const Binary&>(*e);
      if (b.op == BinaryOp::Add) return collect(b.a, coef), collect(b.b, coef);
      if (b.op == BinaryOp::Sub) return collect(b.a, coef), collect(b.b, -coef);
      auto c = b.op == BinaryOp::Mul ? (constOf(b.a) ? constOf(b.a) : constOf(b.b)) : std::nullopt;
      int64_t scaled;
      if (c && !__builtin_mul_overflow(*c, coef, &scaled)) return collect(constOf(b.a) ? b.b : b.a, scaled);
    }
    terms_.push_back({withDivisionsMerged(e), coef});
  }
  // x / a / b is x / (a·b) (indices are non-negative): the fill's f / 3 / 3 % 8 is f / 9 % 8.
  static Expr withDivisionsMerged(const Expr& e) {
    return mapExpr(e, [](const Expr& n) -> Expr {
      const Binary* outer = asOp(n, BinaryOp::Div);
      const Binary* inner = outer ? asOp(outer->a, BinaryOp::Div) : nullptr;
      auto a = inner ? constOf(inner->b) : std::nullopt, b = outer ? constOf(outer->b) : std::nullopt;
      int64_t ab;
      if (!a || !b || *a <= 0 || *b <= 0 || __builtin_mul_overflow(*a, *b, &ab)) return n;
      return idiv(inner->a, intImm(ab));
    });
  }
  // x / n % m (or x / n) at coef·n and x % n at coef: one term. Whether one pair was joined.
  bool join() {
    for (size_t i = 0; i < terms_.size(); ++i)
      for (size_t j = 0; j < terms_.size(); ++j) {
        if (i == j) continue;
        auto joined = joinedPair(terms_[i], terms_[j]);
        if (!joined) continue;
        terms_[i] = *joined;
        terms_.erase(terms_.begin() + static_cast<std::ptrdiff_t>(j));
        return true;
      }
    return false;
  }
  static std::optional<std::pair<Expr, int64_t>> joinedPair(const std::pair<Expr, int64_t>& high, const std::pair<Expr, int64_t>& low) {
    const Binary* rem = asOp(low.first, BinaryOp::Mod);
    if (!rem || !constOf(rem->b) || *constOf(rem->b) <= 0) return std::nullopt;
    int64_t n = *constOf(rem->b), m = 0;
    const Binary* quot = asOp(high.first, BinaryOp::Div);
    if (const Binary* wrapped = asOp(high.first, BinaryOp::Mod); wrapped && constOf(wrapped->b)) {
      quot = asOp(wrapped->a, BinaryOp::Div);
      m = *constOf(wrapped->b);
    }
    if (!quot || constOf(quot->b) != n || printExpr(quot->a) != printExpr(rem->a) || high.second != low.second * n) return std::nullopt;
    if (m == 0) return std::make_pair(rem->a, low.second);
    int64_t nm;
    if (m < 0 || __builtin_mul_overflow(n, m, &nm)) return std::nullopt;
    return std::make_pair(imod(rem->a, intImm(nm)), low.second);
  }
  static const Binary* asOp(const Expr& e, BinaryOp op) {
    if (e->kind != ExprKind::Binary) return nullptr;
    const auto& b = static_cast<const Binary&>(*e);
    return b.op == op ? &b : nullptr;
  }

  std::vector<std::pair<Expr, int64_t>> terms_;
  int64_t constant_ = 0;
  bool ok_ = true;
};

}  // namespace

std::optional<LaneForm> laneOffset(const Buffer& b, const std::vector<Expr>& indices, const std::string& lane,
                                   int64_t width) {
  // A swizzled buffer's lanes are consecutive only within a 16-byte piece: wide accesses do not address it.
  if (indices.size() != b.shape.size() || b.swizzleBytes) return std::nullopt;
  auto byDimension = laneOffsetByDimension(b, indices, lane, width);
  if (byDimension && byDimension->coef == 1) return byDimension;
  auto flat = FlatOffset(b, indices).sum();
  auto joined = flat ? laneForm(*flat, lane, width) : std::nullopt;
  return joined && joined->coef == 1 ? joined : byDimension;
}


std::optional<Expr> alignedLaneOffset(const Buffer& b, const std::vector<Expr>& indices, const std::string& lane,
                                      int64_t width) {
  auto f = laneOffset(b, indices, lane, width);
  if (!f || f->coef != 1 || f->divisor % width != 0) return std::nullopt;
  return f->base;
}

// ---------------------------------------------------------------- the plan of one loop

namespace {

bool wideDType(DType t, int64_t width) {
  int64_t size = dtypeSize(t), bytes = size * width;
  return (size == 2 || size == 4 || size == 8) && (bytes == 4 || bytes == 8 || bytes == 16);
}

bool usesAnyVar(const Expr& e, const std::set<std::string>& names) {
  bool found = false;
  walkExpr(e, [&](const ExprNode& n) {
    if (n.kind == ExprKind::Var && names.count(static_cast<const Var&>(n).name)) found = true;
  });
  return found;
}

bool readsMemory(const Expr& e) {
  bool found = false;
  walkExpr(e, [&](const ExprNode& n) { found = found || n.kind == ExprKind::Load; });
  return found;
}

// One Load of the body, with whether C evaluates it only sometimes and the statement it is in.
struct LoadSite {
  const Load* load;
  bool conditional;
  const StmtNode* stmt;
};

class Planner {
 public:
  Planner(const Kernel& k, const ForStmt& loop) : k_(k), lane_(loop.h.var), width_(loop.h.extent) {}

  VectorPlan run(const Stmt& body) {
    VectorPlan plan;
    if (width_ < 2 || width_ > 16 || !collect(body)) return plan;
    planLoads(plan);
    for (const StoreStmt* s : stores_) planStore(plan, *s);
    return plan;
  }

 private:
  bool collect(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts)
          if (!collect(c)) return false;
        return true;
      case StmtKind::Compute: {
        auto& c = static_cast<ComputeStmt&>(*s);
        locals_.insert(c.name);
        exprLoads(c.value, false, s.get());
        return true;
      }
      case StmtKind::Store: {
        auto& st = static_cast<StoreStmt&>(*s);
        ++storeCount_[st.buffer];
        stores_.push_back(&st);
        for (const Expr& i : st.indices) exprLoads(i, false, s.get());
        exprLoads(st.value, false, s.get());
        return true;
      }
      case StmtKind::Reduce: {
        auto& r = static_cast<ReduceStmt&>(*s);
        reduced_.insert(r.buffer);
        for (const Expr& i : r.indices) exprLoads(i, false, s.get());
        exprLoads(r.value, false, s.get());
        return true;
      }
      default: return false;  // loops, guards, barriers, copies: not a vector body
    }
  }

  void exprLoads(const Expr& e, bool conditional, const StmtNode* stmt) {
    if (e->kind == ExprKind::Load) {
      const auto& l = static_cast<const Load&>(*e);
      loads_.push_back({&l, conditional, stmt});
      read_.insert(l.buffer);
      for (const Expr& i : l.indices) exprLoads(i, conditional, stmt);
    } else if (e->kind == ExprKind::Select) {
      const auto& s = static_cast<const Select&>(*e);
      exprLoads(s.cond, conditional, stmt);
      exprLoads(s.t, true, stmt);
      exprLoads(s.f, true, stmt);
    } else if (e->kind == ExprKind::Binary) {
      const auto& b = static_cast<const Binary&>(*e);
      bool lazy = b.op == BinaryOp::And || b.op == BinaryOp::Or;
      exprLoads(b.a, conditional, stmt);
      exprLoads(b.b, conditional || lazy, stmt);
    } else if (e->kind == ExprKind::Unary) {
      exprLoads(static_cast<const Unary&>(*e).a, conditional, stmt);
    } else if (e->kind == ExprKind::Cast) {
      exprLoads(static_cast<const Cast&>(*e).a, conditional, stmt);
    } else if (e->kind == ExprKind::CheckedIndex) {  // the position is computed only on an error
      exprLoads(static_cast<const CheckedIndex&>(*e).value, conditional, stmt);
      exprLoads(static_cast<const CheckedIndex&>(*e).position, true, stmt);
    }
  }

  // Buffers whose start is aligned for any wide access: kernel parameters (separate allocations, 256-byte
  // aligned) and shared buffers, which the generator declares __align__(16), unless a pipelined loop keeps
  // several copies of one (pipeline.cpp places those).
  bool alignedBuffer(const Buffer& b) const {
    if (b.scope == MemScope::Shared) return bufferCopies(k_, b.name) == 1;
    return b.scope == MemScope::Global && (b.role == BufferRole::Input || b.role == BufferRole::Output);
  }
  bool written(const std::string& buffer) const { return storeCount_.count(buffer) || reduced_.count(buffer); }

  void planLoads(VectorPlan& plan) {
    std::set<const ExprNode*> sometimes;
    for (const LoadSite& s : loads_)
      if (s.conditional) sometimes.insert(s.load);
    std::map<std::string, size_t> wideAt, broadcastAt;  // buffer + printed position → entry
    for (const LoadSite& s : loads_) {
      const Load& l = *s.load;
      const Buffer* b = k_.findBuffer(l.buffer);
      if (!b || sometimes.count(&l) || written(l.buffer) || b->scope == MemScope::Register) continue;
      bool fixed = true;  // its position is known before the lanes run
      for (const Expr& i : l.indices) fixed = fixed && !usesAnyVar(i, locals_) && !readsMemory(i);
      if (!fixed) continue;
      auto at = laneOffset(*b, l.indices, lane_, width_);
      if (!at) continue;
      std::string key = l.buffer + "@" + printExpr(at->base);
      if (at->coef == 0) {
        auto [it, fresh] = broadcastAt.emplace(key, plan.broadcast.size());
        if (fresh) plan.broadcast.push_back({l.buffer, at->base, {}, s.stmt->provenance});
        plan.broadcast[it->second].loads.push_back(&l);
        continue;
      }
      bool aligned = at->coef == 1 && at->divisor % width_ == 0;
      if (!aligned || !alignedBuffer(*b) || !wideDType(b->dtype, width_)) continue;
      auto [it, fresh] = wideAt.emplace(key, plan.wide.size());
      if (fresh) plan.wide.push_back({l.buffer, at->base, false, {}, nullptr, s.stmt->provenance});
      plan.wide[it->second].loads.push_back(&l);
    }
  }

  void planStore(VectorPlan& plan, const StoreStmt& s) {
    const Buffer* b = k_.findBuffer(s.buffer);
    if (!b || !alignedBuffer(*b) || !wideDType(b->dtype, width_)) return;
    if (storeCount_.at(s.buffer) != 1 || read_.count(s.buffer) || reduced_.count(s.buffer)) return;
    for (const Expr& i : s.indices)
      if (usesAnyVar(i, locals_) || readsMemory(i)) return;
    auto offset = alignedLaneOffset(*b, s.indices, lane_, width_);
    if (offset) plan.wide.push_back({s.buffer, *offset, true, {}, &s, s.provenance});
  }

  const Kernel& k_;
  std::string lane_;
  int64_t width_;
  std::set<std::string> locals_, reduced_, read_;
  std::map<std::string, int> storeCount_;
  std::vector<const StoreStmt*> stores_;
  std::vector<LoadSite> loads_;
};

}  // namespace

VectorPlan planVectorLoop(const Kernel& k, const ForStmt& loop) {
  if (loop.h.loopKind != LoopKind::Vectorized) return {};
  return Planner(k, loop).run(loop.body);
}

}  // namespace tessera::codegen::detail
