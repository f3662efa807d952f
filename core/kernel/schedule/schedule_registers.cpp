// keep_in_registers: the passes of a loop body that read a buffer in the same way (the same loops, bindings,
// guards and indices) read it once. The first pass's reads fill a register array indexed by the pass's loop
// iterations, and every pass reads that array instead. A dimension indexed by a thread-bound loop takes one
// value per thread on the GPU (codegen/thread_registers.cpp), so each thread keeps just the elements it reads:
// a row that fits in the registers of its block's threads is read from memory once.
#include <algorithm>
#include <type_traits>

#include "kernel/printer.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

constexpr int64_t kRegistersPerThread = 256;

// A pass: the perfect nest of loops at one statement of the body, with the guards met on the way down.
struct Pass {
  std::vector<LoopHeader> headers;
  std::vector<Expr> guards;
  std::vector<std::vector<Expr>> reads;  // indices of every load of the buffer in the innermost body
  Stmt inner;
};

// The nest at `s` down to the first body that is not a loop (through single-statement blocks and guards).
std::optional<Pass> passAt(const Stmt& s, const std::string& buffer) {
  Pass p;
  Stmt cur = s;
  for (;;) {
    cur = unwrapBlocks(cur);
    if (cur->kind == StmtKind::IfThen && !p.headers.empty()) {
      p.guards.push_back(static_cast<IfThenStmt&>(*cur).cond);
      cur = static_cast<IfThenStmt&>(*cur).body;
      continue;
    }
    if (cur->kind != StmtKind::For) break;
    p.headers.push_back(static_cast<ForStmt&>(*cur).h);
    cur = static_cast<ForStmt&>(*cur).body;
  }
  if (p.headers.empty() || containsLoop(cur)) return std::nullopt;
  p.inner = cur;
  p.reads = loadsOf(cur, buffer);
  return p;
}

// True when a load of `buffer` sits under a select's arm (C evaluates it only sometimes: a fill that loads it
// always could read outside the buffer).
bool readUnderSelect(const Expr& e, const std::string& buffer, bool underArm = false) {
  if (e->kind == ExprKind::Load) return underArm && static_cast<const Load&>(*e).buffer == buffer;
  bool found = false;
  visitExpr(*e, [&](const auto& n) {
    using N = std::decay_t<decltype(n)>;
    if constexpr (std::is_same_v<N, Select>) {
      found = readUnderSelect(n.cond, buffer, underArm) || readUnderSelect(n.t, buffer, true) || readUnderSelect(n.f, buffer, true);
    } else if constexpr (std::is_same_v<N, Unary> || std::is_same_v<N, Cast>) {
      found = readUnderSelect(n.a, buffer, underArm);
    } else if constexpr (std::is_same_v<N, Binary>) {
      found = readUnderSelect(n.a, buffer, underArm) || readUnderSelect(n.b, buffer, underArm);
    } else if constexpr (std::is_same_v<N, CheckedIndex>) {  // the position is read only on an error
      found = readUnderSelect(n.value, buffer, underArm) || readUnderSelect(n.position, buffer, true);
    }
  });
  return found;
}

bool anyReadUnderSelect(const Stmt& s, const std::string& buffer) {
  bool found = false;
  walk(s, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      found |= readUnderSelect(e, buffer);
      return e;
    });
  });
  return found;
}

std::string printed(const std::vector<Expr>& es, const std::map<std::string, Expr>& rename) {
  std::string out;
  for (const Expr& e : es) out += printExpr(substitute(e, rename)) + ";";
  return out;
}

// Why pass `p` does not read the buffer as `first` does ("" when it does); `rename` maps p's loops to first's.
std::string mismatch(const Pass& first, const Pass& p, std::map<std::string, Expr>& rename) {
  if (p.headers.size() != first.headers.size()) return "has " + std::to_string(p.headers.size()) + " loops, not " + std::to_string(first.headers.size());
  for (size_t i = 0; i < p.headers.size(); ++i) {
    const LoopHeader &a = first.headers[i], &b = p.headers[i];
    if (a.extent != b.extent || a.loopKind != b.loopKind || a.tag != b.tag)
      return "loop '" + b.var + "' differs from '" + a.var + "' in extent, kind or binding";
    rename[b.var] = var(a.var);
  }
  if (printed(p.guards, rename) != printed(first.guards, {})) return "is guarded differently";
  for (const auto& r : p.reads)
    if (printed(r, rename) != printed(first.reads[0], {})) return "reads other elements";
  return "";
}

// Steps 3 and 4: the statements of the loop's body that read the buffer (the passes), each a loop nest reading it
// only in its innermost body and never under a select; `at` gets their positions in the body.
std::vector<Pass> findPasses(Checker& c, const BlockStmt& block, const std::string& buffer, std::vector<size_t>& at) {
  std::vector<Pass> passes;
  for (size_t i = 0; i < block.stmts.size(); ++i) {
    const Stmt& s = block.stmts[i];
    bool writes = false;
    walk(s, [&](StmtNode& n) {
      writes |= (n.kind == StmtKind::Store && static_cast<StoreStmt&>(n).buffer == buffer) ||
                (n.kind == StmtKind::Reduce && static_cast<ReduceStmt&>(n).buffer == buffer);
    });
    c.check(3, !writes, "'" + buffer + "' is written inside the loop");
    size_t reads = loadsOf(s, buffer).size();
    if (reads == 0) continue;
    auto p = passAt(s, buffer);
    c.check(4, p && !p->reads.empty() && reads == p->reads.size(),
            "'" + buffer + "' is read outside the innermost body of a loop nest directly in the loop's body");
    c.check(4, !anyReadUnderSelect(s, buffer), "'" + buffer + "' is read under a select, which a fill would read always");
    at.push_back(i);
    passes.push_back(*p);
  }
  return passes;
}

