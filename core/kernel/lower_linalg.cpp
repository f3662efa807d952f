// Gemm, conv and pooling: a nest over the output, a register accumulator per output element, reduction loops
// inside, and the pointwise epilogue applied to the accumulator before the store.
#include <cmath>

#include "kernel/lower_context.h"

namespace tessera::kernel {
namespace {

// Refuses pointwise prologues: the anchor's inputs must come from outside the group.
void requireExternalInputs(LowerCtx& ctx, const Node& anchor) {
  for (size_t i = 0; i < anchor.numInputs(); ++i)
    if (anchor.input(i) && ctx.produced(anchor.input(i)))
      ctx.fail(anchor, "input " + std::to_string(i) + " is computed inside the group; only epilogues are fused");
}

Expr loadInput(LowerCtx& ctx, const Value* v, std::vector<Expr> idx) {
  return Load::make(ctx.inputBuffer.at(v), v->dtype(), std::move(idx));
}

// Runs the epilogue and stores the outputs; `result` is the anchor's output value at the current point.
void finish(LowerCtx& ctx, const Node& anchor, const std::vector<std::string>& outVars, const Shape& domain,
            std::shared_ptr<BlockStmt> body, Expr result) {
  ctx.special[anchor.output(0)] = [result](Emitter&) { return result; };
  Emitter em(ctx, domain, vars(outVars), *body);
  storeOutputs(em);
  ctx.k.body = BlockStmt::make({loopNest(outVars, domain, body)});
}

Expr inBounds(const Expr& i, int64_t extent) {
  return Binary::make(BinaryOp::And, Binary::make(BinaryOp::Ge, i, intImm(0)), Binary::make(BinaryOp::Lt, i, intImm(extent)));
}

struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

Window windowOf(const LowerCtx& ctx, const Node& n, const Shape& x, std::vector<int64_t> kernel) {
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID") ctx.fail(n, "auto_pad " + autoPad + " is not lowered");
  Window w{std::move(kernel), n.attrInts("strides", {1, 1}), n.attrInts("pads", {0, 0, 0, 0}),
           n.attrInts("dilations", {1, 1})};
  if (x.size() != 4 || w.kernel.size() != 2 || w.strides.size() != 2 || w.pads.size() != 4 || w.dilations.size() != 2)
    ctx.fail(n, "only 2-D NCHW windows are lowered");
  return w;
}

// Input coordinate of output position `o` and window tap `t` on spatial axis `a`.
Expr inputCoord(const Window& w, int a, const std::string& o, const std::string& t) {
  return add(sub(mul(var(o), intImm(w.strides[a])), intImm(w.pads[a])), mul(var(t), intImm(w.dilations[a])));
}

bool padded(const Window& w) {
  for (int64_t p : w.pads)
    if (p != 0) return true;
  return false;
}

}  // namespace

void lowerGemm(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* a = anchor.input(0);
  const Value* b = anchor.input(1);
  const Shape& out = anchor.output(0)->shape();
  if (a->shape().size() < 2 || b->shape().size() < 2) ctx.fail(anchor, "1-D operands are not lowered");
  bool gemm = anchor.op() == "Gemm";
  bool transA = gemm && anchor.attrInt("transA", 0), transB = gemm && anchor.attrInt("transB", 0);
  int64_t K = transA ? a->shape()[0] : a->shape()[a->shape().size() - 1];
  Shape batch(out.begin(), out.end() - 2);
  std::vector<std::string> outVars = names("b", batch.size());
  outVars.push_back("i");
  outVars.push_back("j");
  std::vector<Expr> bv = vars(std::vector<std::string>(outVars.begin(), outVars.end() - 2));
  auto batchIdx = [&](const Value* v, Expr r, Expr c) {
    Shape vb(v->shape().begin(), v->shape().end() - 2);
    std::vector<Expr> idx = broadcastIndex(vb, batch, bv);
    idx.push_back(std::move(r));
    idx.push_back(std::move(c));
    return idx;
  };
  DType at = accType(anchor.output(0)->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
  Expr ea = loadInput(ctx, a, transA ? batchIdx(a, var("k"), var("i")) : batchIdx(a, var("i"), var("k")));
  Expr eb = loadInput(ctx, b, transB ? batchIdx(b, var("j"), var("k")) : batchIdx(b, var("k"), var("j")));
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)}, Binary::make(BinaryOp::Mul, Cast::make(at, ea), Cast::make(at, eb)));
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest({"k"}, {K}, red, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (gemm) {
    result = Binary::make(BinaryOp::Mul, FloatImm::make(anchor.attrFloat("alpha", 1.0), at), result);
    if (const Value* c = anchor.input(2)) {
      Expr ec = Cast::make(at, Load::make(ctx.inputBuffer.at(c), c->dtype(), broadcastIndex(c->shape(), out, vars(outVars))));
      result = Binary::make(BinaryOp::Add, result, Binary::make(BinaryOp::Mul, FloatImm::make(anchor.attrFloat("beta", 1.0), at), ec));
    }
  }
  finish(ctx, anchor, outVars, out, body, result);
}

