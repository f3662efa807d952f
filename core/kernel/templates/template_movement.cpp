#include "kernel/templates/template_util.h"

#include <set>

#include "kernel/visit.h"

namespace tessera::kernel::templ {

// Loads whose values are addresses (a CheckedIndex's operand, Gather's indices), not data the kernel moves.
std::set<const ExprNode*> indexReads(const Expr& e) {
  std::set<const ExprNode*> out;
  walkExpr(e, [&](const ExprNode& n) {
    if (n.kind != ExprKind::CheckedIndex) return;
    walkExpr(static_cast<const CheckedIndex&>(n).value, [&](const ExprNode& l) {
      if (l.kind == ExprKind::Load) out.insert(&l);
    });
  });
  return out;
}

// Transposes: the innermost output loop is not the input's innermost index (a gather's 2-D indices, read once
// per row, are not).
bool isTransposeLike(Kernel& k) {
  if (k.kind != "data-movement") return false;
  std::vector<std::string> loops = outerChain(k);
  if (loops.size() < 2) return false;
  bool transposed = false;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::Compute) return;
    std::set<const ExprNode*> addresses = indexReads(static_cast<ComputeStmt&>(n).value);
    walkExpr(static_cast<ComputeStmt&>(n).value, [&](const ExprNode& e) {
      if (e.kind != ExprKind::Load || addresses.count(&e)) return;
      const auto& idx = static_cast<const Load&>(e).indices;
      if (idx.size() >= 2 && !usesVar(idx.back(), loops.back()) && usesVar(idx.back(), loops[loops.size() - 2]))
        transposed = true;
    });
  });
  return transposed;
}

namespace {

void transpose(TracedSchedule& s, const TemplateParams& p) {
  std::vector<std::string> loops = outerChain(s.kernel());
  std::string a = loops[loops.size() - 2], b = loops.back();
  // An empty transpose (a [0, 0] tensor; diff_fuzz seed 214) moves nothing: its loops run zero times, untiled.
  if (extentOf(s.kernel(), a) == 0 || extentOf(s.kernel(), b) == 0) return;
  int64_t tile = p.at("tile");
  auto t = s.tile({a, b}, {std::min(tile, extentOf(s.kernel(), a)), std::min(tile, extentOf(s.kernel(), b))});
  std::vector<std::string> batch(loops.begin(), loops.end() - 2);
  if (!batch.empty()) s.bind(fuseAll(s, batch), ThreadTag::BlockZ);
  s.bind(t[0], ThreadTag::BlockY);
  s.bind(t[1], ThreadTag::BlockX);
  if (p.at("shared_tile")) {
    std::string input;
    for (const Buffer& buf : s.kernel().buffers)
      if (buf.role == BufferRole::Input && input.empty()) input = buf.name;
    auto fill = s.cacheRead(t[1], input, MemScope::Shared);
    s.bind(fill[fill.size() - 2], ThreadTag::ThreadY);
    s.bind(fill.back(), ThreadTag::ThreadX);
  }
  s.bind(t[2], ThreadTag::ThreadY);
  s.bind(t[3], ThreadTag::ThreadX);
}

// Each top-level nest (one per Split output) fused and spread over blocks and threads.
void dataMovement(TracedSchedule& s, const TemplateParams& p) {
  for (const auto& nest : topNests(s.kernel())) {
    std::string f = fuseAll(s, nest);
    if (f.empty()) continue;
    auto [blk, tx] = splitBy(s, f, p.at("block_size"));
    s.bind(tx.empty() ? blk : tx, ThreadTag::ThreadX);
    if (!tx.empty()) s.bind(blk, ThreadTag::BlockX);
  }
}

// Shared tiles by default, unless cache_read refuses the input's indices (a Reshape folded before the Transpose
// reads (i * 32 + j) / 56, not affine in the tile's loops): then the tiles read global memory directly.
TemplateParams transposeDefaults(Kernel& k) {
  TemplateParams p = {{"tile", 32}, {"shared_tile", 1}};
  Kernel trial = k.clone();
  TracedSchedule s(trial);
  try {
    transpose(s, p);
  } catch (const Error&) {
    p["shared_tile"] = 0;
  }
  return p;
}
TemplateParams dataMovementDefaults(Kernel&) { return {{"block_size", 256}}; }

}  // namespace

const TemplateDef& transposeTemplate() {
  static const TemplateDef def = {
      transpose,
      {{"tile", {8, 16, 32}, "side of the square tile one block moves"},
       {"shared_tile", {0, 1}, "stage the tile in shared memory so reads and writes are both coalesced"}},
      transposeDefaults};
  return def;
}

const TemplateDef& dataMovementTemplate() {
  static const TemplateDef def = {dataMovement, {{"block_size", {128, 256, 512}, "threads per block"}}, dataMovementDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
