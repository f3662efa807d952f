#include "kernel/lower/lower_context.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ir/error.h"
#include "ops/broadcast.h"

namespace tessera::kernel {

LowerCtx::LowerCtx(const Graph& graph, Kernel& kernel, const KernelSpec& spec) : g(graph), k(kernel) {
  for (const std::string& id : spec.nodeIds) {
    const Node* n = g.findNode(id);
    if (!n) tessera::fail("kernel '" + spec.id + "': node '" + id + "' is not in the graph");
    if (inGroup.count(n)) tessera::fail("kernel '" + spec.id + "': node '" + id + "' is listed twice");
    nodes.push_back(n);
    inGroup.insert(n);
  }
  if (nodes.empty()) tessera::fail("kernel '" + spec.id + "': the group has no nodes");
  for (const Node* n : nodes) {
    for (const Value* v : n->inputs()) {
      if (!v || produced(v) || inputBuffer.count(v)) continue;
      std::string name = numbered("in", inputBuffer.size());
      inputBuffer[v] = name;
      k.buffers.push_back({name, v->dtype(), v->shape(), MemScope::Global, BufferRole::Input, v->name(), "", true, {}});
    }
  }
  for (const Node* n : nodes) {
    for (const Value* v : n->outputs()) {
      bool usedOutside = v->isGraphOutput();
      for (const Use& u : v->uses()) usedOutside |= !inGroup.count(u.node);
      if (!usedOutside) continue;
      std::string name = numbered("out", outputs.size());
      outputs.push_back(v);
      outputBuffer[v] = name;
      k.buffers.push_back({name, v->dtype(), v->shape(), MemScope::Global, BufferRole::Output, v->name(), "", true, {}});
    }
  }
}

void LowerCtx::fail(const Node& n, const std::string& message) const {
  tessera::fail("kernel '" + k.id + "': node '" + n.id() + "' (" + n.op() + "): " + message);
}

std::string LowerCtx::newAccumulator(BlockStmt& block, DType t, Expr init, const std::string& provenance) {
  std::string name = numbered("acc", accCounter++);
  k.buffers.push_back({name, t, {1}, MemScope::Register, BufferRole::Temp, "", "", true, {}});
  Stmt alloc = AllocateStmt::make(name);
  Stmt store = StoreStmt::make(name, {intImm(0)}, Cast::make(t, std::move(init)));
  alloc->provenance = store->provenance = {provenance};
  block.stmts.push_back(alloc);
  block.stmts.push_back(store);
  return name;
}

Expr LowerCtx::checkedIndexAt(const Node& n, size_t input, Expr value, const std::vector<Expr>& at, int64_t axis,
                              int64_t extent) {
  const Value* v = n.input(input);
  // One record per input and data axis: a GatherND's tuple addresses several axes of different extents.
  auto same = [&](const IndexCheck& c) { return c.node == n.id() && c.input == input && c.axis == axis; };
  auto it = std::find_if(k.indexChecks.begin(), k.indexChecks.end(), same);
  if (it == k.indexChecks.end()) {
    k.indexChecks.push_back({n.id(), n.op(), input, v->name(), v->shape(), axis, extent});
    it = k.indexChecks.end() - 1;
  }
  std::vector<int64_t> strides = stridesOf(v->shape());
  Expr position = intImm(0);
  for (size_t d = 0; d < at.size(); ++d) position = add(position, mul(at[d], intImm(strides[d])));
  return CheckedIndex::make(std::move(value), extent, int(it - k.indexChecks.begin()), position);
}

Emitter::Emitter(LowerCtx& ctx, Shape domain, std::vector<Expr> idx, BlockStmt& out, Emitter* parent)
    : ctx_(ctx), domain_(std::move(domain)), idx_(std::move(idx)), out_(out), parent_(parent) {}

Expr Emitter::compute(const Value* v, const Node& producer, Expr e) {
  std::string name = numbered("v", ctx_.computeCounter++);
  Stmt s = ComputeStmt::make(name, v->dtype(), Cast::make(v->dtype(), std::move(e)));
  s->provenance = {producer.id()};
  out_.stmts.push_back(s);
  Expr result = Var::make(name, v->dtype());
  known[v] = result;
  return result;
}

// Range: start + i * delta over the 1-D output.
Expr Emitter::rangeExpr(const Node& p) {
  if (idx_.size() != 1) ctx_.fail(p, "expects a 1-D domain");
  Expr start = value(p.input(0));
  Expr delta = value(p.input(2));
  return Binary::make(BinaryOp::Add, start, Binary::make(BinaryOp::Mul, Cast::make(start->dtype, idx_[0]), delta));
}

// ConstantOfShape: its `value` attribute (one element; 0.0 when absent) everywhere. The shape input is only
// read by type inference, never by the kernel. Integers stay exact (no trip through double).
Expr Emitter::fillExpr(const Node& p, DType type) {
  if (!p.hasAttr("value")) return FloatImm::make(0.0, type);
  const Tensor& t = p.attr("value")->t();
  if (t.numElements() != 1) ctx_.fail(p, "value must have one element");
  if (isFloat(t.dtype())) return FloatImm::make(t.getDouble(0), type);
  return Cast::make(type, intImm(t.toInts()[0]));
}

// BatchNormalization's scale, bias, mean and variance are per channel (axis 1), not numpy-broadcast.
Expr Emitter::channelParam(const Node& p, const Value* v, int64_t axis) {
  if (ctx_.produced(v)) ctx_.fail(p, "per-channel inputs must come from outside the group");
  if (int64_t(idx_.size()) <= axis) ctx_.fail(p, "expects an axis " + std::to_string(axis));
  return Load::make(ctx_.inputBuffer.at(v), v->dtype(), {idx_[size_t(axis)]});
}

// Input i of QuantizeLinear or DequantizeLinear: a scale or zero point of one element is broadcast; one per
// element of `axis` is read at the point's index there; a blocked one (block_size B, x's rank) at the point's
// index with the axis's divided by B: one scale per B consecutive elements along the axis.
Expr Emitter::quantParam(const Node& p, size_t i) {
  const Value* v = p.input(i);
  if (!v || i == 0 || numElements(v->shape()) == 1) return value(v);
  int64_t rank = int64_t(p.input(0)->shape().size());
  if (rank != int64_t(domain_.size())) ctx_.fail(p, "a per-axis scale needs the kernel's domain to be x's shape");
  std::optional<int64_t> axis = normalizeAxis(p.attrInt("axis", 1), rank);
  if (!axis) ctx_.fail(p, "attribute axis " + std::to_string(p.attrInt("axis", 1)) + " is outside x's rank");
  const int64_t block = p.attrInt("block_size", 0);
  if (block <= 0) return channelParam(p, v, *axis);
  if (ctx_.produced(v)) ctx_.fail(p, "blocked scales must come from outside the group");
  if (int64_t(v->shape().size()) != rank) ctx_.fail(p, "a blocked scale needs x's rank");
  std::vector<Expr> at = idx_;
  at[size_t(*axis)] = Binary::make(BinaryOp::Div, idx_[size_t(*axis)], intImm(block));
  return Load::make(ctx_.inputBuffer.at(v), v->dtype(), at);
}

Expr Emitter::value(const Value* v) {
  if (!v) return nullptr;
  if (auto it = known.find(v); it != known.end()) return it->second;
  if (parent_ && delegate && delegate(v)) return known[v] = parent_->value(v);
  if (auto it = ctx_.special.find(v); it != ctx_.special.end()) return compute(v, *v->producer(), it->second(*this));
  if (!ctx_.produced(v)) {
    auto it = ctx_.inputBuffer.find(v);
    if (it == ctx_.inputBuffer.end()) tessera::fail("kernel '" + ctx_.k.id + "': value '" + v->name() + "' has no buffer");
    // The buffer's shape, which a lowering may have made a view of the value's (lowerGemm's merged batch).
    Expr load = Load::make(it->second, v->dtype(), broadcastIndex(ctx_.k.findBuffer(it->second)->shape, domain_, idx_));
    return known[v] = load;
  }
  const Node& p = *v->producer();
  if (v != p.output(0)) {
    for (size_t i = 1; i < p.numOutputs(); ++i)
      if (v == p.output(i))
        if (auto e = pointwiseOutputExpr(p, i)) return compute(v, p, *e);
    ctx_.fail(p, "only the first output can be used inside a kernel");
  }
  if (p.op() == "Range") return compute(v, p, rangeExpr(p));
  if (p.op() == "ConstantOfShape") return compute(v, p, fillExpr(p, v->dtype()));
  std::vector<Expr> ins;
  for (size_t i = 0; i < p.numInputs(); ++i)
    ins.push_back(p.op() == "BatchNormalization" && i > 0                           ? channelParam(p, p.input(i), 1)
                  : p.op() == "QuantizeLinear" || p.op() == "DequantizeLinear" ? quantParam(p, i)
                                                                                 : value(p.input(i)));
  auto e = pointwiseExpr(p, ins, v->dtype());
  if (!e) ctx_.fail(p, "not supported in a " + ctx_.k.kind + " kernel");
  return compute(v, p, *e);
}

std::vector<Expr> broadcastIndex(const Shape& in, const Shape& domain, const std::vector<Expr>& idx) {
  if (in.size() > domain.size())
    tessera::fail("broadcast: shape " + shapeToString(in) + " has more dimensions than " + shapeToString(domain));
  size_t offset = domain.size() - in.size();
  std::vector<Expr> out;
  for (size_t d = 0; d < in.size(); ++d) {
    bool broadcast = in[d] == 1 && domain[d + offset] != 1;
    out.push_back(broadcast ? intImm(0) : idx[d + offset]);
  }
  return out;
}

Stmt loopNest(const std::vector<std::string>& vars, const Shape& extents, Stmt body, bool reduction) {
  for (size_t i = vars.size(); i-- > 0;) {
    LoopHeader h;
    h.var = vars[i];
    h.extent = extents[i];
    h.reduction = reduction;
    body = ForStmt::make(h, BlockStmt::make({body}));
  }
  return body;
}

std::vector<Expr> vars(const std::vector<std::string>& names) {
  std::vector<Expr> out;
  for (const std::string& n : names) out.push_back(var(n));
  return out;
}

std::string numbered(std::string prefix, size_t n) { return prefix.append(std::to_string(n)); }

std::vector<std::string> names(const std::string& prefix, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

DType accType(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

void storeOutputs(Emitter& em, const std::set<const Value*>& skip) {
  LowerCtx& ctx = em.ctx();
  for (const Value* v : ctx.outputs) {
    if (skip.count(v)) continue;
    const Shape& d = em.domain();
    const Shape& shape = ctx.k.findBuffer(ctx.outputBuffer.at(v))->shape;  // the value's, or a view of it
    size_t lead = d.size() > shape.size() ? d.size() - shape.size() : 0;
    bool leadingOnes = lead > 0 && std::all_of(d.begin(), d.begin() + long(lead), [](int64_t e) { return e == 1; }) &&
                       std::equal(shape.begin(), shape.end(), d.begin() + long(lead));
    if (shape != d && !leadingOnes)
      ctx.fail(*v->producer(), "output '" + v->name() + "' has shape " + shapeToString(shape) +
                                   ", not the kernel's domain " + shapeToString(d));
    std::vector<Expr> idx(em.idx().begin() + long(lead), em.idx().end());  // the domain without its leading 1s
    Stmt s = StoreStmt::make(ctx.outputBuffer.at(v), idx, em.value(v));
    s->provenance = {v->producer()->id()};
    em.out().stmts.push_back(s);
  }
}

}  // namespace tessera::kernel
