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

}  // namespace

std::optional<LaneForm> laneOffset(const Buffer& b, const std::vector<Expr>& indices, const std::string& lane,
                                   int64_t width) {
  // A swizzled buffer's lanes are consecutive only within a 16-byte piece: wide accesses do not address it.
  if (indices.size() != b.shape.size() || b.swizzleBytes) return std::nullopt;
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
