// LRN, a window over the channel axis: the nest over the output (n, c, spatial...) as pooling has it, so the
// pool template schedules it, and per element a sum of squares over the `size` channels around c.
#include "kernel/lower/lower_context.h"

namespace tessera::kernel {

// y = x / (bias + alpha / size * sum of x^2)^beta, the sum over channels [c - floor((size - 1) / 2),
// c + ceil((size - 1) / 2)] clipped to [0, C) (ONNX; the taps outside the channels add nothing).
void lowerLrn(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* x = anchor.input(0);
  const Shape& xs = x->shape();
  if (xs.size() < 2) ctx.fail(anchor, "expects an [N, C, ...] input, got " + shapeToString(xs));
  int64_t size = anchor.attrInt("size", 0);
  if (size <= 0) ctx.fail(anchor, "attribute 'size' must be a positive int, got " + std::to_string(size));
  std::vector<std::string> outVars = {"n", "c"};
  for (const std::string& s : spatialNames("o", xs.size() - 2)) outVars.push_back(s);
  std::vector<Expr> point = vars(outVars), tap = point;
  tap[1] = add(sub(var("c"), intImm((size - 1) / 2)), var("kc"));
  DType at = accType(x->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
  Expr xt = Cast::make(at, Load::make(ctx.inputBuffer.at(x), x->dtype(), tap));
  Expr square = Binary::make(BinaryOp::Mul, xt, xt);
  if (size > 1) square = Select::make(inBounds(tap[1], 0, xs[1]), square, FloatImm::make(0, at));
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)}, square);
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest({"kc"}, {size}, red, true));
  double alpha = anchor.attrFloat("alpha", 1e-4), beta = anchor.attrFloat("beta", 0.75);
  Expr sum = Load::make(acc, at, {intImm(0)});
  Expr base = Binary::make(BinaryOp::Add, FloatImm::make(anchor.attrFloat("bias", 1.0), at),
                           Binary::make(BinaryOp::Mul, FloatImm::make(alpha / double(size), at), sum));
  Expr xc = Cast::make(at, Load::make(ctx.inputBuffer.at(x), x->dtype(), point));
  Expr result = Binary::make(BinaryOp::Div, xc, Binary::make(BinaryOp::Pow, base, FloatImm::make(beta, at)));
  finish(ctx, anchor, outVars, xs, body, result);
}

}  // namespace tessera::kernel