// Steps 7 and 8: the register array's shape (one dimension per loop of a pass), checking no loop is bound to
// blocks and each thread keeps at most kRegistersPerThread elements.
Shape registerShape(Checker& c, const Pass& first, const std::string& buffer) {
  int64_t perThread = 1;
  Shape shape;
  for (const LoopHeader& h : first.headers) {
    c.check(7, !(h.loopKind == LoopKind::Bound && isBlockTag(h.tag)), "loop '" + h.var + "' of a pass is bound to blocks");
    shape.push_back(h.extent);
    if (!(h.loopKind == LoopKind::Bound && isThreadTag(h.tag))) perThread *= h.extent;
  }
  c.check(8, perThread <= kRegistersPerThread,
          "each thread would keep " + std::to_string(perThread) + " elements of '" + buffer + "' (limit 256)");
  return shape;
}

// The register array's allocation and its fill: the first pass's nest as a copy, over fresh loops (whose names
// are appended to `created`).
std::vector<Stmt> fillRegisters(Kernel& k, const Buffer& cache, const Pass& first, const std::string& buffer,
                                std::vector<std::string>& created) {
  std::vector<LoopHeader> headers = first.headers;
  std::map<std::string, Expr> toFill;
  std::vector<Expr> at0;
  for (size_t d = 0; d < headers.size(); ++d) {
    headers[d].var = freshName(k, cache.name + "_ax" + std::to_string(d));
    headers[d].reduction = false;
    headers[d].pipelineStages = 0;
    toFill[first.headers[d].var] = var(headers[d].var);
    at0.push_back(var(headers[d].var));
    created.push_back(headers[d].var);
  }
  std::vector<Expr> guards;
  for (const Expr& g : first.guards) guards.push_back(substitute(g, toFill));
  std::vector<Expr> src;
  for (const Expr& i : first.reads[0]) src.push_back(substitute(i, toFill));
  std::vector<std::string> provenance;  // the nodes whose reads the copy serves (loops carry none)
  walk(first.inner, [&](StmtNode& n) {
    for (const std::string& id : n.provenance)
      if (std::find(provenance.begin(), provenance.end(), id) == provenance.end()) provenance.push_back(id);
  });
  Stmt copy = StoreStmt::make(cache.name, at0, Load::make(buffer, cache.dtype, src));
  Stmt alloc = AllocateStmt::make(cache.name);
  alloc->provenance = copy->provenance = provenance;
  return {alloc, buildNest(headers, guards, copy)};
}

// Every pass reads the array at its own iteration instead of the buffer.
void readFromRegisters(const std::vector<Pass>& passes, const std::string& buffer, const std::string& cache) {
  for (const Pass& p : passes) {
    std::vector<Expr> idx;
    for (const LoopHeader& h : p.headers) idx.push_back(var(h.var));
    mapAllExprs(p.inner, [&](const Expr& e) -> Expr {
      if (e->kind != ExprKind::Load || static_cast<const Load&>(*e).buffer != buffer) return e;
      return Load::make(cache, e->dtype, idx);
    });
  }
}

}  // namespace

std::vector<std::string> keepInRegisters(Kernel& k, const std::string& loop, const std::string& buffer) {
  Checker c(k, "keep_in_registers", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  const Buffer* buf = k.findBuffer(buffer);
  c.check(2, buf && buf->scope == MemScope::Global, "no global buffer named '" + buffer + "'");
  auto block = std::static_pointer_cast<BlockStmt>(asBlock(unwrapBlocks(site.loop->body)));
  std::vector<size_t> at;
  std::vector<Pass> passes = findPasses(c, *block, buffer, at);
  c.check(5, passes.size() >= 1, "'" + buffer + "' is not read inside the loop");
  const Pass& first = passes[0];
  for (size_t i = 0; i < passes.size(); ++i) {
    std::map<std::string, Expr> rename;
    std::string why = mismatch(first, passes[i], rename);
    c.check(6, why.empty(), "the pass at '" + passes[i].headers[0].var + "' " + why + " than the pass at '" + first.headers[0].var + "'");
  }
  Shape shape = registerShape(c, first, buffer);
  // The register array, indexed by the pass's loop iterations.
  const DType dtype = buf->dtype;  // `buf` does not outlive the push below
  Buffer cache{freshName(k, buffer + "_regs"), dtype, shape, MemScope::Register, BufferRole::Temp, "", buffer, true, {}};
  cache.cacheByIteration = true;
  k.buffers.push_back(cache);
  std::vector<std::string> outputs = {cache.name};
  std::vector<Stmt> fill = fillRegisters(k, cache, first, buffer, outputs);
  readFromRegisters(passes, buffer, cache.name);
  block->stmts.insert(block->stmts.begin() + long(at[0]), fill.begin(), fill.end());
  site.loop->body = block;
  return outputs;
}

}  // namespace tessera::kernel::sched
