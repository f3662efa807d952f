// Attention: y = softmax(f(q · kᵀ)) · v in one nest, the scores never stored. For each query row the keys are
// visited once with the softmax online (flash attention): a running maximum m, a running sum l of exp(s - m) and
// the row of outputs o, each rescaled by exp(m_old - m_new) when the maximum grows; y = o / l at the end.
// f is the pointwise chain between the two (scale, mask); kᵀ may be a Transpose of a group input, folded into
// the loads. The group's shape is fusion's attention pattern (docs/fusion.md); what else reaches here is refused
// naming the node.
#include <cmath>

#include "kernel/lower/lower_context.h"
#include "ops/attention_form.h"

namespace tessera::kernel {
namespace {

struct Attention {
  const Node* transpose = nullptr;  // kᵀ = Transpose(k), folded into the key loads
  const Node* scores = nullptr;     // MatMul(q, kᵀ)
  const Node* softmax = nullptr;    // the softmax's last node (Softmax, or the Div of its expansion)
  ops::SoftmaxForm form;            // over the last axis of f(scores)
  const Node* context = nullptr;    // MatMul(softmax (or its Cast), v)
};

// The probabilities the context MatMul reads: the softmax's output, or a Cast of it.
const Value* probabilitySource(const Attention& a) {
  const Value* p = a.context->input(0);
  const Node* n = p ? p->producer() : nullptr;
  return n && n->op() == "Cast" ? n->input(0) : p;
}

void checkShape(LowerCtx& ctx, const Attention& a) {
  const Shape& s = a.scores->output(0)->shape();
  const Value* x = a.form.input;
  if (x->shape() != s) ctx.fail(*a.softmax, "reads " + shapeToString(x->shape()) + ", not the scores' " + shapeToString(s));
  if (probabilitySource(a) != a.form.output)
    ctx.fail(*a.context, "input 0 is not the softmax (or a Cast of it): the pattern of an attention kernel");
  for (size_t i = 0; i < 2; ++i)
    if (a.scores->input(i)->shape().size() < 2 || a.context->input(i)->shape().size() < 2)
      ctx.fail(i ? *a.context : *a.scores, "attention needs operands of rank 2 or more");
  if (ctx.produced(a.scores->input(0)) || ctx.produced(a.context->input(1)))
    ctx.fail(*a.scores, "q and v must come from outside the attention kernel");
  const Value* kt = a.scores->input(1);
  if (ctx.produced(kt) && kt->producer() != a.transpose)
    ctx.fail(*a.scores, "input 1 is computed inside the group by '" + kt->producer()->id() + "'; only a Transpose folds");
  if (a.transpose && (ctx.produced(a.transpose->input(0)) || !ops::transposesKeyRows(*a.transpose)))
    ctx.fail(*a.transpose, "only a Transpose of a group input giving kᵀ from its rows (the head its last axis) folds into the key loads");
}

Attention findAttention(LowerCtx& ctx) {
  Attention a;
  for (const Node* n : ctx.nodes) {
    if (auto form = ops::lastAxisSoftmax(*n)) {
      a.softmax = n;
      a.form = *form;
    } else if (n->op() == "Transpose") {
      a.transpose = n;
    } else if (n->op() == "MatMul") {
      (a.scores ? a.context : a.scores) = n;  // topological order: scores first
    }
  }
  if (!a.softmax || !a.context)
    ctx.fail(*ctx.nodes.front(), "an attention kernel needs two MatMuls around a softmax over the last axis");
  checkShape(ctx, a);
  return a;
}

Expr f(DType t, double v) { return FloatImm::make(v, t); }

std::shared_ptr<ForStmt> loop(const std::string& v, int64_t extent, Stmt body, bool reduction = false) {
  return std::static_pointer_cast<ForStmt>(loopNest({v}, {extent}, std::move(body), reduction));
}

Stmt compute(BlockStmt& b, const std::string& name, DType t, Expr e, const std::string& prov) {
  Stmt s = ComputeStmt::make(name, t, std::move(e));
  s->provenance = {prov};
  b.stmts.push_back(s);
  return s;
}

Stmt store(const std::string& buf, std::vector<Expr> idx, Expr e, const std::string& prov) {
  Stmt s = StoreStmt::make(buf, std::move(idx), std::move(e));
  s->provenance = {prov};
  return s;
}

class AttentionLowering {
 public:
  AttentionLowering(LowerCtx& ctx, const Attention& a) : ctx_(ctx), a_(a) {
    const Shape& s = a.scores->output(0)->shape();
    batch_ = Shape(s.begin(), s.end() - 2);
    rows_ = s[s.size() - 2];
    keys_ = s.back();
    depth_ = a.scores->input(0)->shape().back();
    columns_ = a.context->output(0)->shape().back();
    at_ = accType(a.context->output(0)->dtype());
    batchVars_ = names("b", batch_.size());
  }

  void lower() {
    auto row = BlockStmt::make();
    std::string prov = a_.softmax->id();
    m_ = ctx_.newAccumulator(*row, at_, FloatImm::make(-INFINITY, at_), prov);
    l_ = ctx_.newAccumulator(*row, at_, f(at_, 0), prov);
    o_ = numbered("acc", ctx_.accCounter++);
    ctx_.k.buffers.push_back({o_, at_, {columns_}, MemScope::Register, BufferRole::Temp, "", "", true, {}});
    Stmt alloc = AllocateStmt::make(o_);
    alloc->provenance = {a_.context->id()};
    row->stmts.push_back(alloc);
    row->stmts.push_back(loop("d_init", columns_, store(o_, {var("d_init")}, f(at_, 0), a_.context->id())));
    row->stmts.push_back(keyLoop());
    row->stmts.push_back(outputLoop());
    std::vector<std::string> outer = batchVars_;
    outer.push_back("i");
    Shape extents = batch_;
    extents.push_back(rows_);
    ctx_.k.body = BlockStmt::make({loopNest(outer, extents, row)});
  }

