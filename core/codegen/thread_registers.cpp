// On the GPU every thread holds its own copy of a register buffer. A dimension that every access indexes by
// the variable of a loop bound to one thread index (threadIdx.y, say) takes one value per thread, so it needs
// no room in that copy: a gemm's accumulator tile [ty, tx, m, n] is m x n registers per thread. The serial
// meaning (interpreter, CPU) keeps the whole tile.
#include "codegen/thread_registers.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

std::map<std::string, ThreadTag> threadBoundVars(const Kernel& k) {
  std::map<std::string, ThreadTag> out;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::For) return;
    const LoopHeader& h = static_cast<ForStmt&>(n).h;
    if (h.loopKind == LoopKind::Bound && isThreadTag(h.tag)) out[h.var] = h.tag;
  });
  return out;
}

// Calls f with the indices of every access (load, store, reduce) of `buffer`.
void forEachAccess(const Stmt& body, const std::string& buffer, const std::function<void(const std::vector<Expr>&)>& f) {
  walk(body, [&](StmtNode& n) {
    if (n.kind == StmtKind::Store && static_cast<StoreStmt&>(n).buffer == buffer) f(static_cast<StoreStmt&>(n).indices);
    if (n.kind == StmtKind::Reduce && static_cast<ReduceStmt&>(n).buffer == buffer) f(static_cast<ReduceStmt&>(n).indices);
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind == ExprKind::Load && static_cast<const Load&>(x).buffer == buffer) f(static_cast<const Load&>(x).indices);
      });
      return e;
    });
  });
}

// The dimensions of `b` indexed only by variables bound to one thread tag (the same tag at every access).
std::vector<bool> threadDims(const Kernel& k, const Buffer& b, const std::map<std::string, ThreadTag>& bound) {
  std::vector<bool> drop(b.shape.size(), true);
  std::vector<std::optional<ThreadTag>> tag(b.shape.size());
  bool any = false;
  forEachAccess(k.body, b.name, [&](const std::vector<Expr>& idx) {
    any = true;
    for (size_t d = 0; d < idx.size() && d < drop.size(); ++d) {
      auto it = idx[d]->kind == ExprKind::Var ? bound.find(static_cast<const Var&>(*idx[d]).name) : bound.end();
      if (it == bound.end() || (tag[d] && *tag[d] != it->second)) drop[d] = false;
      else tag[d] = it->second;
    }
  });
  if (!any) drop.assign(drop.size(), false);
  return drop;
}

std::vector<Expr> kept(const std::vector<Expr>& idx, const std::vector<bool>& drop) {
  std::vector<Expr> out;
  for (size_t d = 0; d < idx.size(); ++d)
    if (!drop[d]) out.push_back(idx[d]);
  if (out.empty()) out.push_back(intImm(0));
  return out;
}

void compact(Kernel& k, Buffer& b, const std::vector<bool>& drop) {
  Shape shape;
  for (size_t d = 0; d < b.shape.size(); ++d)
    if (!drop[d]) shape.push_back(b.shape[d]);
  b.shape = shape.empty() ? Shape{1} : shape;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind == StmtKind::Store && static_cast<StoreStmt&>(n).buffer == b.name)
      static_cast<StoreStmt&>(n).indices = kept(static_cast<StoreStmt&>(n).indices, drop);
    if (n.kind == StmtKind::Reduce && static_cast<ReduceStmt&>(n).buffer == b.name)
      static_cast<ReduceStmt&>(n).indices = kept(static_cast<ReduceStmt&>(n).indices, drop);
  });
  mapAllExprs(k.body, [&](const Expr& e) -> Expr {
    if (e->kind != ExprKind::Load || static_cast<const Load&>(*e).buffer != b.name) return e;
    return Load::make(b.name, e->dtype, kept(static_cast<const Load&>(*e).indices, drop));
  });
}

}  // namespace

std::optional<Kernel> perThreadRegisters(const Kernel& k) {
  auto bound = threadBoundVars(k);
  if (bound.empty()) return std::nullopt;
  std::optional<Kernel> out;
  for (const Buffer& b : k.buffers) {
    if (b.scope != MemScope::Register) continue;
    std::vector<bool> drop = threadDims(k, b, bound);
    if (std::find(drop.begin(), drop.end(), true) == drop.end()) continue;
    if (!out) out = k.clone();
    compact(*out, *out->findBuffer(b.name), drop);
  }
  return out;
}

}  // namespace tessera::codegen::detail
