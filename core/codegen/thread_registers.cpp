// On the GPU every thread holds its own copy of a register buffer. A dimension that every access indexes by
// the variable of a loop bound to one thread index (threadIdx.y, say) takes one value per thread, so it needs
// no room in that copy: a gemm's accumulator tile [ty, tx, m, n] is m x n registers per thread. A dimension
// indexed by an mma lane loop (16 rows or 8 columns spread over the lanes) keeps the 2 its lane holds. The
// serial meaning (interpreter, CPU) keeps the whole tile.
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

// What a thread keeps of one dimension of a register buffer.
enum class Dim { Whole, Dropped, Lanes };  // all of it; one element (threadIdx.*, warp); 2 elements (mma lanes)

// Per dimension of `b`: dropped (or lane-distributed) when every access indexes it by the variable of a loop
// bound to the same thread tag.
std::vector<Dim> threadDims(const Kernel& k, const Buffer& b, const std::map<std::string, ThreadTag>& bound) {
  std::vector<bool> byThread(b.shape.size(), true);
  std::vector<std::optional<ThreadTag>> tag(b.shape.size());
  bool any = false;
  forEachAccess(k.body, b.name, [&](const std::vector<Expr>& idx) {
    any = true;
    for (size_t d = 0; d < idx.size() && d < byThread.size(); ++d) {
      auto it = idx[d]->kind == ExprKind::Var ? bound.find(static_cast<const Var&>(*idx[d]).name) : bound.end();
      if (it == bound.end() || (tag[d] && *tag[d] != it->second)) byThread[d] = false;
      else tag[d] = it->second;
    }
  });
  std::vector<Dim> out(b.shape.size(), Dim::Whole);
  for (size_t d = 0; d < out.size(); ++d)
    if (any && byThread[d]) out[d] = isMmaTag(*tag[d]) ? Dim::Lanes : Dim::Dropped;
  return out;
}

std::vector<Expr> kept(const std::vector<Expr>& idx, const std::vector<Dim>& dims) {
  std::vector<Expr> out;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (dims[d] == Dim::Whole) out.push_back(idx[d]);
    if (dims[d] == Dim::Lanes) out.push_back(var(mmaLaneIndex(static_cast<const Var&>(*idx[d]).name)));
  }
  if (out.empty()) out.push_back(intImm(0));
  return out;
}

void compact(Kernel& k, Buffer& b, const std::vector<Dim>& dims) {
  Shape shape;
  for (size_t d = 0; d < b.shape.size(); ++d) {
    if (dims[d] == Dim::Whole) shape.push_back(b.shape[d]);
    if (dims[d] == Dim::Lanes) shape.push_back(2);
  }
  b.shape = shape.empty() ? Shape{1} : shape;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind == StmtKind::Store && static_cast<StoreStmt&>(n).buffer == b.name)
      static_cast<StoreStmt&>(n).indices = kept(static_cast<StoreStmt&>(n).indices, dims);
    if (n.kind == StmtKind::Reduce && static_cast<ReduceStmt&>(n).buffer == b.name)
      static_cast<ReduceStmt&>(n).indices = kept(static_cast<ReduceStmt&>(n).indices, dims);
  });
  mapAllExprs(k.body, [&](const Expr& e) -> Expr {
    if (e->kind != ExprKind::Load || static_cast<const Load&>(*e).buffer != b.name) return e;
    return Load::make(b.name, e->dtype, kept(static_cast<const Load&>(*e).indices, dims));
  });
}

}  // namespace

std::string mmaLaneIndex(const std::string& loopVar) { return loopVar + "_r"; }

std::optional<Kernel> perThreadRegisters(const Kernel& k) {
  auto bound = threadBoundVars(k);
  if (bound.empty()) return std::nullopt;
  std::optional<Kernel> out;
  for (const Buffer& b : k.buffers) {
    if (b.scope != MemScope::Register) continue;
    std::vector<Dim> dims = threadDims(k, b, bound);
    if (std::all_of(dims.begin(), dims.end(), [](Dim d) { return d == Dim::Whole; })) continue;
    if (!out) out = k.clone();
    compact(*out, *out->findBuffer(b.name), dims);
  }
  return out;
}

}  // namespace tessera::codegen::detail
