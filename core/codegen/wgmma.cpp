// Hopper's warpgroup MMA (wgmma.mma_async, sm_90a; docs/codegen.md, Warpgroup MMA). The gemm template's
// wgmma = 1 form schedules a block as the mma form does with warps of 16 rows: warp w holds rows 16w..16w+15
// of the block tile and a row of 16 x 8 mma tiles across the warp's columns, in the m16n8 accumulator layout.
// Four warps in a row of threadIdx.y (a warpgroup) then hold a 64 x N tile exactly as one wgmma m64nNk16
// holds its accumulator, so each k step of their tiles is one wgmma, its operands read by the tensor cores
// from the 128-byte-swizzled shared tiles (Buffer::swizzleBytes) through descriptors. The kernel IR is the mma
// form's; only the instructions differ. Anything that does not match exactly runs as the mma form.
#include <optional>
#include <set>

#include "codegen/generator.h"
#include "codegen/mma_match.h"
#include "codegen/thread_registers.h"
#include "codegen/vector_access.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

// How the tensor cores read one operand's swizzled tile: K-major (its rows run along the outer index, A's rows
// or B's columns, 128 bytes of depth each) or MN-major (rows along the depth, the outer index in 64-element
// chunks), and the descriptor's byte offsets for it (PTX ISA, wgmma shared memory layout).
struct OperandForm {
  bool kMajor = true;
  int64_t leading = 16, stride = 1024;  // K-major: leading unused (1 by convention); 8 rows of 128 bytes to the next
};

// The k steps of a warpgroup's tiles: the unrolled loop over 16-deep steps around the tile loops (or none,
// one step), the warp's row of tiles (rows: one tile), and the tile inside.
struct WgmmaNest {
  const ForStmt* steps = nullptr;
  const ForStmt *rowTiles = nullptr, *colTiles = nullptr;
  MmaTile tile;
  std::string warpRows;  // the loop bound to threadIdx.y: warps along the rows, four to a warpgroup
  int64_t n = 0;         // the warpgroup tile's columns
  OperandForm a, b;
};

bool plainTileLoop(const ForStmt* f) {
  return f && (f->h.loopKind == LoopKind::Serial || f->h.loopKind == LoopKind::Unrolled) && !f->h.reduction &&
         f->h.pipelineStages <= 1;
}

// The variables of the kernel's reduction loops.
std::set<std::string> reductionVars(const Kernel& k) {
  std::set<std::string> vars;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind == StmtKind::For && static_cast<ForStmt&>(n).h.reduction) vars.insert(static_cast<ForStmt&>(n).h.var);
  });
  return vars;
}

// The statement inside `body`, through blocks and through guards on no reduction variable (null where a guard
// uses one): a block tile overhanging M leaves its last rows out. The warpgroup computes them anyway (the rows
// of a product are independent, so they only read their own shared rows, whatever those hold) into
// accumulators whose stores the epilogue's own guards skip; every thread joins the wgmma, as it must.
Stmt throughTileGuards(const Stmt& body, const std::set<std::string>& reduction) {
  Stmt s = unwrapBlocks(body);
  while (s->kind == StmtKind::IfThen) {
    const auto& guard = static_cast<const IfThenStmt&>(*s);
    for (const std::string& v : reduction)
      if (usesVar(guard.cond, v)) return nullptr;
    s = unwrapBlocks(guard.body);
  }
  return s;
}

// The loop directly inside `body`, through blocks and tile guards (throughTileGuards).
const ForStmt* directLoop(const Stmt& body, const std::set<std::string>& reduction) {
  Stmt s = throughTileGuards(body, reduction);
  return s && s->kind == StmtKind::For ? static_cast<const ForStmt*>(s.get()) : nullptr;
}

// `e` steps by `coef` per unit of `loopVar` over its `extent` values (an affine index).
bool steps(const Expr& e, const std::string& loopVar, int64_t extent, int64_t coef) {
  auto f = laneForm(e, loopVar, std::max<int64_t>(extent, 2));
  return f && f->coef == coef;
}

// The loop bound to `tag` whose variable `e` uses (the kernel binds a tag in each of its nests).
const ForStmt* boundLoopUsedBy(const Kernel& k, ThreadTag tag, const Expr& e) {
  const ForStmt* found = nullptr;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::For) return;
    const auto& f = static_cast<ForStmt&>(n);
    if (f.h.loopKind == LoopKind::Bound && f.h.tag == tag && usesVar(e, f.h.var)) found = &f;
  });
  return found;
}

