// Which loops around a reduction make a tensor-core tile (mma_match.h).
#include "codegen/mma_match.h"

#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

const Load* operandLoad(const Expr& e) {
  const ExprNode* n = e.get();
  if (n->kind == ExprKind::Cast) n = static_cast<const Cast&>(*n).a.get();
  return n->kind == ExprKind::Load ? static_cast<const Load*>(n) : nullptr;
}

bool usesAnyVar(const std::vector<Expr>& idx, const std::string& name) {
  for (const Expr& e : idx)
    if (usesVar(e, name)) return true;
  return false;
}

// The statement inside single-statement blocks and guards (an if without else), the guards' conditions
// appended to `guards`.
Stmt unwrapGuards(const Stmt& body, std::vector<Expr>* guards) {
  Stmt s = unwrapBlocks(body);
  while (guards && s->kind == StmtKind::IfThen) {
    guards->push_back(static_cast<const IfThenStmt&>(*s).cond);
    s = unwrapBlocks(static_cast<const IfThenStmt&>(*s).body);
  }
  return s;
}

const ForStmt* innerLoop(const Stmt& body, std::vector<Expr>* guards) {
  Stmt s = unwrapGuards(body, guards);
  return s->kind == StmtKind::For ? static_cast<const ForStmt*>(s.get()) : nullptr;
}

namespace {

// Guards inside a tile (a pixel tile overhanging the output) leave some of its rows or columns out. The mma
// computes all 16 x 8: the rows left out accumulate products of operands read inside their shared tiles
// (whose boxes span the loops' whole extents), into accumulators whose stores the same guards skip. Guards on
// the depth (a K the 16-deep steps do not divide) must not involve the rows or columns: the fragments' elements
// they leave out are zeroed (MmaTile::depthGuards). Either kind needs both operands in shared tiles, which the
// fragments may read at every position.
bool guardsAllowMma(const std::vector<Expr>& guards, const MmaTile& m, const ExprPrinter& ep) {
  if (guards.empty()) return true;
  for (const Expr& g : guards)
    if (usesVar(g, m.depth->h.var) && (usesVar(g, m.row->h.var) || usesVar(g, m.col->h.var))) return false;
  return ep.buffer(m.a->buffer).scope == MemScope::Shared && ep.buffer(m.b->buffer).scope == MemScope::Shared;
}

}  // namespace

std::optional<MmaTile> matchMma(const ForStmt& row, const ExprPrinter& ep, const std::map<std::string, int64_t>& params) {
  std::vector<Expr> guards;
  const ForStmt* col = innerLoop(row.body, &guards);
  if (!col || col->h.loopKind != LoopKind::Bound || col->h.tag != ThreadTag::MmaCol) return std::nullopt;
  const ForStmt* depth = innerLoop(col->body, &guards);
  if (!depth || !depth->h.reduction || depth->h.loopKind == LoopKind::Bound) return std::nullopt;
  Stmt s = unwrapGuards(depth->body, &guards);
  if (s->kind != StmtKind::Reduce) return std::nullopt;
  const auto& red = static_cast<const ReduceStmt&>(*s);
  const Buffer& acc = ep.buffer(red.buffer);
  if (red.op != ReduceOp::Sum || acc.dtype != DType::F32 || acc.scope != MemScope::Register) return std::nullopt;
  if (red.value->kind != ExprKind::Binary || static_cast<const Binary&>(*red.value).op != BinaryOp::Mul) return std::nullopt;
  const auto& product = static_cast<const Binary&>(*red.value);
  const Load* a = operandLoad(product.a);
  const Load* b = operandLoad(product.b);
  if (!a || !b || a->dtype != b->dtype) return std::nullopt;
  // f32 operands go to the tensor cores only when the schedule chose tf32 (a loss of precision, never implied).
  auto tf32 = params.find("tf32");
  bool f32 = a->dtype == DType::F32 && tf32 != params.end() && tf32->second != 0;
  if (!f32 && a->dtype != DType::BF16 && a->dtype != DType::F16) return std::nullopt;
  if (depth->h.extent != (f32 ? 8 : 16)) return std::nullopt;
  // A is indexed by the rows and the depth, B by the depth and the columns: a matrix product.
  if (usesAnyVar(a->indices, col->h.var) || usesAnyVar(b->indices, row.h.var)) return std::nullopt;
  if (usesAnyVar(red.indices, depth->h.var)) return std::nullopt;
  MmaTile tile{&row, col, depth, &red, a, b, f32};
  if (f32) tile.tf32Rounding = static_cast<MmaTile::Tf32Rounding>(tf32->second);  // 1..3: the template's range
  if (!guardsAllowMma(guards, tile, ep)) return std::nullopt;
  for (const Expr& g : guards)
    if (usesVar(g, depth->h.var)) tile.depthGuards.push_back(g);
  return tile;
}


}  // namespace tessera::codegen::detail
