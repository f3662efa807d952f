// online_softmax: a max pass and the sum-of-exponentials pass after it become one pass over a (max, sum)
// pair (ReduceOp::MaxSumExp), so a softmax reads its row twice instead of three times.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "kernel/printer.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

using namespace detail;

namespace {

// The statement list that holds `target` directly.
BlockStmt* parentBlock(const Kernel& k, const StmtNode* target) {
  BlockStmt* found = nullptr;
  walk(k.body, [&](StmtNode& n) {
    if (found || n.kind != StmtKind::Block) return;
    auto& b = static_cast<BlockStmt&>(n);
    if (std::any_of(b.stmts.begin(), b.stmts.end(), [&](const Stmt& s) { return s.get() == target; })) found = &b;
  });
  return found;
}

Expr stripCasts(Expr e) {
  while (e->kind == ExprKind::Cast) e = static_cast<const Cast&>(*e).a;
  return e;
}

bool isAccumulatorLoad(const Expr& e, const std::string& acc) {
  return e->kind == ExprKind::Load && static_cast<const Load&>(*e).buffer == acc;
}

// A loop whose body is computes then one Reduce of `op` into a one-element floating-point register
// accumulator: the statement, and its value with the computes substituted (so values compare as trees).
struct LoopReduce {
  ReduceStmt* stmt = nullptr;
  Expr value;
};
std::optional<LoopReduce> soleReduce(const Kernel& k, const ForStmt& loop, ReduceOp op) {
  Stmt body = asBlock(unwrapBlocks(loop.body));
  auto& stmts = static_cast<BlockStmt&>(*body).stmts;
  if (stmts.empty() || stmts.back()->kind != StmtKind::Reduce) return std::nullopt;
  std::map<std::string, Expr> defs;
  for (size_t i = 0; i + 1 < stmts.size(); ++i) {
    if (stmts[i]->kind != StmtKind::Compute) return std::nullopt;
    auto& c = static_cast<ComputeStmt&>(*stmts[i]);
    defs[c.name] = substitute(c.value, defs);
  }
  auto* r = static_cast<ReduceStmt*>(stmts.back().get());
  const Buffer* acc = k.findBuffer(r->buffer);
  bool scalar = acc && acc->scope == MemScope::Register && numElements(acc->shape) == 1 && isFloat(acc->dtype);
  if (r->op != op || !scalar) return std::nullopt;
  return LoopReduce{r, substitute(r->value, defs)};
}

// What stands between the max loop and the sum loop: computes from the max, and the sum accumulator's setup.
struct SumSetup {
  std::vector<Stmt>::iterator sumLoop;  // the first loop after the max loop (the end when there is none)
  std::string accumulator;              // the one accumulator set up there
  std::map<std::string, Expr> between;  // computes between the loops (the max as a value, say)
  std::vector<Stmt> stmts;              // the accumulator's allocation and initial value
};

// Step 5: the statements after `at` compute from the max and set up the sum's accumulator, then its loop follows.
SumSetup sumSetupAfter(const Checker& c, std::vector<Stmt>& stmts, std::vector<Stmt>::iterator at) {
  SumSetup setup;
  auto next = at + 1;
  while (next != stmts.end() && (*next)->kind != StmtKind::For) {
    StmtNode& n = **next;
    if (n.kind == StmtKind::Compute) {
      setup.between[static_cast<ComputeStmt&>(n).name] = substitute(static_cast<ComputeStmt&>(n).value, setup.between);
    } else {
      c.check(5, n.kind == StmtKind::Allocate || n.kind == StmtKind::Store,
              "a statement between it and the next loop is not a compute or an accumulator's allocation or initial value");
      std::string b = n.kind == StmtKind::Allocate ? static_cast<AllocateStmt&>(n).buffer : static_cast<StoreStmt&>(n).buffer;
      c.check(5, setup.accumulator.empty() || setup.accumulator == b, "the statements after it set up more than one accumulator");
      setup.accumulator = b;
      setup.stmts.push_back(*next);
    }
    ++next;
  }
  c.check(5, next != stmts.end(), "no loop follows it in its statement list");
  setup.sumLoop = next;
  return setup;
}

// Step 8's test: `sum` (the sum pass's value, computes substituted) is exp(x - max) with x what the max pass
// read at the same iteration (`maxValue`, over `maxVar`; the sum loop's variable is `sumVar`).
bool sumsExpOfMaxInputs(const Expr& sum, const std::string& maxAcc, const std::string& sumVar,
                        const std::string& maxVar, const Expr& maxValue) {
  Expr e = stripCasts(sum);
  if (e->kind != ExprKind::Unary || static_cast<const Unary&>(*e).op != UnaryOp::Exp) return false;
  Expr d = stripCasts(static_cast<const Unary&>(*e).a);
  if (d->kind != ExprKind::Binary || static_cast<const Binary&>(*d).op != BinaryOp::Sub ||
      !isAccumulatorLoad(stripCasts(static_cast<const Binary&>(*d).b), maxAcc))
    return false;
  Expr x = substitute(stripCasts(static_cast<const Binary&>(*d).a), {{sumVar, var(maxVar)}});
  return printExpr(x) == printExpr(stripCasts(maxValue));
}

// The statement list without the sum's setup and loop, the max accumulator's allocation and initial value (the
// stores before the max loop at `at`) made the pair's.
std::vector<Stmt> withPair(const std::vector<Stmt>& stmts, std::vector<Stmt>::const_iterator at,
                           const SumSetup& setup, const std::string& maxAcc, const std::string& pairName, DType dtype) {
  std::vector<Stmt> out;
  const StmtNode* sumLoop = setup.sumLoop->get();
  for (auto s = stmts.begin(); s != stmts.end(); ++s) {
    if (s->get() == sumLoop || std::find(setup.stmts.begin(), setup.stmts.end(), *s) != setup.stmts.end()) continue;
    if ((*s)->kind == StmtKind::Allocate && static_cast<AllocateStmt&>(**s).buffer == maxAcc) {
      Stmt alloc = AllocateStmt::make(pairName);
      alloc->provenance = (*s)->provenance;
      out.push_back(alloc);
      continue;
    }
    if ((*s)->kind == StmtKind::Store && static_cast<StoreStmt&>(**s).buffer == maxAcc && s < at) {
      for (int64_t i : {0, 1}) {
        Expr init = i == 0 ? FloatImm::make(-INFINITY, dtype) : FloatImm::make(0, dtype);
        Stmt st = StoreStmt::make(pairName, {intImm(i)}, init);
        st->provenance = (*s)->provenance;
        out.push_back(st);
      }
      continue;
    }
    out.push_back(*s);
  }
  return out;
}

// The max statement becomes the pair's update, with both reductions' provenance.
void mergeIntoPair(ReduceStmt& merged, const ReduceStmt& sum, const std::string& pairName) {
  for (const std::string& id : sum.provenance)
    if (std::find(merged.provenance.begin(), merged.provenance.end(), id) == merged.provenance.end()) merged.provenance.push_back(id);
  merged.op = ReduceOp::MaxSumExp;
  merged.buffer = pairName;
  merged.indices = {intImm(0)};
}

// Reads of the two accumulators read the pair's elements, and the accumulators go.
void readPair(Kernel& k, const std::string& maxAcc, const std::string& sumAcc, const std::string& pairName) {
  mapAllExprs(k.body, [&](const Expr& x) -> Expr {
    if (isAccumulatorLoad(x, maxAcc)) return Load::make(pairName, x->dtype, {intImm(0)});
    if (isAccumulatorLoad(x, sumAcc)) return Load::make(pairName, x->dtype, {intImm(1)});
    return x;
  });
  k.buffers.erase(std::remove_if(k.buffers.begin(), k.buffers.end(),
                                 [&](const Buffer& b) { return b.name == maxAcc || b.name == sumAcc; }),
                  k.buffers.end());
}

}  // namespace