// `outer` is A's row or B's column loop; `outerStep` and `tileStep` what the outer index gains per warp row
// (A) or per 8-column tile (B).
std::optional<OperandForm> operandForm(const Load& ld, const Buffer& b, const std::string& depth, const std::string& outer,
                                       const std::string& tiles, int64_t tileExtent, int64_t tileStep) {
  if (b.scope != MemScope::Shared || b.swizzleBytes != 128 || b.shape.size() != 2 || dtypeSize(b.dtype) != 2) return std::nullopt;
  OperandForm form;
  form.kMajor = usesVar(ld.indices[1], depth);
  const Expr& d = ld.indices[form.kMajor ? 1 : 0];
  const Expr& o = ld.indices[form.kMajor ? 0 : 1];
  if (usesVar(o, depth) || usesVar(d, outer) || usesVar(d, tiles)) return std::nullopt;
  if (!steps(d, depth, 16, 1) || !steps(o, outer, 8, 1) || !steps(o, tiles, tileExtent, tileStep)) return std::nullopt;
  if (!form.kMajor) form.leading = b.shape[0] * 128;  // from one 64-element chunk of the outer index to the next
  return form;
}

std::optional<WgmmaNest> matchWgmma(const ForStmt& f, const Kernel& k, const ExprPrinter& ep, unsigned blockX) {
  auto param = k.params.find("wgmma");
  if (param == k.params.end() || param->second == 0 || blockX != 32) return std::nullopt;
  WgmmaNest w;
  const std::set<std::string> reduction = reductionVars(k);
  const ForStmt* outer = &f;
  if (f.h.reduction && f.h.loopKind == LoopKind::Unrolled && f.h.pipelineStages <= 1) {
    w.steps = &f;
    outer = directLoop(f.body, reduction);
  }
  w.rowTiles = outer;
  w.colTiles = plainTileLoop(outer) ? directLoop(outer->body, reduction) : nullptr;
  if (!plainTileLoop(w.rowTiles) || w.rowTiles->h.extent != 1 || !plainTileLoop(w.colTiles)) return std::nullopt;
  const ForStmt* row = directLoop(w.colTiles->body, reduction);
  if (!row || row->h.loopKind != LoopKind::Bound || row->h.tag != ThreadTag::MmaRow) return std::nullopt;
  std::optional<MmaTile> m = matchMma(*row, ep, k.params);
  if (!m || m->tf32 || !m->depthGuards.empty() || directLoop(row->body, reduction) != m->col ||
      directLoop(m->col->body, reduction) != m->depth)
    return std::nullopt;
  Stmt product = throughTileGuards(m->depth->body, reduction);
  if (!product || product->kind != StmtKind::Reduce) return std::nullopt;
  w.tile = *m;
  w.n = 8 * w.colTiles->h.extent;
  const Load& a = *w.tile.a;
  const ForStmt* warps = boundLoopUsedBy(k, ThreadTag::ThreadY, usesVar(a.indices[0], w.tile.row->h.var) ? a.indices[0] : a.indices[1]);
  if (!warps || warps->h.extent % 4 != 0 || w.n % 64 != 0 || w.n > 256) return std::nullopt;
  w.warpRows = warps->h.var;
  const MmaTile& t = w.tile;
  auto af = operandForm(*t.a, ep.buffer(t.a->buffer), t.depth->h.var, t.row->h.var, warps->h.var, warps->h.extent, 16);
  auto bf = operandForm(*t.b, ep.buffer(t.b->buffer), t.depth->h.var, t.col->h.var, w.colTiles->h.var, w.colTiles->h.extent, 8);
  if (!af || !bf || usesVar(t.a->indices[0], w.colTiles->h.var) || usesVar(t.a->indices[1], w.colTiles->h.var) ||
      usesVar(t.b->indices[0], warps->h.var) || usesVar(t.b->indices[1], warps->h.var))
    return std::nullopt;
  w.a = *af;
  w.b = *bf;
  return w;
}

// The 64-bit descriptor of a 128-byte-swizzled shared tile starting at `pointer` (PTX ISA, wgmma matrix
// descriptor): start address, leading and stride byte offsets, each >> 4, and the swizzle mode (1: 128 bytes).
std::string descriptor(const std::string& pointer, int64_t leadingBytes, int64_t strideBytes) {
  return "(1ull << 62) | ((unsigned long long)(" + std::to_string(strideBytes >> 4) + ") << 32) | ((unsigned long long)(" +
         std::to_string(leadingBytes >> 4) + ") << 16) | (unsigned long long)(((unsigned)__cvta_generic_to_shared(" +
         pointer + ") & 0x3FFFF) >> 4)";
}

std::vector<Expr> at(const std::vector<Expr>& idx, const std::map<std::string, Expr>& vars) {
  std::vector<Expr> out;
  for (const Expr& e : idx) out.push_back(substitute(e, vars));
  return out;
}