 private:
  // The domain and index of one query row's elements along a last axis of `extent`: [batch..., i, last].
  Shape rowDomain(int64_t extent) const {
    Shape domain = batch_;
    domain.push_back(rows_);
    domain.push_back(extent);
    return domain;
  }
  std::vector<Expr> rowIndex(const std::string& last) const {
    std::vector<Expr> idx = vars(batchVars_);
    idx.push_back(var("i"));
    idx.push_back(var(last));
    return idx;
  }
  std::vector<Expr> at(const Value* v, Expr r, Expr c) const {
    const Shape& vs = v->shape();
    std::vector<Expr> idx = broadcastIndex(Shape(vs.begin(), vs.end() - 2), batch_, vars(batchVars_));
    idx.push_back(std::move(r));
    idx.push_back(std::move(c));
    return idx;
  }
  Expr load(const Value* v, std::vector<Expr> idx) const {
    return Cast::make(at_, Load::make(ctx_.inputBuffer.at(v), v->dtype(), std::move(idx)));
  }
  // kᵀ[.., c, j], read from k[.., j, c] when the Transpose is folded.
  Expr key(Expr c, Expr j) const {
    const Value* kt = a_.scores->input(1);
    if (!a_.transpose) return load(kt, at(kt, std::move(c), std::move(j)));
    return load(a_.transpose->input(0), transposeIndex(*a_.transpose, a_.transpose->input(0)->shape(), at(kt, c, j)));
  }

  // s = q[i, :] · kᵀ[:, j]; x = f(s) as the graph computes it, in the accumulation type.
  Expr score(BlockStmt& b) {
    std::string s = ctx_.newAccumulator(b, at_, f(at_, 0), a_.scores->id());
    Stmt red = ReduceStmt::make(ReduceOp::Sum, s, {intImm(0)},
                                mul(load(a_.scores->input(0), at(a_.scores->input(0), var("i"), var("c"))), key(var("c"), var("j"))));
    red->provenance = {a_.scores->id()};
    b.stmts.push_back(loop("c", depth_, red, true));
    ctx_.special[a_.scores->output(0)] = [s, t = at_](Emitter&) { return Load::make(s, t, {intImm(0)}); };
    Emitter em(ctx_, rowDomain(keys_), rowIndex("j"), b);
    return Cast::make(at_, em.value(a_.form.input));
  }

  // One key: the running maximum, the rescale of what was summed under the old one, and this key's weight.
  // While every score so far is -inf (a masked prefix) nothing is summed: alpha 1, weight 0, not NaN.
  Stmt keyLoop() {
    auto b = BlockStmt::make();
    std::string prov = a_.softmax->id();
    Expr x = score(*b);
    Expr m = Load::make(m_, at_, {intImm(0)}), l = Load::make(l_, at_, {intImm(0)});
    compute(*b, "m_new", at_, Binary::make(BinaryOp::Max, m, x), prov);
    Expr mNew = Var::make("m_new", at_);
    Expr none = Binary::make(BinaryOp::Eq, mNew, f(at_, -INFINITY));
    compute(*b, "alpha", at_, Select::make(none, f(at_, 1), Unary::make(UnaryOp::Exp, sub(m, mNew))), prov);
    compute(*b, "p", at_, Select::make(none, f(at_, 0), Unary::make(UnaryOp::Exp, sub(x, mNew))), prov);
    Expr alpha = Var::make("alpha", at_), p = Var::make("p", at_);
    b->stmts.push_back(store(l_, {intImm(0)}, add(mul(l, alpha), p), prov));
    b->stmts.push_back(store(m_, {intImm(0)}, mNew, prov));
    Expr o = Load::make(o_, at_, {var("d")});
    Expr v = load(a_.context->input(1), at(a_.context->input(1), var("j"), var("d")));
    b->stmts.push_back(loop("d", columns_, store(o_, {var("d")}, add(mul(o, alpha), mul(p, v)), a_.context->id())));
    return loop("j", keys_, b, true);
  }

  // y[i, d] = o[d] / l, then the group's epilogue and stores.
  Stmt outputLoop() {
    auto b = BlockStmt::make();
    Expr y = Binary::make(BinaryOp::Div, Load::make(o_, at_, {var("d_out")}), Load::make(l_, at_, {intImm(0)}));
    ctx_.special[a_.context->output(0)] = [y](Emitter&) { return y; };
    Emitter em(ctx_, rowDomain(columns_), rowIndex("d_out"), *b);
    storeOutputs(em);
    return loop("d_out", columns_, b);
  }

  LowerCtx& ctx_;
  const Attention& a_;
  Shape batch_;
  int64_t rows_ = 0, keys_ = 0, depth_ = 0, columns_ = 0;
  DType at_ = DType::F32;
  std::vector<std::string> batchVars_;
  std::string m_, l_, o_;
};

}  // namespace

bool isAttentionGroup(const std::vector<const Node*>& nodes) {
  int matmuls = 0, softmaxes = 0;
  for (const Node* n : nodes) {
    matmuls += n->op() == "MatMul";
    softmaxes += ops::lastAxisSoftmax(*n).has_value();
  }
  return matmuls == 2 && softmaxes == 1;
}

void lowerAttention(LowerCtx& ctx) {
  Attention a = findAttention(ctx);
  AttentionLowering(ctx, a).lower();
}

}  // namespace tessera::kernel
