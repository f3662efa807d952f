// split_reduction: each row of a row-reduction kernel spread over several blocks. Every pass over the row
// covers one part of it in each block; the part's partial result goes to a global workspace; a grid barrier
// ends the phase; in the next phase every block combines the partials of its row and goes on. A softmax of
// two passes (max and sum, then the outputs) becomes three phases, or two with online_softmax. This is what
// a row too long, or rows too few, for one block per row to fill the GPU needs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

constexpr int64_t kMaxBlocksPerRow = 64;

// A pass over the row: the reduction loop and the accumulator its Reduce statements update.
struct RowPass {
  size_t index = 0;  // in the row body
  std::string accumulator;
  ReduceOp op = ReduceOp::Sum;
};


// The loop over part `b` of the row: extent/blocks iterations at b * extent/blocks.
Stmt chunked(const ForStmt& f, const std::string& b, int64_t blocks, const std::string& row, const std::string& newRow) {
  auto copy = std::static_pointer_cast<ForStmt>(cloneStmt(std::make_shared<ForStmt>(f)));
  int64_t part = f.h.extent / blocks;
  copy->h.extent = part;
  substitute(copy->body, {{f.h.var, add(mul(var(b), intImm(part)), var(f.h.var))}, {row, var(newRow)}});
  return copy;
}

// The nodes a pass reduces for (its loop carries none): what its partials and their combines stand for.
std::vector<std::string> reductionProvenance(const Stmt& pass) {
  std::vector<std::string> out;
  walk(pass, [&](StmtNode& n) {
    if (n.kind == StmtKind::Reduce) out = n.provenance;
  });
  return out;
}

Expr workspace(const Buffer& ws, const std::string& row, const Expr& part, int64_t element) {
  return Load::make(ws.name, ws.dtype, {var(row), part, intImm(element)});
}

// The accumulator of pass `p` from the partials of every block of the row (which phase p wrote).
std::vector<Stmt> combine(const RowPass& p, const Buffer& ws, const std::string& row, int64_t blocks, Names& names,
                          const std::vector<std::string>& provenance) {
  auto reduceLoop = [&](ReduceOp op, int64_t element, const std::function<Expr(const Expr&)>& value) {
    LoopHeader h;
    h.var = names.fresh(ws.name + "_part");
    h.extent = blocks;
    h.reduction = true;
    Stmt red = ReduceStmt::make(op, p.accumulator, {intImm(element)}, value(var(h.var)));
    red->provenance = provenance;
    return Stmt(ForStmt::make(h, BlockStmt::make({red})));
  };
  if (p.op != ReduceOp::MaxSumExp)
    return {reduceLoop(p.op, 0, [&](const Expr& c) { return workspace(ws, row, c, 0); })};
  // Online softmax's pairs: the max of the parts' maxima, then their sums rescaled to it (a part that saw only
  // -inf adds 0).
  DType t = ws.dtype;
  Expr max = Load::make(p.accumulator, t, {intImm(0)});
  return {reduceLoop(ReduceOp::Max, 0, [&](const Expr& c) { return workspace(ws, row, c, 0); }),
          reduceLoop(ReduceOp::Sum, 1, [&](const Expr& c) {
            Expr m = workspace(ws, row, c, 0);
            Expr scaled = Binary::make(BinaryOp::Mul, workspace(ws, row, c, 1),
                                       Unary::make(UnaryOp::Exp, Binary::make(BinaryOp::Sub, m, max)));
            return Select::make(Binary::make(BinaryOp::Eq, m, FloatImm::make(-INFINITY, t)), FloatImm::make(0, t), scaled);
          })};
}

// Steps 5 and 6: the row body is row-level statements and unsplit loops over the whole row (`extent` elements);
// each reduction loop among them is a pass into one register accumulator (or online softmax's pair).
std::vector<RowPass> rowPasses(const Kernel& k, Checker& c, const BlockStmt& body, int64_t& extent) {
  std::vector<RowPass> passes;
  for (size_t i = 0; i < body.stmts.size(); ++i) {
    const Stmt& s = body.stmts[i];
    bool rowLevel = s->kind == StmtKind::Allocate || s->kind == StmtKind::Store || s->kind == StmtKind::Compute;
    if (rowLevel) continue;
    c.check(5, s->kind == StmtKind::For, std::string("its body holds a ") + std::string(stmtKindName(s->kind)) +
                                              " statement (apply split_reduction before caching or synchronizing)");
    auto& f = static_cast<ForStmt&>(*s);
    c.setSubject(f.h.var);
    c.check(5, f.h.loopKind == LoopKind::Serial && !containsLoop(f.body), "is not one serial loop (apply split_reduction before splitting)");
    c.check(5, extent == 0 || f.h.extent == extent, "covers " + std::to_string(f.h.extent) + " elements, not the row's " + std::to_string(extent));
    extent = f.h.extent;
    if (!f.h.reduction) continue;
    RowPass p;
    p.index = i;
    walk(f.body, [&](StmtNode& n) {
      if (n.kind != StmtKind::Reduce) return;
      auto& r = static_cast<ReduceStmt&>(n);
      c.check(6, p.accumulator.empty() || p.accumulator == r.buffer, "its reductions update more than one accumulator");
      p.accumulator = r.buffer;
      p.op = r.op;
    });
    const Buffer* acc = k.findBuffer(p.accumulator);
    c.check(6, acc && acc->scope == MemScope::Register && numElements(acc->shape) == (p.op == ReduceOp::MaxSumExp ? 2 : 1),
            "does not reduce into a register accumulator of one value (or online softmax's pair)");
    passes.push_back(p);
  }
  return passes;
}

