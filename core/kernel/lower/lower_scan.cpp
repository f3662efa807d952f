// CumSum, a running sum along one axis: the nest over the output, as pooling has it (the pool template spreads
// its elements over the threads), and per element a sum over the whole axis that keeps the taps at or before
// it (after it with reverse; exclusive leaves the element itself out). Quadratic in the axis, but every output
// element is independent, as the threads want; the reference adds in the same order, first tap first.
#include "ir/constant.h"
#include "kernel/lower/lower_context.h"

namespace tessera::kernel {

void lowerCumSum(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* x = anchor.input(0);
  const Shape& xs = x->shape();
  const Tensor* axisValue = constantValue(anchor.input(1));
  if (!axisValue || axisValue->numElements() != 1)
    ctx.fail(anchor, "input 1 (axis) must be a constant scalar for a kernel; it is computed at run time");
  int64_t rank = int64_t(xs.size()), axis = axisValue->toInts().front();
  if (axis < -rank || axis >= rank || rank == 0)
    ctx.fail(anchor, "axis " + std::to_string(axis) + " is outside the input's rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  bool exclusive = anchor.attrInt("exclusive", 0) != 0, reverse = anchor.attrInt("reverse", 0) != 0;
  std::vector<std::string> outVars = names("i", xs.size());
  std::vector<Expr> tap = vars(outVars);
  tap[size_t(axis)] = var("j");
  Expr here = var(outVars[size_t(axis)]);
  BinaryOp keep = reverse ? (exclusive ? BinaryOp::Gt : BinaryOp::Ge) : (exclusive ? BinaryOp::Lt : BinaryOp::Le);
  DType at = accType(x->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, reduceInit(ReduceOp::Sum, at), anchor.id());
  Expr xt = Cast::make(at, Load::make(ctx.inputBuffer.at(x), x->dtype(), tap));
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)},
                              Select::make(Binary::make(keep, var("j"), here), xt, reduceInit(ReduceOp::Sum, at)));
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest({"j"}, {xs[size_t(axis)]}, red, true));
  finish(ctx, anchor, outVars, xs, body, Load::make(acc, at, {intImm(0)}));
}

}  // namespace tessera::kernel
