// Pointwise groups (one nest over the output shape) and row reductions (an outer nest over rows; per row,
// one reduction loop per reduction of the group and a final loop for row-wide outputs).
#include <cmath>
#include <memory>

#include "kernel/lower_context.h"

namespace tessera::kernel {

void lowerPointwise(LowerCtx& ctx) {
  const Shape& domain = ctx.outputs.empty() ? ctx.nodes.back()->output(0)->shape() : ctx.outputs.front()->shape();
  std::vector<std::string> loopVars = names("i", domain.size());
  auto body = BlockStmt::make();
  Emitter em(ctx, domain, vars(loopVars), *body);
  storeOutputs(em);
  ctx.k.body = BlockStmt::make({loopNest(loopVars, domain, body)});
}

namespace {

class RowLowering {
 public:
  explicit RowLowering(LowerCtx& ctx) : ctx_(ctx) {}

  void run() {
    const Node& first = *firstReduction();
    domain_ = first.input(0)->shape();
    if (domain_.empty()) ctx_.fail(first, "cannot reduce a scalar");
    K_ = domain_.back();
    outer_ = names("i", domain_.size() - 1);
    Shape rowDomain = domain_;
    rowDomain.back() = 1;
    std::vector<Expr> rowIdx = vars(outer_);
    rowIdx.push_back(intImm(0));
    row_ = BlockStmt::make();
    rowEm_ = std::make_unique<Emitter>(ctx_, rowDomain, rowIdx, *row_);
    for (const Node* n : ctx_.nodes) lowerNode(*n);
    storeRowOutputs();
    Shape outerShape(domain_.begin(), domain_.end() - 1);
    ctx_.k.body = BlockStmt::make({outer_.empty() ? Stmt(row_) : loopNest(outer_, outerShape, row_)});
  }

 private:
  const Node* firstReduction() const {
    for (const Node* n : ctx_.nodes)
      if (!isPointwiseOp(n->op())) return n;
    return ctx_.nodes.front();
  }

  // A value computed once per row (a reduction result, or a pointwise value with extent 1 on the last axis).
  // Pointwise values are per row when all their inputs are.
  bool perRow(const Value* v) const {
    if (rowEm_->known.count(v)) return true;
    if (ctx_.special.count(v) || K_ == 1) return false;
    if (ctx_.produced(v) && isPointwiseOp(v->producer()->op())) {
      for (const Value* in : v->producer()->inputs())
        if (in && !perRow(in)) return false;
      return true;
    }
    return v->shape().empty() || v->shape().back() == 1;
  }

  // A per-row value used inside a loop over the row: numpy broadcasting aligns a value without the
  // reduced axis (keepdims = 0) with the last axis, not with the rows, so it cannot be used there.
  bool delegateToRow(const Value* v) const {
    if (!perRow(v)) return false;
    const Shape& s = v->shape();
    if (!s.empty() && s.size() < domain_.size() && numElements(s) > 1)
      ctx_.fail(*v->producer(), "value '" + v->name() + "' (reduced without keepdims) is broadcast along the row");
    return true;
  }