// One phase's loop body. The row's variable is `row` (the original loop's was `loop`), its part `part`: passes
// before `phase` become combines of their partials, pass `phase` runs over its part and writes the part's
// partial, and the last phase (phase == passes.size()) also runs the rest of the row (outputs) over its part.
std::vector<Stmt> phaseBody(const Kernel& k, const BlockStmt& body, const std::vector<RowPass>& passes,
                            const std::vector<Buffer>& workspaces, size_t phase, const std::string& loop,
                            const std::string& row, const std::string& part, int64_t blocks, Names& names) {
  bool last = phase == passes.size();
  std::vector<Stmt> stmts;
  size_t pass = 0;
  for (size_t i = 0; i < body.stmts.size(); ++i) {
    const Stmt& s = body.stmts[i];
    bool isPass = pass < passes.size() && passes[pass].index == i;
    if (isPass && pass < phase) {
      auto more = combine(passes[pass], workspaces[pass], row, blocks, names, reductionProvenance(s));
      stmts.insert(stmts.end(), more.begin(), more.end());
      ++pass;
      continue;
    }
    if (isPass) {  // this phase's pass, then its partial to the workspace
      stmts.push_back(chunked(static_cast<ForStmt&>(*s), part, blocks, loop, row));
      const Buffer& ws = workspaces[pass];
      std::vector<std::string> provenance = reductionProvenance(s);
      for (int64_t e = 0; e < ws.shape[2]; ++e) {
        Stmt st = StoreStmt::make(ws.name, {var(row), var(part), intImm(e)},
                                  Load::make(passes[pass].accumulator, ws.dtype, {intImm(e)}));
        st->provenance = provenance;
        stmts.push_back(st);
      }
      break;
    }
    if (s->kind == StmtKind::For) {  // a loop over the whole row writing outputs: the last phase's, over its part
      if (last) stmts.push_back(chunked(static_cast<ForStmt&>(*s), part, blocks, loop, row));
      continue;
    }
    bool output = s->kind == StmtKind::Store && k.findBuffer(static_cast<StoreStmt&>(*s).buffer)->scope == MemScope::Global;
    if (output && !last) continue;
    Stmt copy = cloneStmt(s);
    substitute(copy, {{loop, var(row)}});
    stmts.push_back(copy);
  }
  return stmts;
}

}  // namespace

std::vector<std::string> splitReduction(Kernel& k, const std::string& loop, int64_t blocks) {
  Checker c(k, "split_reduction", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  const ForStmt& rowLoop = *site.loop;
  c.check(2, blocks >= 2 && blocks <= kMaxBlocksPerRow, "blocks " + std::to_string(blocks) + " must be between 2 and 64");
  c.check(3, unwrapBlocks(k.body).get() == site.loop, "is not the kernel's only top-level statement");
  c.check(4, rowLoop.h.loopKind == LoopKind::Serial && !rowLoop.h.reduction, "is not a serial data-parallel loop");
  auto body = std::static_pointer_cast<BlockStmt>(asBlock(unwrapBlocks(rowLoop.body)));
  int64_t extent = 0;
  std::vector<RowPass> passes = rowPasses(k, c, *body, extent);
  c.setSubject(loop);
  c.check(7, !passes.empty(), "its body has no reduction loop over the row");
  c.check(8, extent % blocks == 0,
          "blocks " + std::to_string(blocks) + " does not divide the row's " + std::to_string(extent) + " elements");
  // One workspace per pass: [rows, blocks, the accumulator's elements].
  Names names(k);
  std::vector<Buffer> workspaces;
  for (const RowPass& p : passes) {
    const Buffer& acc = *k.findBuffer(p.accumulator);
    workspaces.push_back({names.fresh("ws" + std::to_string(workspaces.size())), acc.dtype,
                          {rowLoop.h.extent, blocks, numElements(acc.shape)}, MemScope::Global, BufferRole::Temp, "", "", true, {}});
  }
  // One phase per pass and one after them, a grid barrier between phases.
  std::vector<std::string> created;
  std::vector<Stmt> top;
  for (const Buffer& ws : workspaces) top.push_back(AllocateStmt::make(ws.name));
  for (size_t phase = 0; phase <= passes.size(); ++phase) {
    LoopHeader row = rowLoop.h, part;
    row.var = phase == 0 ? loop : names.fresh(loop + "_" + std::to_string(phase));
    part.var = names.fresh("part" + std::to_string(phase));
    part.extent = blocks;
    created.push_back(row.var);
    created.push_back(part.var);
    std::vector<Stmt> stmts = phaseBody(k, *body, passes, workspaces, phase, loop, row.var, part.var, blocks, names);
    Stmt nest = ForStmt::make(row, BlockStmt::make({ForStmt::make(part, BlockStmt::make(stmts))}));
    nest->provenance = rowLoop.provenance;
    if (phase > 0) top.push_back(SyncStmt::makeGrid());
    top.push_back(nest);
  }
  for (const Buffer& ws : workspaces) {
    k.buffers.push_back(ws);
    created.push_back(ws.name);
  }
  k.body = BlockStmt::make(top);
  return created;
}

}  // namespace tessera::kernel::sched