std::vector<std::string> onlineSoftmax(Kernel& k, const std::string& loop) {
  Checker c(k, "online_softmax", loop);
  LoopSite site = requireLoop(k, c, 1, loop);
  ForStmt& maxLoop = *site.loop;
  c.check(2, maxLoop.h.reduction && maxLoop.h.loopKind == LoopKind::Serial, "is not a serial reduction loop");
  auto maxRed = soleReduce(k, maxLoop, ReduceOp::Max);
  c.check(3, maxRed.has_value(),
          "its body is not computes and one max= of a floating-point register accumulator (apply online_softmax before splitting)");
  std::string maxAcc = maxRed->stmt->buffer;
  BlockStmt* block = parentBlock(k, &maxLoop);
  c.check(4, block != nullptr, "is not in a statement list");
  auto& stmts = block->stmts;
  auto at = std::find_if(stmts.begin(), stmts.end(), [&](const Stmt& s) { return s.get() == &maxLoop; });
  SumSetup setup = sumSetupAfter(c, stmts, at);
  const std::string& sumAcc = setup.accumulator;
  auto& sumLoop = static_cast<ForStmt&>(**setup.sumLoop);
  c.setSubject(sumLoop.h.var);
  c.check(6, sumLoop.h.reduction && sumLoop.h.loopKind == LoopKind::Serial && sumLoop.h.extent == maxLoop.h.extent,
          "is not a serial reduction loop of the same extent as '" + loop + "'");
  auto sumRed = soleReduce(k, sumLoop, ReduceOp::Sum);
  c.check(7, sumRed && sumRed->stmt->buffer == sumAcc && !sumAcc.empty(),
          "its body is not computes and one sum= into the accumulator set up before it");
  c.check(7, k.findBuffer(sumAcc)->dtype == k.findBuffer(maxAcc)->dtype, "its accumulator's type differs from the max's");
  // Step 8: it sums exp(x - max) over the same x the max pass read.
  c.check(8, sumsExpOfMaxInputs(substitute(sumRed->value, setup.between), maxAcc, sumLoop.h.var, maxLoop.h.var, maxRed->value),
          "it does not sum exp(x - max) over the values '" + loop + "' takes the max of");
  // Rewrite: the max's accumulator becomes the pair, the sum's setup and loop go.
  const Buffer maxBuf = *k.findBuffer(maxAcc);
  std::string pairName = freshName(k, maxAcc + "_pair");
  k.buffers.push_back({pairName, maxBuf.dtype, {2}, MemScope::Register, BufferRole::Temp, "", "", true, {}});
  std::vector<Stmt> out = withPair(stmts, at, setup, maxAcc, pairName, maxBuf.dtype);
  mergeIntoPair(*maxRed->stmt, *sumRed->stmt, pairName);
  stmts = out;  // the sum's loop (and its reduce statement) may go with this
  readPair(k, maxAcc, sumAcc, pairName);
  return {pairName};
}

}  // namespace tessera::kernel::sched
