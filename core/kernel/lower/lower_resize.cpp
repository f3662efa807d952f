// Resize and Upsample in a data-movement nest: each output element is the input at its taps along every
// resampled axis, one tap (nearest) or two weighted by the distance (linear), each index clamped into its axis so
// that the edge repeats. The coordinates are computed in double with the reference's own arithmetic
// (ops/resize_form.h), so a kernel picks the reference's taps; the weighted sum runs in the accumulation type.
#include "kernel/lower/lower_context.h"
#include "ops/resize_form.h"

namespace tessera::kernel {
namespace {

Expr f64(double v) { return FloatImm::make(v, DType::F64); }
Expr binary(BinaryOp op, Expr a, Expr b) { return Binary::make(op, std::move(a), std::move(b)); }

// A named Compute statement in the emitter's block (the taps of an axis are used by every tap of the others).
Expr bind(LowerCtx& ctx, Emitter& em, const Node& n, DType t, Expr e) {
  std::string name = numbered("rz", size_t(ctx.computeCounter++));
  Stmt s = ComputeStmt::make(name, t, std::move(e));
  s->provenance = {n.id()};
  em.out().stmts.push_back(s);
  return Var::make(name, t);
}

// ((x + shift) * stretch / divisor + offset) + last, skipping the steps that are exact no-ops.
Expr coordinate(const ops::ResizeCoordinate& m, const Expr& x) {
  Expr c = Cast::make(DType::F64, x);
  if (m.shift != 0) c = binary(BinaryOp::Add, c, f64(m.shift));
  if (m.stretch != 1) c = binary(BinaryOp::Mul, c, f64(m.stretch));
  if (m.divisor != 1) c = binary(BinaryOp::Div, c, f64(m.divisor));
  if (m.offset != 0) c = binary(BinaryOp::Add, c, f64(m.offset));
  if (m.last != 0) c = binary(BinaryOp::Add, c, f64(m.last));
  return c;
}

struct Tap {
  Expr index;   // i64, in range
  Expr weight;  // null for a nearest tap (weight 1)
};

// Nearest: floor(c), moved up by one when the mode rounds up the fraction r = c - floor(c) (never for an
// integer c, whose r is 0: the reference's ratio 1 picks c itself).
Expr nearestIndex(const std::string& mode, const Expr& c, const Expr& fl) {
  if (mode == "floor") return fl;
  Expr r = binary(BinaryOp::Sub, c, fl);
  Expr up = mode == "ceil" ? binary(BinaryOp::Gt, r, f64(0))
          : mode == "round_prefer_ceil" ? binary(BinaryOp::Ge, r, f64(0.5))
                                        : binary(BinaryOp::Gt, r, f64(0.5));  // round_prefer_floor
  return Select::make(up, binary(BinaryOp::Add, fl, f64(1)), fl);
}

std::vector<Tap> axisTaps(LowerCtx& ctx, Emitter& em, const Node& n, const ops::ResizeForm& form,
                          const ops::ResizeAxis& axis, const Expr& x, DType at) {
  Expr c = bind(ctx, em, n, DType::F64, coordinate(axis.map, x));
  Expr fl = bind(ctx, em, n, DType::F64, Unary::make(UnaryOp::Floor, c));
  // Clamped while still a double: converting one outside i64's range would be undefined (a coordinate can be
  // huge where align_corners divides by an output width just over 1).
  auto toIndex = [&](Expr e, double lo, double hi) {
    e = binary(BinaryOp::Min, binary(BinaryOp::Max, std::move(e), f64(lo)), f64(hi));
    return bind(ctx, em, n, DType::I64, Cast::make(DType::I64, e));
  };
  double last = double(axis.inLen - 1);
  if (form.taps == ops::ResizeTaps::Nearest) return {{toIndex(nearestIndex(form.nearestMode, c, fl), 0, last), nullptr}};
  Expr r = bind(ctx, em, n, at, Cast::make(at, binary(BinaryOp::Sub, c, fl)));
  Expr i0 = toIndex(fl, -1, last + 1);
  return {{clampIndex(i0, axis.inLen), binary(BinaryOp::Sub, FloatImm::make(1, at), r)},
          {clampIndex(binary(BinaryOp::Add, i0, intImm(1)), axis.inLen), r}};
}

}  // namespace

Expr resizeExpr(LowerCtx& ctx, const Node& n, Emitter& em) {
  ops::ResizeForm form = ops::resizeForm(n);
  if (!form.unsupported.empty()) ctx.fail(n, form.unsupported + " has no generated form");
  const Value* x = n.input(0);
  bool linear = form.taps == ops::ResizeTaps::Linear;
  if (linear && !isFloat(x->dtype())) ctx.fail(n, "linear interpolation of " + std::string(dtypeName(x->dtype())) + " has no generated form");
  DType at = accType(x->dtype());
  std::vector<size_t> resampled;
  std::vector<std::vector<Tap>> taps(form.axes.size());
  for (size_t d = 0; d < form.axes.size(); ++d)
    if (!form.axes[d].identity) {
      resampled.push_back(d);
      taps[d] = axisTaps(ctx, em, n, form, form.axes[d], em.idx()[d], at);
    }
  // The sum over the taps of the first resampled axis, inside it the next one's, ...: 2^axes loads when linear.
  std::function<Expr(size_t, std::vector<Expr>)> blend = [&](size_t a, std::vector<Expr> idx) -> Expr {
    if (a == resampled.size()) return Cast::make(at, valueAt(em, x, idx));
    Expr sum;
    for (const Tap& t : taps[resampled[a]]) {
      idx[resampled[a]] = t.index;
      Expr v = blend(a + 1, idx);
      if (t.weight) v = binary(BinaryOp::Mul, t.weight, v);
      sum = sum ? binary(BinaryOp::Add, sum, v) : v;
    }
    return sum;
  };
  Expr y = blend(0, em.idx());
  return linear ? y : Cast::make(x->dtype(), y);
}

}  // namespace tessera::kernel
