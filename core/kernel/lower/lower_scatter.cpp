// ScatterElements (and its opset-9 name Scatter) and ScatterND whose indices are known only at run time (the
// decompose pass turns constant ones into gathers): a kernel of two phases (docs/kernel-ir.md, Phases). Phase 0
// copies data into the output; after `sync grid`, phase 1 walks the updates and writes each where its indices
// say, through a CheckedIndex as the gathers' indices go (negative ones count from the end, an index out of
// range fails the kernel naming it), combining with what is there under a reduction.
// Two updates can meet only where they differ in the indexed loops alone: a ScatterElements' updates along its
// axis, a ScatterND's index tuples (each tuple's slice elements are distinct). So those loops run innermost and
// in order, marked as reductions (their order decides a repeated index's result, as in the reference), and the
// other loops around them are free to run in parallel: each of their iterations owns the output elements it
// writes. With no such loop (a 1-D scatter, a ScatterND of whole elements), one loop of one iteration (`one`)
// stands in, so a schedule binds the phase to one thread.
#include "kernel/lower/lower_context.h"

namespace tessera::kernel {
namespace {

// The output's element after combining what is there with the update.
Expr combined(LowerCtx& ctx, const Node& n, const std::string& reduction, Expr old, Expr update) {
  if (reduction == "none") return update;
  if (reduction == "add") return Binary::make(BinaryOp::Add, old, update);
  if (reduction == "mul") return Binary::make(BinaryOp::Mul, old, update);
  if (reduction == "max") return Binary::make(BinaryOp::Max, old, update);
  if (reduction == "min") return Binary::make(BinaryOp::Min, old, update);
  ctx.fail(n, "reduction '" + reduction + "' is not one of none, add, mul, max, min");
}

// A ScatterElements' axis, non-negative.
size_t scatterAxis(LowerCtx& ctx, const Node& n) {
  const int64_t rank = int64_t(n.input(0)->shape().size()), axis = n.attrInt("axis", 0);
  if (axis < -rank || axis >= rank) ctx.fail(n, "axis " + std::to_string(axis) + " is outside the data's rank " + std::to_string(rank));
  return size_t(axis < 0 ? axis + rank : axis);
}

// An index from a tensor addresses an axis through a CheckedIndex; into an axis without elements every one is
// out of range, so a scatter with updates to write there is refused (as the gathers are).
Expr checkedTarget(LowerCtx& ctx, const Node& n, Expr index, const std::vector<Expr>& at, size_t axis) {
  const int64_t extent = n.input(0)->shape()[axis];
  if (extent == 0 && numElements(n.input(2)->shape()) > 0) ctx.fail(n, "writes into an axis of extent 0: every index is out of range");
  return ctx.checkedIndexAt(n, 1, std::move(index), at, int64_t(axis), extent);
}

// Where update `u` of a ScatterElements goes: u itself, its axis replaced by the index at u.
std::vector<Expr> elementsTarget(LowerCtx& ctx, const Node& n, const std::vector<Expr>& u) {
  const size_t axis = scatterAxis(ctx, n);
  std::vector<Expr> target = u;
  target[axis] = checkedTarget(ctx, n, Load::make(ctx.inputBuffer.at(n.input(1)), n.input(1)->dtype(), u), u, axis);
  return target;
}

// Where update `u` of a ScatterND goes: indices[u's leading axes] is a tuple addressing data's first m axes,
// u's trailing axes the slice after them.
std::vector<Expr> ndTarget(LowerCtx& ctx, const Node& n, const std::vector<Expr>& u) {
  const Shape& ds = n.input(0)->shape();
  const Shape& is = n.input(1)->shape();
  if (is.empty() || is.back() > int64_t(ds.size())) ctx.fail(n, "its index tuples are longer than the data's rank");
  const size_t m = size_t(is.back()), lead = is.size() - 1;
  std::vector<Expr> target;
  for (size_t d = 0; d < m; ++d) {
    std::vector<Expr> at(u.begin(), u.begin() + long(lead));
    at.push_back(intImm(int64_t(d)));
    target.push_back(checkedTarget(ctx, n, Load::make(ctx.inputBuffer.at(n.input(1)), n.input(1)->dtype(), at), at, d));
  }
  target.insert(target.end(), u.begin() + long(lead), u.end());
  return target;
}

}  // namespace

void lowerScatter(LowerCtx& ctx, const Node& n) {
  if (ctx.nodes.size() != 1) ctx.fail(n, "a scatter kernel holds the scatter alone");
  requireExternalInputs(ctx, n);
  const Value *data = n.input(0), *updates = n.input(2), *out = n.output(0);
  const std::string reduction = n.attrString("reduction", "none");
  const std::string result = ctx.outputBuffer.at(out);
  std::vector<std::string> c = names("c", data->shape().size());
  Stmt copy = StoreStmt::make(result, vars(c), Load::make(ctx.inputBuffer.at(data), data->dtype(), vars(c)));
  const Shape& us = updates->shape();
  std::vector<std::string> u = names("u", us.size());
  const bool nd = n.op() == "ScatterND";
  std::vector<Expr> target = nd ? ndTarget(ctx, n, vars(u)) : elementsTarget(ctx, n, vars(u));
  Expr update = Load::make(ctx.inputBuffer.at(updates), updates->dtype(), vars(u));
  Stmt write = StoreStmt::make(result, target, combined(ctx, n, reduction, Load::make(result, out->dtype(), target), update));
  copy->provenance = write->provenance = {n.id()};
  // The loops whose updates may meet (in order, innermost) and the others.
  std::vector<std::string> inOrder, free;
  Shape inOrderExtents, freeExtents;
  const size_t tuples = nd ? n.input(1)->shape().size() - 1 : 0;
  const size_t axis = nd ? 0 : scatterAxis(ctx, n);
  for (size_t d = 0; d < us.size(); ++d) {
    const bool meets = nd ? d < tuples : d == axis;
    (meets ? inOrder : free).push_back(u[d]);
    (meets ? inOrderExtents : freeExtents).push_back(us[d]);
  }
  if (free.empty()) free = {"one"}, freeExtents = {1};
  Stmt updatesNest = loopNest(free, freeExtents, loopNest(inOrder, inOrderExtents, write, true));
  ctx.k.body = BlockStmt::make({loopNest(c, data->shape(), copy), SyncStmt::makeGrid(), updatesNest});
}

}  // namespace tessera::kernel
