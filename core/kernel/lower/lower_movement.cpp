// Data movement: one nest over the output; each output element loads the input element it maps to.
#include <algorithm>

#include "kernel/lower/lower_context.h"
#include "ops/registry.h"

namespace tessera::kernel {

std::vector<Expr> transposeIndex(const Node& n, const Shape& in, const std::vector<Expr>& idx) {
  std::vector<int64_t> perm = n.attrInts("perm");
  if (perm.empty())
    for (size_t d = in.size(); d-- > 0;) perm.push_back(int64_t(d));
  std::vector<Expr> out(in.size());
  for (size_t d = 0; d < perm.size(); ++d) out[size_t(perm[d])] = idx[d];
  return out;
}

Expr valueAt(Emitter& em, const Value* v, std::vector<Expr> idx) {
  Emitter sub(em.ctx(), v->shape(), std::move(idx), em.out());
  return sub.value(v);
}

// Selects: the generators' integer max and min want operands of one C type.
Expr clampIndex(const Expr& i, int64_t extent) {
  Expr upper = Select::make(Binary::make(BinaryOp::Lt, i, intImm(extent)), i, intImm(extent - 1));
  return Select::make(Binary::make(BinaryOp::Lt, i, intImm(0)), intImm(0), upper);
}

namespace {

// Same elements in row-major order: linearize the output index, split it by the input's strides.
std::vector<Expr> reshapeWhole(const Shape& in, const Shape& out, const std::vector<Expr>& idx) {
  std::vector<int64_t> os = stridesOf(out), is = stridesOf(in);
  Expr flat = intImm(0);
  for (size_t d = 0; d < out.size(); ++d) flat = add(flat, mul(idx[d], intImm(os[d])));
  std::vector<Expr> r;
  for (size_t d = 0; d < in.size(); ++d) {
    Expr q = idiv(flat, intImm(is[d]));
    r.push_back(d == 0 ? q : imod(q, intImm(in[d])));
  }
  return r;
}

// As reshapeWhole, but block by block: runs of input and output dimensions with equal products map onto
// each other alone, so splitting 256 into 4 x 64 gives `i1 * 64 + i2`, not a division of the whole index.
std::vector<Expr> reshapeIndex(const Shape& in, const Shape& out, const std::vector<Expr>& idx) {
  for (int64_t d : in)
    if (d == 0) return reshapeWhole(in, out, idx);
  std::vector<Expr> r(in.size());
  size_t a = 0, b = 0;
  while (a < in.size() || b < out.size()) {
    size_t a0 = a, b0 = b;
    int64_t pa = a < in.size() ? in[a++] : 1, pb = b < out.size() ? out[b++] : 1;
    while (pa != pb) {
      if (pa < pb && a < in.size()) pa *= in[a++];
      else if (pb < pa && b < out.size()) pb *= out[b++];
      else return reshapeWhole(in, out, idx);
    }
    Expr flat = intImm(0);
    for (size_t d = b0; d < b; ++d) flat = add(mul(flat, intImm(out[d])), idx[d]);
    int64_t stride = 1;
    for (size_t d = a; d-- > a0;) {
      Expr q = idiv(flat, intImm(stride));
      r[d] = d == a0 ? q : imod(q, intImm(in[d]));
      stride *= in[d];
    }
  }
  return r;
}

// Tile repeats the input along each axis: output index i reads input index i mod extent.
std::vector<Expr> tileIndex(const Shape& in, const std::vector<Expr>& idx) {
  std::vector<Expr> r;
  for (size_t d = 0; d < in.size(); ++d) r.push_back(imod(idx[d], intImm(in[d])));
  return r;
}

int64_t normalizeAxisOf(LowerCtx& ctx, const Node& n, int64_t axis, size_t rank) {
  if (axis < 0) axis += int64_t(rank);
  if (axis < 0 || axis >= int64_t(rank)) ctx.fail(n, "axis out of range");
  return axis;
}

Expr sliceExpr(LowerCtx& ctx, const Node& n, Emitter& em) {
  const Shape& in = n.input(0)->shape();
  auto starts = constantInts(n.input(1));
  auto axes = n.input(3) ? constantInts(n.input(3)) : std::optional<std::vector<int64_t>>();
  auto steps = n.input(4) ? constantInts(n.input(4)) : std::optional<std::vector<int64_t>>();
  if (!starts || (n.input(3) && !axes) || (n.input(4) && !steps)) ctx.fail(n, "starts, axes and steps must be constants");
  std::vector<Expr> idx = em.idx();
  for (size_t i = 0; i < starts->size(); ++i) {
    int64_t axis = normalizeAxisOf(ctx, n, axes ? (*axes)[i] : int64_t(i), in.size());
    int64_t step = steps ? (*steps)[i] : 1, dim = in[size_t(axis)];
    int64_t s = (*starts)[i] < 0 ? (*starts)[i] + dim : (*starts)[i];
    s = step > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    idx[size_t(axis)] = add(intImm(s), mul(idx[size_t(axis)], intImm(step)));
  }
  return valueAt(em, n.input(0), idx);
}

Expr concatExpr(LowerCtx& ctx, const Node& n, Emitter& em) {
  size_t axis = size_t(normalizeAxisOf(ctx, n, n.attrInt("axis", 0), n.output(0)->shape().size()));
  Expr result;
  int64_t offset = 0;
  std::vector<std::pair<Expr, Expr>> arms;  // (upper bound, value)
  for (const Value* v : n.inputs()) {
    std::vector<Expr> idx = em.idx();
    int64_t extent = v->shape()[axis];
    idx[axis] = sub(idx[axis], intImm(offset));
    offset += extent;
    if (!ctx.produced(v)) {  // a load under the select: read only for the arm taken
      arms.push_back({intImm(offset), Load::make(ctx.inputBuffer.at(v), v->dtype(), idx)});
    } else if (extent > 0) {
      // Made inside the group (an index chain): its statements run before the select picks an arm, so each
      // computes at an index clamped into its own range and none reads outside its buffers.
      idx[axis] = clampIndex(idx[axis], extent);
      arms.push_back({intImm(offset), valueAt(em, v, idx)});
    }
  }
  if (arms.empty()) return Cast::make(n.output(0)->dtype(), intImm(0));  // every input empty: nothing to produce
  result = arms.back().second;
  for (size_t i = arms.size() - 1; i-- > 0;)
    result = Select::make(Binary::make(BinaryOp::Lt, em.idx()[axis], arms[i].first), arms[i].second, result);
  return result;
}

// An index from a tensor addresses memory only through a CheckedIndex (the reference's rule, one compare).
// Without elements on the axis every index is out of range: a kernel that would read one is refused.
void requireElements(LowerCtx& ctx, const Node& n, int64_t extent) {
  if (extent == 0 && numElements(n.output(0)->shape()) > 0)
    ctx.fail(n, "gathers from an axis of extent 0: every index is out of range");
}

Expr gatherExpr(LowerCtx& ctx, const Node& n, Emitter& em) {
  const Value* data = n.input(0);
  const Value* indices = n.input(1);
  size_t axis = size_t(normalizeAxisOf(ctx, n, n.attrInt("axis", 0), data->shape().size()));
  int64_t extent = data->shape()[axis];
  requireElements(ctx, n, extent);
  size_t ri = indices->shape().size();
  const std::vector<Expr>& idx = em.idx();
  std::vector<Expr> iidx(idx.begin() + long(axis), idx.begin() + long(axis + ri));
  std::vector<Expr> didx(idx.begin(), idx.begin() + long(axis));
  didx.push_back(ctx.checkedIndexAt(n, 1, valueAt(em, indices, iidx), iidx, int64_t(axis), extent));
  didx.insert(didx.end(), idx.begin() + long(axis + ri), idx.end());
  return valueAt(em, data, didx);  // in range: a producer in the group computes there safely
}

// out[c] = data[c with c[axis] = indices[c]]: the output has the indices' shape, no larger than data's.
Expr gatherElementsExpr(LowerCtx& ctx, const Node& n, Emitter& em) {
  const Value* data = n.input(0);
  size_t axis = size_t(normalizeAxisOf(ctx, n, n.attrInt("axis", 0), data->shape().size()));
  int64_t extent = data->shape()[axis];
  requireElements(ctx, n, extent);
  std::vector<Expr> didx = em.idx();
  didx[axis] = ctx.checkedIndexAt(n, 1, valueAt(em, n.input(1), em.idx()), em.idx(), int64_t(axis), extent);
  return valueAt(em, data, didx);
}

// out[b..., i..., r...] = data[b..., t_0, ..., t_{m-1}, r...] with t = indices[b..., i..., :] (ONNX GatherND): the
// output's leading dims index the tuples, its trailing ones the slice after them.
Expr gatherNDExpr(LowerCtx& ctx, const Node& n, Emitter& em) {
  const Value* data = n.input(0);
  const Value* indices = n.input(1);
  const Shape& ds = data->shape();
  const Shape& is = indices->shape();
  size_t b = size_t(n.attrInt("batch_dims", 0)), m = size_t(is.back()), lead = is.size() - 1;
  const std::vector<Expr>& idx = em.idx();
  std::vector<Expr> didx(idx.begin(), idx.begin() + long(b));
  for (size_t d = 0; d < m; ++d) {
    requireElements(ctx, n, ds[b + d]);
    std::vector<Expr> iidx(idx.begin(), idx.begin() + long(lead));
    iidx.push_back(intImm(int64_t(d)));
    didx.push_back(ctx.checkedIndexAt(n, 1, valueAt(em, indices, iidx), iidx, int64_t(b + d), ds[b + d]));
  }
  didx.insert(didx.end(), idx.begin() + long(lead), idx.end());
  return valueAt(em, data, didx);
}

Expr movementExpr(LowerCtx& ctx, const Node& n, Emitter& em) {
  const std::string& op = n.op();
  const Value* x = n.input(0);
  const Shape& out = n.output(0)->shape();
  if (op == "Transpose") return valueAt(em, x, transposeIndex(n, x->shape(), em.idx()));
  if (op == "Expand") return valueAt(em, x, broadcastIndex(x->shape(), out, em.idx()));
  if (op == "Tile") return valueAt(em, x, tileIndex(x->shape(), em.idx()));
  if (op == "Slice") return sliceExpr(ctx, n, em);
  if (op == "Concat") return concatExpr(ctx, n, em);
  if (op == "Gather") return gatherExpr(ctx, n, em);
  if (op == "GatherElements") return gatherElementsExpr(ctx, n, em);
  if (op == "GatherND") return gatherNDExpr(ctx, n, em);
  if (op == "Resize" || op == "Upsample") return resizeExpr(ctx, n, em);
  if (opTraits(op).movement == MovementKind::View)
    return valueAt(em, x, reshapeIndex(x->shape(), out, em.idx()));
  ctx.fail(n, "not supported in a data-movement kernel");  // Pad, ...: fusion may chain them to the ops above
}

// Every data-movement node of the group computes its outputs by mapping indices onto its input.
void registerSpecials(LowerCtx& ctx) {
  for (const Node* n : ctx.nodes) {
    if (n->op() == "Split") {
      const Value* x = n->input(0);
      size_t axis = size_t(normalizeAxisOf(ctx, *n, n->attrInt("axis", 0), x->shape().size()));
      int64_t offset = 0;
      for (size_t m = 0; m < n->numOutputs(); ++m) {
        ctx.special[n->output(m)] = [x, axis, offset](Emitter& em) {
          std::vector<Expr> idx = em.idx();
          idx[axis] = add(idx[axis], intImm(offset));
          return valueAt(em, x, idx);
        };
        offset += n->output(m)->shape()[axis];
      }
    } else if (!isPointwiseOp(n->op())) {
      ctx.special[n->output(0)] = [&ctx, n](Emitter& em) { return movementExpr(ctx, *n, em); };
    }
  }
}

}  // namespace

namespace {

// A group that is one Concat of inputs from outside the group, on the CPU: one nest per input copying it into its
// slice of the output, so every row is a plain copy the CPU's vector path takes whole. The one-nest form selects
// an input per element (`concatExpr`), which keeps the rows scalar: squeezenet's four concats of 2 x 64 (128)
// channels took 0.5 ms each on one core, a sixth of its kernels' time.
bool lowerConcatAsCopies(LowerCtx& ctx) {
  if (ctx.k.machine != Machine::Cpu || ctx.nodes.size() != 1 || ctx.nodes[0]->op() != "Concat" || ctx.outputs.size() != 1)
    return false;
  const Node& n = *ctx.nodes[0];
  for (const Value* v : n.inputs())
    if (!v || ctx.produced(v)) return false;
  const Shape& out = n.output(0)->shape();
  const size_t axis = size_t(normalizeAxisOf(ctx, n, n.attrInt("axis", 0), out.size()));
  // Every tensor viewed as [the axes before `axis`, the rest flattened]: an input's rest is one contiguous run of
  // the output's, so each copy is one long row (a 64 x 55 x 55 block, not 3,520 rows of 55).
  auto view = [axis](const Shape& s) {
    return Shape{numElements(Shape(s.begin(), s.begin() + long(axis))), numElements(Shape(s.begin() + long(axis), s.end()))};
  };
  auto viewBuffer = [&](const std::string& name, const Shape& s) {
    Buffer* b = ctx.k.findBuffer(name);
    b->valueShape = b->shape;
    b->shape = view(s);
  };
  const std::string output = ctx.outputBuffer.at(n.output(0));
  viewBuffer(output, out);
  const int64_t slice = numElements(Shape(out.begin() + long(axis) + 1, out.end()));  // elements of one step on the axis
  auto body = BlockStmt::make();
  int64_t offset = 0;
  for (size_t m = 0; m < n.numInputs(); ++m) {
    const Value* v = n.input(m);
    if (numElements(v->shape()) > 0) {
      if (ctx.k.findBuffer(ctx.inputBuffer.at(v))->valueShape.empty()) viewBuffer(ctx.inputBuffer.at(v), v->shape());
      std::vector<std::string> loopVars = names(numbered("c", m) + "_", 2);
      std::vector<Expr> at = vars(loopVars);
      at[1] = add(at[1], intImm(offset * slice));
      Stmt copy = StoreStmt::make(output, at, Load::make(ctx.inputBuffer.at(v), v->dtype(), vars(loopVars)));
      copy->provenance = {n.id()};
      body->stmts.push_back(loopNest(loopVars, view(v->shape()), BlockStmt::make({copy})));
    }
    offset += v->shape()[axis];
  }
  ctx.k.body = body;
  return true;
}

}  // namespace

void lowerDataMovement(LowerCtx& ctx, const Node&) {
  if (lowerConcatAsCopies(ctx)) return;
  registerSpecials(ctx);
  // One nest per distinct output shape (a Split's parts, heads laid out differently), in output order.
  std::vector<Shape> domains;
  for (const Value* v : ctx.outputs)
    if (std::find(domains.begin(), domains.end(), v->shape()) == domains.end()) domains.push_back(v->shape());
  auto body = BlockStmt::make();
  for (size_t m = 0; m < domains.size(); ++m) {
    std::vector<std::string> loopVars = names(domains.size() == 1 ? "i" : numbered("s", m) + "_", domains[m].size());
    auto nest = BlockStmt::make();
    Emitter em(ctx, domains[m], vars(loopVars), *nest);
    std::set<const Value*> others;
    for (const Value* v : ctx.outputs)
      if (v->shape() != domains[m]) others.insert(v);
    storeOutputs(em, others);
    body->stmts.push_back(loopNest(loopVars, domains[m], nest));
  }
  ctx.k.body = body;
}

}  // namespace tessera::kernel
