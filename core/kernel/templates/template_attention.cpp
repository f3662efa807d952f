// The attention kernel (lower_attention.cpp: one nest over the query rows, the keys visited once with the
// softmax online). A thread owns a query row: its q row and its row of outputs stay in registers, the keys and
// values are read by every thread of the block at the same address (one broadcast read a warp). On the CPU the
// rows are spread over OpenMP threads. This is the CUDA-core form; the tensor-core form (key tiles in shared
// memory, both products as mma tiles) is docs/performance.md's next step.
#include "kernel/templates/template_util.h"

#include "kernel/visit.h"

namespace tessera::kernel::templ {
namespace {

// The loops the row body unrolls so that its register arrays are indexed by constants: the depth loop of the
// product (c), the output columns (d, d_init, d_out) and the q row's register fill.
void unrollRowLoops(TracedSchedule& s, std::vector<std::string> loops) {
  for (const char* l : {"c", "d", "d_init", "d_out"}) loops.push_back(l);
  for (const std::string& l : loops) s.unroll(l);
}

// The buffer of q: the input the product's depth loop (c) reads without the key index (j).
std::string queryBuffer(Kernel& k) {
  std::string q;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::For || static_cast<ForStmt&>(n).h.var != "c") return;
    walk(static_cast<ForStmt&>(n).body, [&](StmtNode& m) {
      mapDirectExprs(m, [&](const Expr& e) {
        walkExpr(e, [&](const ExprNode& x) {
          if (x.kind != ExprKind::Load || !q.empty()) return;
          const auto& load = static_cast<const Load&>(x);
          const Buffer* b = k.findBuffer(load.buffer);
          bool keyed = false;
          for (const Expr& i : load.indices) keyed |= usesVar(i, "j");
          if (b && b->role == BufferRole::Input && !keyed) q = load.buffer;
        });
        return e;
      });
    });
  });
  return q;
}

void attention(TracedSchedule& s, const TemplateParams& p) {
  std::vector<std::string> outer = outerChain(s.kernel());  // b..., i
  if (outer.empty()) rejectParams(s.kernel(), "attention", "rows_per_block", "the kernel has no row loop");
  std::string rows = outer.back();
  std::vector<std::string> qFill;
  if (s.kernel().machine == Machine::Cpu) {
    s.parallel(fuseAll(s, outer));
    return;
  }
  auto [blockRows, threadRows] = splitBy(s, rows, p.at("rows_per_block"));
  std::vector<std::string> blocks(outer.begin(), outer.end() - 1);
  blocks.push_back(blockRows);
  s.bind(fuseAll(s, blocks), ThreadTag::BlockX);
  std::string row = threadRows.empty() ? blockRows : threadRows;
  if (!threadRows.empty()) s.bind(threadRows, ThreadTag::ThreadX);
  if (p.at("q_registers")) {
    std::string q = queryBuffer(s.kernel());
    if (!q.empty()) {
      auto fill = s.cacheRead(row, q, MemScope::Register);
      qFill.assign(fill.begin() + 1, fill.end());
    }
  }
  unrollRowLoops(s, qFill);
}

// 128 rows a block where that still gives every SM of the H200 (132) a block, else fewer: a row is a thread's
// whole work, so small attentions need small blocks to spread at all.
TemplateParams attentionDefaults(Kernel& k) {
  int64_t rows = chainExtent(k, outerChain(k)), perBlock = 128;
  while (perBlock > 32 && (rows + perBlock - 1) / perBlock < 132) perBlock /= 2;
  return {{"rows_per_block", perBlock}, {"q_registers", 1}};
}

}  // namespace

const TemplateDef& attentionTemplate() {
  static const TemplateDef def = {
      attention,
      {{"rows_per_block", {32, 64, 128, 256}, "query rows per block, one a thread"},
       {"q_registers", {0, 1}, "keep each thread's q row in registers (else read it again for every key)"}},
      attentionDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
