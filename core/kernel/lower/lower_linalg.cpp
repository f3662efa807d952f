// Gemm, conv and pooling: a nest over the output, a register accumulator per output element, reduction loops
// inside, and the pointwise epilogue applied to the accumulator before the store.
#include <algorithm>
#include <cmath>

#include "kernel/lower/lower_context.h"
#include "ops/registry.h"
#include "ops/window.h"

namespace tessera::kernel {
namespace {

Expr loadInput(LowerCtx& ctx, const Value* v, std::vector<Expr> idx) {
  return Load::make(ctx.inputBuffer.at(v), v->dtype(), std::move(idx));
}

// The conv's input may be a Transpose in the group that reads an input of the group (x in NHWC turned
// NCHW for the conv, docs/fusion.md): its index map folds into the conv's loads, so the kernel reads x where
// it lies. Null when input 0 comes from outside the group; the conv's other inputs must.
const Node* foldedInputTranspose(LowerCtx& ctx, const Node& anchor) {
  const Value* x = anchor.input(0);
  if (!x || !ctx.produced(x)) return nullptr;
  const Node& t = *x->producer();
  if (t.op() != "Transpose" || !t.input(0) || ctx.produced(t.input(0)))
    ctx.fail(anchor, "input 0 is computed inside the group by " + t.op() + " '" + t.id() +
                         "'; only a Transpose of a group input folds into the conv's loads");
  for (const Use& u : x->uses())
    if (u.node != &anchor) ctx.fail(t, "its result is also read by '" + u.node->id() + "'; it folds into a conv only");
  if (ctx.outputBuffer.count(x)) ctx.fail(t, "its result is also needed outside the group; it cannot fold into the conv");
  for (size_t i = 1; i < anchor.numInputs(); ++i)
    if (anchor.input(i) && ctx.produced(anchor.input(i)))
      ctx.fail(anchor, "input " + std::to_string(i) + " is computed inside the group; only epilogues are fused");
  return &t;
}

Expr loadConvInput(LowerCtx& ctx, const Node& anchor, const Node* transpose, std::vector<Expr> idx) {
  if (!transpose) return loadInput(ctx, anchor.input(0), std::move(idx));
  const Value* src = transpose->input(0);
  return loadInput(ctx, src, transposeIndex(*transpose, src->shape(), idx));
}

// Runs the epilogue and stores the outputs over the loop nest `loopVars` x `loopShape`; `result` is the
// anchor's output value at the current point, which is `storeIdx` in the output domain `storeDomain` (the
// same as the loops but for MatMul's 1-D operands, whose axes of extent 1 are dropped).
void finish(LowerCtx& ctx, const Node& anchor, const std::vector<std::string>& loopVars, const Shape& loopShape,
            std::shared_ptr<BlockStmt> body, Expr result, const std::vector<Expr>& storeIdx, const Shape& storeDomain) {
  ctx.special[anchor.output(0)] = [result](Emitter&) { return result; };
  Emitter em(ctx, storeDomain, storeIdx, *body);
  storeOutputs(em);
  ctx.k.body = BlockStmt::make({loopNest(loopVars, loopShape, body)});
}

// Makes each buffer a view of its value (Buffer::valueShape keeps the value's own shape).
void applyViews(const std::vector<std::pair<Buffer*, Shape>>& views) {
  for (const auto& [b, view] : views)
    if (view != b->shape) {
      b->valueShape = b->shape;
      b->shape = view;
    }
}

Expr allOf(const std::vector<Expr>& conds) {
  Expr r = conds.front();
  for (size_t i = 1; i < conds.size(); ++i) r = Binary::make(BinaryOp::And, r, conds[i]);
  return r;
}

}  // namespace

void requireExternalInputs(LowerCtx& ctx, const Node& anchor) {
  for (size_t i = 0; i < anchor.numInputs(); ++i)
    if (anchor.input(i) && ctx.produced(anchor.input(i)))
      ctx.fail(anchor, "input " + std::to_string(i) + " is computed inside the group; only epilogues are fused");
}

void finish(LowerCtx& ctx, const Node& anchor, const std::vector<std::string>& outVars, const Shape& domain,
            std::shared_ptr<BlockStmt> body, Expr result) {
  finish(ctx, anchor, outVars, domain, std::move(body), std::move(result), vars(outVars), domain);
}

Expr inBounds(const Expr& i, int64_t begin, int64_t end) {
  return Binary::make(BinaryOp::And, Binary::make(BinaryOp::Ge, i, intImm(begin)), Binary::make(BinaryOp::Lt, i, intImm(end)));
}

std::vector<std::string> spatialNames(const std::string& prefix, size_t rank) {
  if (rank > 3) return names(prefix, rank);
  std::vector<std::string> out;
  for (size_t a = 0; a < rank; ++a) out.push_back(prefix + "dhw"[3 - rank + a]);
  return out;
}

namespace {

// The window of a conv or pool over the spatial axes of an [N, C, spatial...] input, with auto_pad and
// ceil_mode resolved to explicit pads from the shapes (ops::windowGeometry, as the reference does).
struct Window {
  ops::WindowGeometry geo;
  std::vector<std::string> out, taps;  // loop names per spatial axis
  std::vector<Expr> coords;            // input coordinate per spatial axis
  bool padded = false;                 // some tap may fall outside the input
};

Window windowOf(const LowerCtx& ctx, const Node& n, const Shape& x, const Shape& kernel, bool ceilMode, bool global) {
  if (x.size() < 3) ctx.fail(n, "expects an [N, C, spatial...] input, got " + shapeToString(x));
  Shape spatial(x.begin() + 2, x.end());
  if (kernel.size() != spatial.size()) ctx.fail(n, "kernel shape " + shapeToString(kernel) + " does not match " + shapeToString(x));
  Window w;
  if (global) {
    w.geo.input = w.geo.kernel = spatial;
    w.geo.output.assign(spatial.size(), 1);
    w.geo.strides.assign(spatial.size(), 1);
    w.geo.dilations.assign(spatial.size(), 1);
    w.geo.padsBegin.assign(spatial.size(), 0);
    w.geo.padsEnd.assign(spatial.size(), 0);
  } else {
    w.geo = ops::windowGeometry(n, spatial, kernel, ceilMode);
  }
  w.out = spatialNames("o", spatial.size());
  w.taps = spatialNames("k", spatial.size());
  for (size_t a = 0; a < spatial.size(); ++a) {
    const ops::WindowGeometry& g = w.geo;
    w.coords.push_back(add(sub(mul(var(w.out[a]), intImm(g.strides[a])), intImm(g.padsBegin[a])),
                           mul(var(w.taps[a]), intImm(g.dilations[a]))));
    int64_t last = (g.output[a] - 1) * g.strides[a] - g.padsBegin[a] + (g.kernel[a] - 1) * g.dilations[a];
    w.padded = w.padded || g.padsBegin[a] > 0 || last >= g.input[a];
  }
  return w;
}

// Every tap inside the input (or, with `padded`, inside the explicitly padded input).
Expr insideInput(const Window& w, bool padded = false) {
  std::vector<Expr> conds;
  for (size_t a = 0; a < w.coords.size(); ++a) {
    int64_t begin = padded ? -w.geo.padsBegin[a] : 0, end = w.geo.input[a] + (padded ? w.geo.padsEnd[a] : 0);
    conds.push_back(inBounds(w.coords[a], begin, end));
  }
  return allOf(conds);
}

template <class T>
std::vector<T> concat(std::vector<T> a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The flat offset in the input of MaxPool's argmax (the Indices output): (n * C + c) * plane + the spatial
// offset, row-major or (storage_order = 1) column-major over the spatial axes.
Expr argmaxOffset(const Node& n, const Window& w, const Shape& xs) {
  const Shape& in = w.geo.input;
  bool columnMajor = n.attrInt("storage_order", 0) == 1;
  Expr spatial = intImm(0);
  int64_t stride = 1;
  for (size_t s = 0; s < in.size(); ++s) {
    size_t a = columnMajor ? s : in.size() - 1 - s;
    spatial = add(spatial, mul(w.coords[a], intImm(stride)));
    stride *= in[a];
  }
  return add(mul(add(mul(var("n"), intImm(xs[1])), var("c")), intImm(stride)), spatial);
}

// The rows of a batched MatMul whose B has no batch axes (a transformer's x·W over [batch, tokens, features]):
// one gemm of batch·M rows, so that the gemm's tiles run across the batches. ViT's 197 tokens left 16-row tiles,
// the only side dividing 197 (12.5 TFLOP/s in f32 on the H200, against 38 at 4096³). The buffers of A, the
// outputs and the epilogue's operands of the output's shape are viewed as [batch·M, last axis]; operands that
// vary along the last axis only as [last axis]. Returns the merged row count, or 0 (the nest stays batched) when
// some operand varies otherwise (a bias per batch, a positional table broadcast over the batch).
int64_t mergeBatchRows(LowerCtx& ctx, const Node& anchor) {
  const Shape& out = anchor.output(0)->shape();
  const Value* a = anchor.input(0);
  if (anchor.op() != "MatMul" || out.size() < 3 || a->shape().size() != out.size() || anchor.input(1)->shape().size() < 2)
    return 0;
  Shape rows(out.begin(), out.end() - 1);  // batch..., M
  auto leadingRows = [&](const Shape& s) { return s.size() == out.size() && std::equal(rows.begin(), rows.end(), s.begin()); };
  auto lastOnly = [](const Shape& s) { return std::all_of(s.begin(), s.end() - (s.empty() ? 0 : 1), [](int64_t e) { return e == 1; }); };
  if (!leadingRows(a->shape()) || !lastOnly(Shape(anchor.input(1)->shape().begin(), anchor.input(1)->shape().end() - 1)))
    return 0;
  for (const Node* n : ctx.nodes)
    if (n != &anchor && (!isPointwiseOp(n->op()) || n->op() == "Range" || n->op() == "ConstantOfShape")) return 0;
  std::vector<std::pair<Buffer*, Shape>> views;
  int64_t merged = numElements(rows);
  if (merged == 0) return 0;  // no rows at all: 0 also means "stays batched", so no buffer may become a view
  for (Buffer& b : ctx.k.buffers) {
    if (b.scope != MemScope::Global) continue;
    if (b.value == anchor.input(1)->name()) views.push_back({&b, {b.shape.end()[-2], b.shape.back()}});
    else if (leadingRows(b.shape)) views.push_back({&b, {merged, b.shape.back()}});
    else if (lastOnly(b.shape) && !b.shape.empty()) views.push_back({&b, {b.shape.back()}});
    else if (!b.shape.empty()) return 0;
  }
  applyViews(views);
  return merged;
}

}  // namespace

// MatMul's 1-D operands are promoted as numpy does (a vector a is a 1 x K row, b a K x 1 column): the nest
// keeps the i and j loops with extent 1, and the stores drop those axes.
void lowerGemm(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* a = anchor.input(0);
  const Value* b = anchor.input(1);
  const Shape& out = anchor.output(0)->shape();
  bool gemm = anchor.op() == "Gemm";
  bool aVec = a->shape().size() == 1, bVec = b->shape().size() == 1;
  if (a->shape().empty() || b->shape().empty() || (gemm && (aVec || bVec))) ctx.fail(anchor, "operands must have rank >= 2 (1 for MatMul)");
  Shape loopShape = out;
  int64_t mergedRows = mergeBatchRows(ctx, anchor);
  if (mergedRows) loopShape = {mergedRows, out.back()};
  else if (aVec && bVec) loopShape = {1, 1};
  else if (aVec) loopShape.insert(loopShape.end() - 1, 1);
  else if (bVec) loopShape.push_back(1);
  bool transA = gemm && anchor.attrInt("transA", 0), transB = gemm && anchor.attrInt("transB", 0);
  int64_t K = transA ? a->shape()[0] : a->shape().back();
  Shape batch(loopShape.begin(), loopShape.end() - 2);
  std::vector<std::string> outVars = names("b", batch.size());
  outVars.push_back("i");
  outVars.push_back("j");
  std::vector<Expr> bv = vars(std::vector<std::string>(outVars.begin(), outVars.end() - 2));
  auto batchIdx = [&](const Value* v, Expr r, Expr c) {
    const Shape& shape = ctx.k.findBuffer(ctx.inputBuffer.at(v))->shape;  // a view where the batch merged
    Shape vb(shape.begin(), shape.end() - 2);
    std::vector<Expr> idx = broadcastIndex(vb, batch, bv);
    idx.push_back(std::move(r));
    idx.push_back(std::move(c));
    return idx;
  };
  DType at = accType(anchor.output(0)->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
  std::vector<Expr> ia = aVec ? std::vector<Expr>{var("k")} : transA ? batchIdx(a, var("k"), var("i")) : batchIdx(a, var("i"), var("k"));
  std::vector<Expr> ib = bVec ? std::vector<Expr>{var("k")} : transB ? batchIdx(b, var("j"), var("k")) : batchIdx(b, var("k"), var("j"));
  Expr ea = loadInput(ctx, a, ia), eb = loadInput(ctx, b, ib);
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)}, Binary::make(BinaryOp::Mul, Cast::make(at, ea), Cast::make(at, eb)));
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest({"k"}, {K}, red, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (gemm) {
    // alpha and beta are floats: an integer Gemm scales in double and truncates once, as the reference does
    // (in its own type 0.5 would become 0; found by diff_fuzz).
    DType et = isFloat(at) ? at : DType::F64;
    if (et != at) result = Cast::make(et, result);
    result = Binary::make(BinaryOp::Mul, FloatImm::make(anchor.attrFloat("alpha", 1.0), et), result);
    if (const Value* c = anchor.input(2)) {
      Expr ec = Cast::make(et, Load::make(ctx.inputBuffer.at(c), c->dtype(), broadcastIndex(c->shape(), out, vars(outVars))));
      result = Binary::make(BinaryOp::Add, result, Binary::make(BinaryOp::Mul, FloatImm::make(anchor.attrFloat("beta", 1.0), et), ec));
    }
    if (et != at) result = Cast::make(at, result);
  }
  std::vector<Expr> storeIdx = bv;
  if (!aVec) storeIdx.push_back(var("i"));
  if (!bVec) storeIdx.push_back(var("j"));
  finish(ctx, anchor, outVars, loopShape, body, result, storeIdx, mergedRows ? loopShape : out);
}

namespace {

// A 2-D conv whose window is one pixel, unstrided and unpadded reads no halo: for each image (and group) it is
// the matmul W [oc, ic] · X [ic, h·w] (canonicalize makes a strided one a Slice and such a conv). It is lowered
// as that batched gemm (loops b0 = n, then b1 = the group when there are several, i = oc, j = h·w, k = ic), so it
// takes the gemm template's forms: on the GPU the tensor cores and 16-byte fills, where the conv's implicit-GEMM
// form filled its pixel tiles element by element (4-byte cp.async, a division per element: ResNet-50's 1 x 1
// convs ran at 7-20 TFLOP/s in tf32 on the H200); on the CPU the packed register tiles (one core of the build
// machine, against the conv's form: 256 -> 64 channels at 56 x 56 1.55 -> 0.99 ms, 1024 -> 256 at 14 x 14 1.35 ->
// 1.14, 512 -> 1000 at 13 x 13 4.69 -> 2.18, 2048 -> 512 at 7 x 7 2.03 -> 1.29).
// The views (Buffer::valueShape), the channels written C for [oc] or [groups, oc / groups]: W as [C..., ic],
// X as [n, C_in..., h·w], buffers of the output's shape as [n, C..., h·w], epilogue operands constant over the
// plane as [..., C..., 1]. False, with nothing changed, where a buffer has no such view (an operand that varies
// along h or w only) or an epilogue op's axis would move. (A strided X read at (j / ow · s, j % ow · s) is no
// gemm operand: the tile fills need affine indices.)
bool pointwiseConvViews(LowerCtx& ctx, const Node& anchor) {
  const Value* x = anchor.input(0);
  const Value* w = anchor.input(1);
  const Shape& xs = x->shape();
  const Shape& ws = w->shape();
  const Shape& out = anchor.output(0)->shape();
  const int64_t groups = anchor.attrInt("group", 1);
  if (ctx.produced(x) || xs.size() != 4 || ws.size() != 4 || ws[2] != 1 || ws[3] != 1 || groups < 1 ||
      out[1] % groups != 0 || xs[1] != groups * ws[1])
    return false;
  ops::WindowGeometry geo = ops::windowGeometry(anchor, {xs[2], xs[3]}, {1, 1}, false);
  for (size_t a = 0; a < 2; ++a)
    if (geo.strides[a] != 1 || geo.padsBegin[a] != 0 || geo.padsEnd[a] != 0) return false;
  for (const Node* n : ctx.nodes)
    if (n != &anchor && (!isPointwiseOp(n->op()) || n->op() == "QuantizeLinear" || n->op() == "DequantizeLinear" ||
                         n->op() == "Range" || n->op() == "ConstantOfShape"))
      return false;
  const int64_t plane = out[2] * out[3];
  auto channels = [groups](int64_t c) { return groups == 1 ? Shape{c} : Shape{groups, c / groups}; };
  auto cat = [](Shape a, const Shape& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  std::vector<std::pair<Buffer*, Shape>> views;
  for (Buffer& b : ctx.k.buffers) {
    if (b.scope != MemScope::Global) continue;
    const Shape& s = b.shape;
    const bool perChannel = s.size() >= 2 && s.end()[-2] == 1 && s.back() == 1;
    const bool perPixel = s.size() >= 2 && s.end()[-2] == out[2] && s.back() == out[3];
    if (b.value == x->name()) {
      views.push_back({&b, cat(cat({xs[0]}, channels(xs[1])), {plane})});
    } else if (b.value == w->name()) {
      views.push_back({&b, cat(channels(ws[0]), {ws[1]})});
    } else if (anchor.input(2) && b.value == anchor.input(2)->name()) {
      continue;  // the bias [oc], read at the output channel
    } else if (numElements(s) == 1) {
      continue;  // broadcast everywhere, in any view
    } else if (!perChannel && !perPixel) {
      return false;  // [w] or [h, 1] broadcasts along the rows of the plane, not along h·w
    } else {
      Shape lead(s.begin(), s.end() - std::min<size_t>(3, s.size()));
      if (s.size() >= 3 && s.end()[-3] != 1 && s.end()[-3] != out[1]) return false;
      if (s.size() >= 3) lead = cat(lead, s.end()[-3] == 1 ? Shape(channels(out[1]).size(), 1) : channels(out[1]));
      views.push_back({&b, cat(lead, {perChannel ? 1 : plane})});
    }
  }
  applyViews(views);
  return true;
}

}  // namespace

bool lowerPointwiseConv(LowerCtx& ctx, const Node& anchor) {
  if (!pointwiseConvViews(ctx, anchor)) return false;
  const Value* x = anchor.input(0);
  const Value* w = anchor.input(1);
  const Shape& out = anchor.output(0)->shape();
  const int64_t groups = anchor.attrInt("group", 1), perGroup = out[1] / groups;
  const bool grouped = groups > 1;
  DType at = accType(anchor.output(0)->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
  std::vector<Expr> wi = {var("i"), var("k")}, xi = {var("b0"), var("k"), var("j")};
  if (grouped) {
    wi.insert(wi.begin(), var("b1"));
    xi.insert(xi.begin() + 1, var("b1"));
  }
  Expr ew = Cast::make(at, loadInput(ctx, w, wi));
  Expr ex = Cast::make(at, loadInput(ctx, x, xi));
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)}, Binary::make(BinaryOp::Mul, ew, ex));
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest({"k"}, {w->shape()[1]}, red, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (const Value* bias = anchor.input(2)) {
    Expr channel = grouped ? add(mul(var("b1"), intImm(perGroup)), var("i")) : var("i");
    result = Binary::make(BinaryOp::Add, result, Cast::make(at, loadInput(ctx, bias, {channel})));
  }
  const int64_t plane = out[2] * out[3];
  if (grouped) finish(ctx, anchor, {"b0", "b1", "i", "j"}, {out[0], groups, perGroup, plane}, body, result);
  else finish(ctx, anchor, {"b0", "i", "j"}, {out[0], out[1], plane}, body, result);
  return true;
}

void lowerConv(LowerCtx& ctx, const Node& anchor) {
  const Node* transpose = foldedInputTranspose(ctx, anchor);
  if (!transpose) requireExternalInputs(ctx, anchor);
  const Value* x = anchor.input(0);
  const Value* w = anchor.input(1);
  const Shape& xs = x->shape();
  const Shape& ws = w->shape();
  const Shape& out = anchor.output(0)->shape();
  if (ws.size() != xs.size() || ws.size() < 3) ctx.fail(anchor, "weights " + shapeToString(ws) + " do not match the input " + shapeToString(xs));
  Window win = windowOf(ctx, anchor, xs, Shape(ws.begin() + 2, ws.end()), false, false);
  int64_t groups = anchor.attrInt("group", 1);
  int64_t cPerGroup = ws[1], ocPerGroup = out[1] / std::max<int64_t>(groups, 1);
  DType at = accType(anchor.output(0)->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
  Expr c = groups == 1 ? var("ic") : add(mul(idiv(var("oc"), intImm(ocPerGroup)), intImm(cPerGroup)), var("ic"));
  Expr ex = Cast::make(at, loadConvInput(ctx, anchor, transpose, concat({var("n"), c}, win.coords)));
  if (win.padded) ex = Select::make(insideInput(win), ex, FloatImm::make(0, at));
  Expr ew = Cast::make(at, loadInput(ctx, w, concat({var("oc"), var("ic")}, vars(win.taps))));
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)}, Binary::make(BinaryOp::Mul, ex, ew));
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest(concat({"ic"}, win.taps), concat({cPerGroup}, win.geo.kernel), red, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (const Value* bias = anchor.input(2))
    result = Binary::make(BinaryOp::Add, result, Cast::make(at, loadInput(ctx, bias, {var("oc")})));
  finish(ctx, anchor, concat({"n", "oc"}, win.out), out, body, result);
}