// The accumulator registers in wgmma's order: per 8-column tile j, (row g, col 2t), (g, 2t + 1), (g + 8, 2t),
// (g + 8, 2t + 1): the m16n8 layout of each of the warp's tiles.
std::vector<std::string> accumulators(const WgmmaNest& w, const ExprPrinter& ep) {
  std::vector<std::string> out;
  const ReduceStmt& red = *w.tile.red;
  for (int64_t j = 0; j < w.colTiles->h.extent; ++j)
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        std::map<std::string, Expr> vars = {{w.rowTiles->h.var, intImm(0)}, {w.colTiles->h.var, intImm(j)},
                                            {mmaLaneIndex(w.tile.row->h.var), intImm(r)},
                                            {mmaLaneIndex(w.tile.col->h.var), intImm(c)}};
        out.push_back(identifier(red.buffer) + "[" + ep.linear(red.buffer, at(red.indices, vars)) + "]");
      }
  return out;
}

// The wgmma of one k step: the operands transposed where MN-major (imm-trans-a/b), the accumulators scaled by
// 1 (accumulate).
std::vector<std::string> wgmmaLines(const WgmmaNest& w, const ExprPrinter& ep) {
  std::vector<std::string> accs = accumulators(w, ep);
  size_t n = accs.size();
  std::string regs, outputs;
  for (size_t i = 0; i < n; ++i) {
    regs += (i ? ", %" : "%") + std::to_string(i);
    outputs += std::string(i ? ", " : "") + "\"+f\"(" + accs[i] + ")";
  }
  std::string type = w.tile.a->dtype == DType::BF16 ? "bf16" : "f16";
  return {"asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" + std::to_string(n + 2) + ", 0;\\n\"",
          "    \"wgmma.mma_async.sync.aligned.m64n" + std::to_string(w.n) + "k16.f32." + type + "." + type + " {" + regs +
              "}, %" + std::to_string(n) + ", %" + std::to_string(n + 1) + ", p, 1, 1, " + (w.a.kMajor ? "0" : "1") + ", " +
              (w.b.kMajor ? "0" : "1") + ";\\n}\\n\"",
          "    : " + outputs, "    : \"l\"(tsr_desc_a), \"l\"(tsr_desc_b), \"r\"(1));"};
}

}  // namespace

bool Generator::wgmmaLoop(const ForStmt& f) {
  std::optional<WgmmaNest> w = matchWgmma(f, k_, ep_, out_.launch.block[0]);
  if (!w) return false;
  const MmaTile& m = w->tile;
  const auto& prov = m.red->provenance;
  out_.archSpecific = true;
  std::string first = identifier(w->warpRows) + " / 4 * 4";
  line("{  // " + std::to_string(w->steps ? w->steps->h.extent : 1) + " k step(s) of the warpgroup's 64 x " + std::to_string(w->n) +
           " tile (warps " + first + " .. + 3) as wgmma m64n" + std::to_string(w->n) + "k16, operands read from the swizzled shared tiles",
       prov);
  ++indent_;
  std::map<std::string, Expr> origin = {{w->warpRows, mul(idiv(var(w->warpRows), intImm(4)), intImm(4))},
                                        {w->rowTiles->h.var, intImm(0)}, {w->colTiles->h.var, intImm(0)},
                                        {m.row->h.var, intImm(0)}, {m.col->h.var, intImm(0)}, {m.depth->h.var, intImm(0)}};
  line("asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");", prov);
  if (w->steps) {
    std::string s = identifier(w->steps->h.var);
    line("#pragma unroll", prov);
    line("for (long long " + s + " = 0; " + s + " < " + std::to_string(w->steps->h.extent) + "; ++" + s + ") {", prov);
    ++indent_;
  }
  std::string aAt = identifier(m.a->buffer) + " + (" + ep_.atomOffset(m.a->buffer, at(m.a->indices, origin)) + ")";
  std::string bAt = identifier(m.b->buffer) + " + (" + ep_.atomOffset(m.b->buffer, at(m.b->indices, origin)) + ")";
  line("const unsigned long long tsr_desc_a = " + descriptor(aAt, w->a.leading, w->a.stride) + ";", prov);
  line("const unsigned long long tsr_desc_b = " + descriptor(bAt, w->b.leading, w->b.stride) + ";", prov);
  for (const std::string& l : wgmmaLines(*w, ep_)) line(l, prov);
  if (w->steps) {
    --indent_;
    line("}", prov);
  }
  line("asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");", prov);
  // In a TMA pipeline that allows it, this iteration's group stays in flight (the loop waits for it after).
  line("asm volatile(\"wgmma.wait_group.sync.aligned " + std::to_string(wgmmaPending_) + ";\\n\" ::: \"memory\");", prov);
  --indent_;
  line("}", prov);
  return true;
}

}  // namespace tessera::codegen::detail