void lowerConv(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* x = anchor.input(0);
  const Value* w = anchor.input(1);
  const Shape& xs = x->shape();
  const Shape& ws = w->shape();
  const Shape& out = anchor.output(0)->shape();
  if (ws.size() != 4) ctx.fail(anchor, "only 2-D NCHW convolutions are lowered");
  Window win = windowOf(ctx, anchor, xs, {ws[2], ws[3]});
  int64_t groups = anchor.attrInt("group", 1);
  int64_t cPerGroup = ws[1], ocPerGroup = out[1] / std::max<int64_t>(groups, 1);
  DType at = accType(anchor.output(0)->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
  Expr ih = inputCoord(win, 0, "oh", "kh"), iw = inputCoord(win, 1, "ow", "kw");
  Expr c = groups == 1 ? var("ic") : add(mul(idiv(var("oc"), intImm(ocPerGroup)), intImm(cPerGroup)), var("ic"));
  Expr ex = Cast::make(at, loadInput(ctx, x, {var("n"), c, ih, iw}));
  if (padded(win))
    ex = Select::make(Binary::make(BinaryOp::And, inBounds(ih, xs[2]), inBounds(iw, xs[3])), ex, FloatImm::make(0, at));
  Expr ew = Cast::make(at, loadInput(ctx, w, {var("oc"), var("ic"), var("kh"), var("kw")}));
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)}, Binary::make(BinaryOp::Mul, ex, ew));
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest({"ic", "kh", "kw"}, {cPerGroup, ws[2], ws[3]}, red, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (const Value* bias = anchor.input(2))
    result = Binary::make(BinaryOp::Add, result, Cast::make(at, loadInput(ctx, bias, {var("oc")})));
  finish(ctx, anchor, {"n", "oc", "oh", "ow"}, out, body, result);
}

void lowerPool(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* x = anchor.input(0);
  const Shape& xs = x->shape();
  const Shape& out = anchor.output(0)->shape();
  if (anchor.numOutputs() > 1 && anchor.output(1) && !anchor.output(1)->uses().empty())
    ctx.fail(anchor, "the indices output is not lowered");
  bool global = anchor.op().rfind("Global", 0) == 0;
  bool isMax = anchor.op().find("Max") != std::string::npos;
  if (xs.size() != 4) ctx.fail(anchor, "only 2-D NCHW pools are lowered");
  Window win = global ? Window{{xs[2], xs[3]}, {1, 1}, {0, 0, 0, 0}, {1, 1}}
                      : windowOf(ctx, anchor, xs, anchor.attrInts("kernel_shape"));
  DType at = accType(x->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(isMax ? -INFINITY : 0.0, at), anchor.id());
  Expr ih = inputCoord(win, 0, "oh", "kh"), iw = inputCoord(win, 1, "ow", "kw");
  Expr inside = Binary::make(BinaryOp::And, inBounds(ih, xs[2]), inBounds(iw, xs[3]));
  Expr ex = Cast::make(at, loadInput(ctx, x, {var("n"), var("c"), ih, iw}));
  bool guard = padded(win) || (!global && anchor.attrInt("ceil_mode", 0));
  if (guard) ex = Select::make(inside, ex, FloatImm::make(isMax ? -INFINITY : 0.0, at));
  auto taps = BlockStmt::make();
  Stmt red = ReduceStmt::make(isMax ? ReduceOp::Max : ReduceOp::Sum, acc, {intImm(0)}, ex);
  red->provenance = {anchor.id()};
  taps->stmts.push_back(red);
  Expr count = FloatImm::make(double(win.kernel[0] * win.kernel[1]), at);
  if (!isMax && guard && !anchor.attrInt("count_include_pad", 0)) {
    std::string cnt = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
    Stmt c = ReduceStmt::make(ReduceOp::Sum, cnt, {intImm(0)}, Select::make(inside, FloatImm::make(1, at), FloatImm::make(0, at)));
    c->provenance = {anchor.id()};
    taps->stmts.push_back(c);
    count = Load::make(cnt, at, {intImm(0)});
  }
  body->stmts.push_back(loopNest({"kh", "kw"}, {win.kernel[0], win.kernel[1]}, taps, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (!isMax) result = Binary::make(BinaryOp::Div, result, count);
  finish(ctx, anchor, {"n", "c", "oh", "ow"}, out, body, result);
}

}  // namespace tessera::kernel
