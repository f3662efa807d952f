// The attention kernel (lower_attention.cpp: one nest over the query rows, the keys visited once with the
// softmax online). A thread owns a query row: its q row and its row of outputs stay in registers, the keys and
// values are read by every thread of the block at the same address (one broadcast read a warp). On the CPU the
// rows are spread over OpenMP threads. That is the CUDA-core form. The tensor-core form (tensor_cores = 1, the
// default where it applies) gives each warp 16 rows: the row loop split into a loop bound to `warp` and one of
// at most 16 rows, which the CUDA generator runs as FlashAttention-2 does (codegen/flash_attention.cpp).
#include "kernel/templates/template_util.h"

#include "kernel/attention_nest.h"
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

// Why the kernel cannot take the tensor-core form, "" when it can.
std::string tensorCoreRefusal(Kernel& k) {
  const ForStmt* row = attentionRowLoop(k);
  std::optional<AttentionNest> nest = row ? attentionNest(k, row->body) : std::nullopt;
  if (!nest) return "the kernel is not the lowered attention row";
  if (row->h.extent < 2) return "a single query row";
  return kernel::tensorCoreRefusal(k, *nest);
}

// Blocks of rows_per_block query rows (the batch fused in front, so that neighbouring blocks share a head's
// keys), warp_rows rows a warp.
void tensorCoreRows(TracedSchedule& s, const TemplateParams& p, const std::vector<std::string>& outer) {
  if (std::string why = tensorCoreRefusal(s.kernel()); !why.empty()) rejectParams(s.kernel(), "attention", "tensor_cores", why);
  if (p.at("rows_per_block") % 16)
    rejectParams(s.kernel(), "attention", "rows_per_block", "the tensor-core form takes rows in warps of 16");
  if (p.at("warp_rows") != 16 && p.at("warp_rows") != 32)
    rejectParams(s.kernel(), "attention", "warp_rows", "the tensor-core form gives a warp 16 or 32 rows");
  if (p.at("rows_per_block") % p.at("warp_rows"))
    rejectParams(s.kernel(), "attention", "rows_per_block", "not a whole number of warps of warp_rows rows");
  if (p.at("stages") < 2) rejectParams(s.kernel(), "attention", "stages", "the tensor-core form keeps 2 or more stages");
  if (p.at("key_tile") % 16) rejectParams(s.kernel(), "attention", "key_tile", "the tensor-core form takes keys in steps of 16");
  auto [tiles, blockRows] = splitBy(s, outer.back(), p.at("rows_per_block"));
  std::vector<std::string> blocks(outer.begin(), outer.end() - 1);
  blocks.push_back(tiles);
  s.bind(fuseAll(s, blocks), ThreadTag::BlockX);
  auto [warps, rows] = splitBy(s, blockRows, p.at("warp_rows"));
  s.bind(warps, ThreadTag::Warp);
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
  if (p.at("tensor_cores")) return tensorCoreRows(s, p, outer);
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
// The tensor-core form where it applies, 64 rows (4 warps) a block.
TemplateParams attentionDefaults(Kernel& k) {
  if (k.machine == Machine::Gpu && tensorCoreRefusal(k).empty())
    return {{"rows_per_block", 64}, {"q_registers", 0}, {"tensor_cores", 1}, {"key_tile", 64}, {"stages", 2}, {"warp_rows", 16}};
  int64_t rows = chainExtent(k, outerChain(k)), perBlock = 128;
  while (perBlock > 32 && (rows + perBlock - 1) / perBlock < kDefaultSms) perBlock /= 2;
  return {{"rows_per_block", perBlock}, {"q_registers", 1}, {"tensor_cores", 0}, {"key_tile", 64}, {"stages", 2}, {"warp_rows", 16}};
}

}  // namespace

const TemplateDef& attentionTemplate() {
  static const TemplateDef def = {
      attention,
      {{"rows_per_block", {32, 64, 128, 256}, "query rows per block, one a thread"},
       {"q_registers", {0, 1}, "keep each thread's q row in registers (else read it again for every key)"},
       {"tensor_cores", {0, 1}, "GPU: 16 rows a warp, both products on the tensor cores (FlashAttention-2's form)"},
       {"key_tile", {32, 64, 128}, "tensor-core form: keys and values staged a tile at a time (S is 16 x key_tile a warp)"},
       {"stages", {2, 3, 4}, "tensor-core form: key and value tiles in shared memory, stages - 1 in flight ahead"},
       {"warp_rows", {16, 32}, "tensor-core form: query rows a warp (32: two m-tiles share each K and V fragment)"}},
      attentionDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