// ConvTranspose as a gather: output o on an axis sums input i = (o + padBegin − k·dilation) / stride over the
// taps k where that divides exactly and falls inside the input (the scatter of the definition, turned around so
// that each output element is one thread's sum). The channels of a group as Conv's; W is [C, M / group, k...].
void lowerConvTranspose(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* x = anchor.input(0);
  const Value* w = anchor.input(1);
  const Shape& out = anchor.output(0)->shape();
  ops::WindowGeometry g = ops::convTransposeGeometry(anchor, x->shape(), w->shape());
  int64_t groups = anchor.attrInt("group", 1);
  int64_t cPerGroup = x->shape()[1] / std::max<int64_t>(groups, 1), mPerGroup = w->shape()[1];
  std::vector<std::string> outs = spatialNames("o", g.rank()), taps = spatialNames("k", g.rank());
  std::vector<Expr> coords, valid;
  for (size_t a = 0; a < g.rank(); ++a) {
    Expr t = sub(add(var(outs[a]), intImm(g.padsBegin[a])), mul(var(taps[a]), intImm(g.dilations[a])));
    Expr i = g.strides[a] == 1 ? t : idiv(t, intImm(g.strides[a]));
    valid.push_back(Binary::make(BinaryOp::Ge, t, intImm(0)));
    if (g.strides[a] != 1) valid.push_back(Binary::make(BinaryOp::Eq, imod(t, intImm(g.strides[a])), intImm(0)));
    valid.push_back(Binary::make(BinaryOp::Lt, i, intImm(g.input[a])));
    coords.push_back(i);
  }
  DType at = accType(anchor.output(0)->dtype());
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
  Expr group = idiv(var("oc"), intImm(mPerGroup));
  Expr c = groups == 1 ? var("ic") : add(mul(group, intImm(cPerGroup)), var("ic"));
  Expr m = groups == 1 ? var("oc") : imod(var("oc"), intImm(mPerGroup));
  Expr ex = Cast::make(at, loadInput(ctx, x, concat({var("n"), c}, coords)));
  Expr ew = Cast::make(at, loadInput(ctx, w, concat({c, m}, vars(taps))));
  Expr product = Select::make(allOf(valid), Binary::make(BinaryOp::Mul, ex, ew), FloatImm::make(0, at));
  Stmt red = ReduceStmt::make(ReduceOp::Sum, acc, {intImm(0)}, product);
  red->provenance = {anchor.id()};
  body->stmts.push_back(loopNest(concat({"ic"}, taps), concat({cPerGroup}, g.kernel), red, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (const Value* bias = anchor.input(2))
    result = Binary::make(BinaryOp::Add, result, Cast::make(at, loadInput(ctx, bias, {var("oc")})));
  finish(ctx, anchor, concat({"n", "oc"}, outs), out, body, result);
}

// Max or average over the window taps (the taps outside the input skipped); MaxPool's Indices output
// tracks the first maximum's input offset next to the max.
void lowerPool(LowerCtx& ctx, const Node& anchor) {
  requireExternalInputs(ctx, anchor);
  const Value* x = anchor.input(0);
  const Shape& xs = x->shape();
  const Shape& out = anchor.output(0)->shape();
  const OpTraits& traits = opTraits(anchor.op());
  bool global = traits.pool == PoolKind::Global;
  bool isMax = traits.reduce == ReduceKind::Max;  // else a mean (isPoolOp lets no other kind through)
  Shape kernel = global && xs.size() > 2 ? Shape(xs.begin() + 2, xs.end()) : anchor.attrInts("kernel_shape");
  Window win = windowOf(ctx, anchor, xs, kernel, !global && anchor.attrInt("ceil_mode", 0), global);
  DType at = accType(x->dtype());
  ReduceOp op = isMax ? ReduceOp::Max : ReduceOp::Sum;
  auto body = BlockStmt::make();
  std::string acc = ctx.newAccumulator(*body, at, reduceInit(op, at), anchor.id());
  Expr inside = insideInput(win);
  Expr ex = Cast::make(at, loadInput(ctx, x, concat({var("n"), var("c")}, win.coords)));
  if (win.padded) ex = Select::make(inside, ex, reduceInit(op, at));
  auto taps = BlockStmt::make();
  const Value* indices = anchor.numOutputs() > 1 ? anchor.output(1) : nullptr;
  if (indices && ctx.outputBuffer.count(indices)) {
    std::string arg = ctx.newAccumulator(*body, DType::I64, intImm(-1), anchor.id());
    Expr best = Load::make(arg, DType::I64, {intImm(0)});
    Expr better = Binary::make(BinaryOp::Or, Binary::make(BinaryOp::Lt, best, intImm(0)),
                               Binary::make(BinaryOp::Gt, ex, Load::make(acc, at, {intImm(0)})));
    if (win.padded) better = Binary::make(BinaryOp::And, inside, better);
    Stmt track = StoreStmt::make(arg, {intImm(0)}, Select::make(better, argmaxOffset(anchor, win, xs), best));
    track->provenance = {anchor.id()};
    taps->stmts.push_back(track);
    ctx.special[indices] = [best](Emitter&) { return best; };
  }
  Stmt red = ReduceStmt::make(op, acc, {intImm(0)}, ex);
  red->provenance = {anchor.id()};
  taps->stmts.push_back(red);
  Expr count = FloatImm::make(double(numElements(win.geo.kernel)), at);
  if (!isMax && win.padded) {  // the divisor: taps inside the input, or inside the padded input
    Expr counted = anchor.attrInt("count_include_pad", 0) ? insideInput(win, true) : inside;
    std::string cnt = ctx.newAccumulator(*body, at, FloatImm::make(0, at), anchor.id());
    Stmt c = ReduceStmt::make(ReduceOp::Sum, cnt, {intImm(0)}, Select::make(counted, FloatImm::make(1, at), FloatImm::make(0, at)));
    c->provenance = {anchor.id()};
    taps->stmts.push_back(c);
    count = Load::make(cnt, at, {intImm(0)});
  }
  body->stmts.push_back(loopNest(win.taps, win.geo.kernel, taps, true));
  Expr result = Load::make(acc, at, {intImm(0)});
  if (!isMax) result = Binary::make(BinaryOp::Div, result, count);
  finish(ctx, anchor, concat({"n", "c"}, win.out), out, body, result);
}

}  // namespace tessera::kernel