  // One reduction loop over the last axis; returns the accumulator's value after it.
  Expr reducePhase(ReduceOp op, DType t, const std::function<Expr(Emitter&)>& operand, const Node& n) {
    double init = op == ReduceOp::Sum ? 0.0 : op == ReduceOp::Max ? -INFINITY : INFINITY;
    DType at = accType(t);
    std::string acc = ctx_.newAccumulator(*row_, at, FloatImm::make(init, at), n.id());
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
    std::vector<Expr> idx = vars(outer_);
    idx.push_back(var(loopVar));
    Emitter em(ctx_, domain_, idx, body, rowEm_.get());
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

  void checkLastAxis(const Node& n, int64_t axis) const {
    int64_t rank = int64_t(n.input(0)->shape().size());
    if (axis < 0) axis += rank;
    if (axis != rank - 1) ctx_.fail(n, "only reductions over the last axis are lowered (axis " + std::to_string(axis) + ")");
    if (n.input(0)->shape() != domain_)
      ctx_.fail(n, "input shape " + shapeToString(n.input(0)->shape()) + " differs from the row domain " +
                       shapeToString(domain_));
  }

  void lowerNode(const Node& n) {
    const std::string& op = n.op();
    if (isPointwiseOp(op)) return;  // computed where it is needed
    for (size_t i = 1; i < n.numOutputs(); ++i)
      if (n.output(i) && (!n.output(i)->uses().empty() || n.output(i)->isGraphOutput()))
        ctx_.fail(n, "output " + std::to_string(i) + " is used; only the first output is lowered");
    if (op.rfind("Reduce", 0) == 0) return lowerReduce(n);
    if (op == "Softmax" || op == "LogSoftmax") return lowerSoftmax(n);
    if (op == "LayerNormalization") return lowerLayerNorm(n);
    ctx_.fail(n, "not supported in a reduction kernel");
  }

  void lowerReduce(const Node& n) {
    auto axes = n.input(1) ? constantInts(n.input(1)) : std::optional<std::vector<int64_t>>();
    if (n.input(1) && !axes) ctx_.fail(n, "input 1 (axes) must be a constant");
    if (!axes) axes = n.hasAttr("axes") ? n.attrInts("axes") : std::vector<int64_t>{int64_t(domain_.size()) - 1};
    if (axes->size() != 1) ctx_.fail(n, "only reductions over the last axis are lowered");
    checkLastAxis(n, axes->front());
    const Value* x = n.input(0);
    ReduceOp rop = n.op() == "ReduceMax" ? ReduceOp::Max : n.op() == "ReduceMin" ? ReduceOp::Min : ReduceOp::Sum;
    if (rop == ReduceOp::Sum && n.op() != "ReduceSum" && n.op() != "ReduceMean")
      ctx_.fail(n, "not supported in a reduction kernel");
    Expr acc = reducePhase(rop, x->dtype(), [&](Emitter& em) { return em.value(x); }, n);
    if (n.op() == "ReduceMean") acc = Binary::make(BinaryOp::Div, acc, FloatImm::make(double(K_), acc->dtype));
    rowEm_->known[n.output(0)] = rowCompute(n, n.output(0)->dtype(), acc);
  }

  void lowerSoftmax(const Node& n) {
    checkLastAxis(n, n.attrInt("axis", -1));
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

  void lowerLayerNorm(const Node& n) {
    checkLastAxis(n, n.attrInt("axis", -1));
    const Value* x = n.input(0);
    DType at = accType(x->dtype());
    auto load = [x, at](Emitter& em) { return Cast::make(at, em.value(x)); };
    Expr sum = reducePhase(ReduceOp::Sum, x->dtype(), load, n);
    Expr mean = rowCompute(n, at, Binary::make(BinaryOp::Div, sum, FloatImm::make(double(K_), at)));
    auto centered = [load, mean](Emitter& em) { return Binary::make(BinaryOp::Sub, load(em), mean); };
    Expr sq = reducePhase(ReduceOp::Sum, x->dtype(), [&](Emitter& em) {
      Expr d = centered(em);
      return Binary::make(BinaryOp::Mul, d, d);
    }, n);
    double eps = n.attrFloat("epsilon", 1e-5);
    Expr var = Binary::make(BinaryOp::Div, sq, FloatImm::make(double(K_), at));
    Expr rstd = rowCompute(n, at, Unary::make(UnaryOp::Rsqrt, Binary::make(BinaryOp::Add, var, FloatImm::make(eps, at))));
    const Value* scale = n.input(1);
    const Value* bias = n.input(2);
    ctx_.special[n.output(0)] = [=](Emitter& em) {
      Expr y = Binary::make(BinaryOp::Mul, centered(em), rstd);
      y = Binary::make(BinaryOp::Mul, y, Cast::make(at, em.value(scale)));
      if (bias) y = Binary::make(BinaryOp::Add, y, Cast::make(at, em.value(bias)));
      return y;
    };
  }

  void storeRowOutputs() {
    std::vector<const Value*> rowWide;
    for (const Value* v : ctx_.outputs) {
      if (!perRow(v)) {
        rowWide.push_back(v);
        continue;
      }
      std::vector<Expr> idx = vars(outer_);
      if (v->shape().size() == domain_.size()) idx.push_back(intImm(0));
      else if (v->shape().size() != outer_.size())
        ctx_.fail(*v->producer(), "output '" + v->name() + "' has shape " + shapeToString(v->shape()));
      Stmt s = StoreStmt::make(ctx_.outputBuffer.at(v), idx, rowEm_->value(v));
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
  int64_t K_ = 1;
  std::vector<std::string> outer_;
  std::shared_ptr<BlockStmt> row_;
  std::unique_ptr<Emitter> rowEm_;
  int phases_ = 0;
};

}  // namespace

void lowerRowReduction(LowerCtx& ctx) { RowLowering(ctx).run(); }

}  // namespace tessera::kernel
