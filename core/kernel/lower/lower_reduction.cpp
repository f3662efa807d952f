// Row reductions over any set of axes: an outer nest over the kept axes (one "row" per kept index), and per
// row one loop per reduction phase over the reduced axes flattened into one index (k0, k1, ..., then j for
// the row-wide outputs), each reduced axis recovered from it by division and remainder. The reduced axes
// need not be the last ones nor contiguous, so a reduction over axis 0 or over all axes is the same nest.
#include <algorithm>
#include <cmath>
#include <memory>

#include "kernel/lower/lower_context.h"
#include "ops/registry.h"

namespace tessera::kernel {
namespace {

int64_t normalizedAxis(const LowerCtx& ctx, const Node& n, int64_t axis, size_t rank) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r) ctx.fail(n, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  return axis < 0 ? axis + r : axis;
}

// Axes [from, rank).
std::vector<int64_t> axesFrom(int64_t from, size_t rank) {
  std::vector<int64_t> out;
  for (int64_t a = from; a < int64_t(rank); ++a) out.push_back(a);
  return out;
}

// The sorted axes of n's input 0 that n reduces over.
std::vector<int64_t> reducedAxesOf(const LowerCtx& ctx, const Node& n) {
  size_t rank = n.input(0)->shape().size();
  const std::string& op = n.op();
  std::vector<int64_t> axes;
  if (op == "Softmax" || op == "LogSoftmax") {
    axes = {normalizedAxis(ctx, n, n.attrInt("axis", -1), rank)};
  } else if (op == "LayerNormalization") {
    axes = axesFrom(normalizedAxis(ctx, n, n.attrInt("axis", -1), rank), rank);
  } else if (op == "BatchNormalization") {  // training: statistics over every axis but the channels (1)
    for (int64_t a = 0; a < int64_t(rank); ++a)
      if (a != 1) axes.push_back(a);
  } else {
    std::optional<std::vector<int64_t>> given;
    if (n.numInputs() > 1 && n.input(1)) {
      given = constantInts(n.input(1));
      if (!given) ctx.fail(n, "input 1 (axes) must be a constant");
    } else if (n.hasAttr("axes")) {
      given = n.attrInts("axes");
    }
    if (given && !given->empty()) {
      for (int64_t a : *given) axes.push_back(normalizedAxis(ctx, n, a, rank));
    } else if (!n.attrInt("noop_with_empty_axes", 0)) {
      axes = axesFrom(0, rank);
    }
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

class RowLowering {
 public:
  explicit RowLowering(LowerCtx& ctx) : ctx_(ctx) {}

  void run() {
    const Node& first = *firstReduction();
    domain_ = first.input(0)->shape();
    reduced_.assign(domain_.size(), false);
    for (int64_t a : reducedAxesOf(ctx_, first)) reduced_[size_t(a)] = true;
    Shape outerShape, rowDomain = domain_;
    std::vector<Expr> rowIdx;
    for (size_t d = 0; d < domain_.size(); ++d) {
      if (reduced_[d]) {
        reducedExtents_.push_back(domain_[d]);
        rowDomain[d] = 1;
        rowIdx.push_back(intImm(0));
        continue;
      }
      outer_.push_back(numbered("i", outer_.size()));
      outerShape.push_back(domain_[d]);
      rowIdx.push_back(var(outer_.back()));
    }
    K_ = numElements(reducedExtents_);
    for (size_t d = 0; d < domain_.size(); ++d) trailingOuter_ = trailingOuter_ && (reduced_[d] || d >= domain_.size() - outer_.size());
    row_ = BlockStmt::make();
    outerShape_ = outerShape;
    keptEm_ = std::make_unique<Emitter>(ctx_, outerShape, vars(outer_), *row_);
    rowEm_ = std::make_unique<Emitter>(ctx_, rowDomain, rowIdx, *row_, keptEm_.get());
    rowEm_->delegate = [this](const Value* v) { return keptSpace(v); };
    for (const Node* n : ctx_.nodes) lowerNode(*n);
    storeRowOutputs();
    // A reduction over every axis is one row: a loop of one iteration still holds it, so that schedules find
    // the row loop they act on (a row split over blocks, say).
    ctx_.k.body = BlockStmt::make({outer_.empty() ? loopNest({"i0"}, {1}, row_) : loopNest(outer_, outerShape, row_)});
  }

 private:
  const Node* firstReduction() const {
    for (const Node* n : ctx_.nodes)
      if (isReductionNode(*n)) return n;
    return ctx_.nodes.front();
  }

  // True when `s`, aligned to the domain as numpy broadcasting does, has extent 1 on every reduced axis.
  bool constantAlongRow(const Shape& s) const {
    if (s.size() > domain_.size()) return false;
    size_t offset = domain_.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d)
      if (reduced_[d + offset] && s[d] != 1) return false;
    return true;
  }

  // A value computed once per row (a reduction result, or a value constant along the reduced axes).
  // Pointwise values are per row when all their inputs are.
  bool perRow(const Value* v) const {
    if (rowEm_->known.count(v) || keptSpace(v)) return true;
    // Rows of one element (every reduced axis of extent 1) are per-row values too: a squeezed output is then
    // stored per row, by the kept axes (the row-wide store wanted the whole domain: found by diff_fuzz).
    if (ctx_.special.count(v)) return false;
    if (ctx_.produced(v) && isPointwiseOp(v->producer()->op())) {
      for (const Value* in : v->producer()->inputs())
        if (in && !perRow(in)) return false;
      return true;
    }
    return constantAlongRow(v->shape());
  }

  // A result reduced without keepdims, or computed from one: its axes are the kept axes in order.
  bool squeezed(const Value* v) const {
    if (squeezed_.count(v)) return true;
    if (!ctx_.produced(v) || !isPointwiseOp(v->producer()->op())) return false;
    for (const Value* in : v->producer()->inputs())
      if (in && squeezed(in)) return true;
    return false;
  }

  // A value of the kept axes' shape computed from a squeezed result: numpy aligns its inputs with the kept
  // axes, not with the domain's trailing ones, so it is computed over the kept axes (keptEm_). Found by
  // diff_fuzz: ReduceMin over [7,1,0]'s last axis, then Mul by a [7,1] input, read that input at [0, 0].
  bool keptSpace(const Value* v) const {
    return outer_.size() < domain_.size() && v->shape() == outerShape_ && squeezed(v);
  }

  // A row value (a reduction result); a squeezed one is also a value of the kept axes.
  void setRowValue(const Value* y, Expr e) {
    rowEm_->known[y] = e;
    if (y->shape().size() < domain_.size()) {
      squeezed_.insert(y);
      keptEm_->known[y] = std::move(e);
    }
  }

  // A per-row value used inside a loop over the row. Numpy broadcasting aligns a value reduced without
  // keepdims with the trailing axes, which are the kept axes only when the reduced axes lead.
  bool delegateToRow(const Value* v) const {
    if (!perRow(v)) return false;
    const Shape& s = v->shape();
    if (squeezed(v) && s.size() < domain_.size() && numElements(s) > 1 && !trailingOuter_)
      ctx_.fail(*v->producer(), "value '" + v->name() + "' (reduced without keepdims) is broadcast along the row");
    return true;
  }

  // The index of the domain at flat reduced position `k` (the reduced axes row-major inside it).
  std::vector<Expr> domainIndex(const Expr& k) const {
    std::vector<Expr> idx;
    size_t o = 0, r = 0;
    int64_t stride = K_;
    for (size_t d = 0; d < domain_.size(); ++d) {
      if (!reduced_[d]) {
        idx.push_back(var(outer_[o++]));
        continue;
      }
      int64_t extent = reducedExtents_[r++];
      stride = extent ? stride / extent : 0;
      Expr q = idiv(k, intImm(std::max<int64_t>(stride, 1)));
      idx.push_back(r == 1 ? q : imod(q, intImm(extent)));
    }
    return idx;
  }

  // One reduction loop over the row; returns the accumulator's value after it.
  Expr reducePhase(ReduceOp op, DType t, const std::function<Expr(Emitter&)>& operand, const Node& n) {
    DType at = accType(t);
    std::string acc = ctx_.newAccumulator(*row_, at, reduceInit(op, at), n.id());
    std::string loopVar = numbered("k", phases_++);
    auto body = BlockStmt::make();
    Emitter em = phaseEmitter(loopVar, *body);
    Stmt red = ReduceStmt::make(op, acc, {intImm(0)}, Cast::make(at, operand(em)));
    red->provenance = {n.id()};
    body->stmts.push_back(red);
    row_->stmts.push_back(loopNest({loopVar}, {K_}, body, true));
    return Load::make(acc, at, {intImm(0)});
  }

  Emitter phaseEmitter(const std::string& loopVar, BlockStmt& body) {
    Emitter em(ctx_, domain_, domainIndex(var(loopVar)), body, rowEm_.get());
    em.delegate = [this](const Value* v) { return delegateToRow(v); };
    return em;
  }

  // A per-row Compute statement in the row body.
  Expr rowCompute(const Node& n, DType t, Expr e) {
    std::string name = numbered("v", ctx_.computeCounter++);
    Stmt s = ComputeStmt::make(name, t, Cast::make(t, std::move(e)));
    s->provenance = {n.id()};
    row_->stmts.push_back(s);
    return Var::make(name, t);
  }

  // Every reduction of the group must cover the same elements per row.
  void checkSameRows(const Node& n) const {
    if (n.input(0)->shape() != domain_)
      ctx_.fail(n, "input shape " + shapeToString(n.input(0)->shape()) + " differs from the row domain " +
                       shapeToString(domain_));
    std::vector<bool> mine(domain_.size(), false);
    for (int64_t a : reducedAxesOf(ctx_, n)) mine[size_t(a)] = true;
    if (mine != reduced_) ctx_.fail(n, "reduces other axes than the group's first reduction");
  }

  void lowerNode(const Node& n) {
    const std::string& op = n.op();
    if (!isReductionNode(n)) {
      if (isPointwiseOp(op)) return;  // computed where it is needed
      ctx_.fail(n, "not supported in a reduction kernel");
    }
    checkSameRows(n);
    size_t lowered = op == "LayerNormalization" || op == "BatchNormalization" ? 3 : 1;
    for (size_t i = lowered; i < n.numOutputs(); ++i)
      if (n.output(i) && (!n.output(i)->uses().empty() || n.output(i)->isGraphOutput()))
        ctx_.fail(n, "output " + std::to_string(i) + " is used; it is not lowered");
    if (opTraits(op).reduce != ReduceKind::None) return lowerReduce(n);  // pools never get here
    if (op == "Softmax" || op == "LogSoftmax") return lowerSoftmax(n);
    if (op == "LayerNormalization") return lowerLayerNorm(n);
    lowerBatchNormTraining(n);
  }

  void lowerReduce(const Node& n) {
    const Value* x = n.input(0);
    const std::string& op = n.op();
    ReduceKind kind = opTraits(op).reduce;
    ReduceOp rop = kind == ReduceKind::Max ? ReduceOp::Max : kind == ReduceKind::Min ? ReduceOp::Min : ReduceOp::Sum;
    Expr acc = reducePhase(rop, x->dtype(), [&](Emitter& em) { return em.value(x); }, n);
    if (kind == ReduceKind::Mean) acc = Binary::make(BinaryOp::Div, acc, FloatImm::make(double(K_), acc->dtype));
    const Value* y = n.output(0);
    setRowValue(y, rowCompute(n, y->dtype(), acc));
  }

  void lowerSoftmax(const Node& n) {
    const Value* x = n.input(0);
    Expr m = reducePhase(ReduceOp::Max, x->dtype(), [&](Emitter& em) { return em.value(x); }, n);
    auto shifted = [x, m](Emitter& em) {
      Expr v = Cast::make(m->dtype, em.value(x));
      return Binary::make(BinaryOp::Sub, v, m);
    };
    Expr s = reducePhase(ReduceOp::Sum, x->dtype(), [&](Emitter& em) { return Unary::make(UnaryOp::Exp, shifted(em)); }, n);
    bool log = n.op() == "LogSoftmax";
    Expr scale = rowCompute(n, s->dtype, log ? Unary::make(UnaryOp::Log, s) : Unary::make(UnaryOp::Recip, s));
    ctx_.special[n.output(0)] = [=](Emitter& em) {
      return log ? Binary::make(BinaryOp::Sub, shifted(em), scale)
                 : Binary::make(BinaryOp::Mul, Unary::make(UnaryOp::Exp, shifted(em)), scale);
    };
  }

  // Mean and variance of the row in two passes (the variance of the centered values, for accuracy).
  struct Moments {
    std::function<Expr(Emitter&)> load, centered;
    Expr mean, var;
  };
  Moments moments(const Node& n) {
    const Value* x = n.input(0);
    DType at = accType(x->dtype());
    Moments m;
    m.load = [x, at](Emitter& em) { return Cast::make(at, em.value(x)); };
    Expr sum = reducePhase(ReduceOp::Sum, x->dtype(), m.load, n);
    Expr mean = m.mean = rowCompute(n, at, Binary::make(BinaryOp::Div, sum, FloatImm::make(double(K_), at)));
    auto load = m.load;
    m.centered = [load, mean](Emitter& em) { return Binary::make(BinaryOp::Sub, load(em), mean); };
    auto centered = m.centered;
    Expr sq = reducePhase(ReduceOp::Sum, x->dtype(), [&](Emitter& em) {
      Expr d = centered(em);
      return Binary::make(BinaryOp::Mul, d, d);
    }, n);
    m.var = Binary::make(BinaryOp::Div, sq, FloatImm::make(double(K_), at));
    return m;
  }

  // Outputs: Y, and Mean and InvStdDev (per row, kept axes) when used.
  void lowerLayerNorm(const Node& n) {
    DType at = accType(n.input(0)->dtype());
    Moments m = moments(n);
    double eps = n.attrFloat("epsilon", 1e-5);
    Expr rstd = rowCompute(n, at, Unary::make(UnaryOp::Rsqrt, Binary::make(BinaryOp::Add, m.var, FloatImm::make(eps, at))));
    if (n.numOutputs() > 1 && n.output(1)) rowEm_->known[n.output(1)] = rowCompute(n, n.output(1)->dtype(), m.mean);
    if (n.numOutputs() > 2 && n.output(2)) rowEm_->known[n.output(2)] = rowCompute(n, n.output(2)->dtype(), rstd);
    const Value* scale = n.input(1);
    const Value* bias = n.numInputs() > 2 ? n.input(2) : nullptr;
    auto centered = m.centered;
    ctx_.special[n.output(0)] = [=](Emitter& em) {
      Expr y = Binary::make(BinaryOp::Mul, centered(em), rstd);
      y = Binary::make(BinaryOp::Mul, y, Cast::make(at, em.value(scale)));
      if (bias) y = Binary::make(BinaryOp::Add, y, Cast::make(at, em.value(bias)));
      return y;
    };
  }

  // training_mode = 1: Y from the batch statistics per channel; running mean and variance blend the given
  // ones with the batch's (input * momentum + batch * (1 - momentum)).
  void lowerBatchNormTraining(const Node& n) {
    DType at = accType(n.input(0)->dtype());
    Moments m = moments(n);
    double eps = n.attrFloat("epsilon", 1e-5), momentum = n.attrFloat("momentum", 0.9);
    Expr rstd = rowCompute(n, at, Unary::make(UnaryOp::Rsqrt, Binary::make(BinaryOp::Add, m.var, FloatImm::make(eps, at))));
    // Per-channel inputs index the channel axis (the only kept one), not numpy-broadcast.
    auto channel = [&](size_t input) {
      const Value* v = n.input(input);
      if (ctx_.produced(v)) ctx_.fail(n, "per-channel inputs must come from outside the group");
      return Cast::make(at, Load::make(ctx_.inputBuffer.at(v), v->dtype(), {var(outer_.at(0))}));
    };
    auto blend = [&](size_t input, const Expr& batch) {
      return Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, channel(input), FloatImm::make(momentum, at)),
                          Binary::make(BinaryOp::Mul, batch, FloatImm::make(1 - momentum, at)));
    };
    for (size_t i = 1; i < 3 && i < n.numOutputs(); ++i)
      if (const Value* out = n.output(i)) {
        setRowValue(out, rowCompute(n, out->dtype(), blend(i + 2, i == 1 ? m.mean : m.var)));
      }
    Expr scale = rowCompute(n, at, Binary::make(BinaryOp::Mul, channel(1), rstd));
    Expr bias = channel(2);
    auto centered = m.centered;
    ctx_.special[n.output(0)] = [=](Emitter& em) {
      return Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, centered(em), scale), bias);
    };
  }

  void storeRowOutputs() {
    std::vector<const Value*> rowWide;
    for (const Value* v : ctx_.outputs) {
      if (!perRow(v)) {
        rowWide.push_back(v);
        continue;
      }
      // A full-rank output is stored at the row's point; one of the kept axes' shape is that value over them.
      bool full = v->shape().size() == domain_.size();
      if (!full && v->shape() != outerShape_)
        ctx_.fail(*v->producer(), "output '" + v->name() + "' has shape " + shapeToString(v->shape()) +
                                      ", neither the domain's rank nor the kept axes " + shapeToString(outerShape_));
      Emitter& em = full ? *rowEm_ : *keptEm_;
      Stmt s = StoreStmt::make(ctx_.outputBuffer.at(v), em.idx(), em.value(v));
      s->provenance = {v->producer()->id()};
      row_->stmts.push_back(s);
    }
    if (rowWide.empty()) return;
    auto body = BlockStmt::make();
    Emitter em = phaseEmitter("j", *body);
    std::set<const Value*> skip;
    for (const Value* v : ctx_.outputs)
      if (perRow(v)) skip.insert(v);
    storeOutputs(em, skip);
    row_->stmts.push_back(loopNest({"j"}, {K_}, body));
  }

  LowerCtx& ctx_;
  Shape domain_;
  std::vector<bool> reduced_;
  Shape reducedExtents_;
  int64_t K_ = 1;
  bool trailingOuter_ = true;  // the kept axes are the domain's trailing axes
  std::vector<std::string> outer_;
  std::shared_ptr<BlockStmt> row_;
  Shape outerShape_;                // the kept axes' extents
  std::unique_ptr<Emitter> keptEm_;  // values over the kept axes (keptSpace)
  std::unique_ptr<Emitter> rowEm_;
  std::set<const Value*> squeezed_;
  int phases_ = 0;
};

}  // namespace

bool isReductionNode(const Node& n) {
  if (n.op() == "BatchNormalization") return n.attrInt("training_mode", 0) != 0;
  const OpTraits& t = opTraits(n.op());
  return t.pool == PoolKind::None && hasReductionKernel(t);
}

void lowerRowReduction(LowerCtx& ctx) { RowLowering(ctx).run(); }

}  // namespace tessera::kernel
