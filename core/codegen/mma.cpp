// Loops bound to the mma lanes (kernel_ir.h, ThreadTag::MmaRow/MmaCol). Each lane runs 2 of the 16 rows and 2
// of the 8 columns of the tile, in the layout of the m16n8k16 tensor-core instruction's accumulator; when the
// tile's body is exactly a 16-deep sum of products of two 16-bit operands into an f32 register accumulator,
// the whole tile is one `mma.sync` m16n8k16 (docs/codegen.md, Tensor cores). With the kernel's parameter
// tf32 = 1, an 8-deep sum of products of two f32 operands is one m16n8k8 on operands rounded to tf32 (the
// same accumulator layout). Anything else runs as the plain loops.
#include <map>
#include <optional>

#include "codegen/generator.h"
#include "codegen/mma_fragments.h"
#include "codegen/mma_match.h"
#include "codegen/vector_access.h"
#include "codegen/thread_registers.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

void Generator::mmaLanes(const ForStmt& f) {
  const LoopHeader& h = f.h;
  if (h.tag == ThreadTag::MmaRow && tryMma(f)) return;
  bool row = h.tag == ThreadTag::MmaRow;
  std::string v = identifier(h.var), r = identifier(mmaLaneIndex(h.var));
  line("#pragma unroll", f.provenance);
  line("for (int " + r + " = 0; " + r + " < 2; ++" + r + ") {  // loop " + v + " in 0.." + std::to_string(h.extent) +
           " bound to " + std::string(threadTagName(h.tag)),
       f.provenance);
  ++indent_;
  line("const long long " + v + " = " + (row ? "(long long)(threadIdx.x >> 2) + 8 * " + r : "(long long)(threadIdx.x & 3) * 2 + " + r) + ";",
       f.provenance);
  body(f.body);
  --indent_;
  line("}", f.provenance);
}

namespace {

// The buffer element `ld` reads at the tile's row r, column c and depth k.
std::string elementRef(const MmaTile& m, const ExprPrinter& ep, const Load& ld, Expr r, Expr c, Expr k) {
  std::map<std::string, Expr> at = {{m.row->h.var, r}, {m.col->h.var, c}, {m.depth->h.var, k}};
  std::vector<Expr> idx;
  for (const Expr& e : ld.indices) idx.push_back(substitute(e, at));
  return identifier(ld.buffer) + "[" + ep.linear(ld.buffer, idx) + "]";
}

const Load& operandLoad(const MmaTile& m, MmaOperand op) { return op == MmaOperand::A ? *m.a : *m.b; }

// The indices of an operand's load at its outer index (A: row, B: column) and depth.
std::vector<Expr> operandIndices(const MmaTile& m, MmaOperand op, Expr outer, Expr depth) {
  bool a = op == MmaOperand::A;
  std::map<std::string, Expr> at = {{m.row->h.var, a ? outer : intImm(0)}, {m.col->h.var, a ? intImm(0) : outer},
                                    {m.depth->h.var, depth}};
  std::vector<Expr> idx;
  for (const Expr& e : operandLoad(m, op).indices) idx.push_back(substitute(e, at));
  return idx;
}

// Whether ldmatrix can load the operand, and how: nullopt when not; false for plain ldmatrix (the operand is
// contiguous along the depth), true for .trans (contiguous along the outer index). Every lane's row address
// must be 16-byte aligned: a shared buffer (declared __align__(16), each pipelined copy a multiple of 16 bytes
// long) of 16-bit elements whose 8 elements from any block start (outer and depth multiples of 8, the other
// one any) are consecutive and start at a multiple of 8 elements.
std::optional<bool> ldmatrixForm(const MmaTile& m, const ExprPrinter& ep, MmaOperand op) {
  const Buffer& b = ep.buffer(operandLoad(m, op).buffer);
  if (b.scope != MemScope::Shared || dtypeSize(b.dtype) != 2 || (numElements(b.shape) * 2) % 16 != 0) return std::nullopt;
  Expr lane = var("tsr_chk_lane"), any = var("tsr_chk_any");
  Expr outerBlock = mul(var("tsr_chk_outer"), intImm(8)), depthBlock = mul(var("tsr_chk_depth"), intImm(8));
  if (alignedLaneOffset(b, operandIndices(m, op, add(outerBlock, any), add(depthBlock, lane)), "tsr_chk_lane", 8)) return false;
  if (alignedLaneOffset(b, operandIndices(m, op, add(outerBlock, lane), add(depthBlock, any)), "tsr_chk_lane", 8)) return true;
  return std::nullopt;
}

// The gemm template's ldmatrix parameter (absent in traces saved before it: on).
int64_t ldmatrixParam(const std::map<std::string, int64_t>& params) {
  auto p = params.find("ldmatrix");
  return p == params.end() ? 1 : p->second;
}
bool ldmatrixEnabled(const std::map<std::string, int64_t>& params) { return ldmatrixParam(params) != 0; }

// The line that loads a whole 16-bit operand fragment into `regs` with one ldmatrix (tsr_lane = this lane).
std::vector<Expr> shifted(std::vector<Expr> idx, const std::map<std::string, Expr>& shift) {
  for (Expr& e : idx) e = substitute(e, shift);
  return idx;
}

// `shift` substitutes a loop variable in the row addresses (B's n-tile pairs: j -> j + pairedTile(lane)).
std::string ldmatrixLine(const MmaTile& m, const ExprPrinter& ep, MmaOperand op, bool trans, const std::vector<std::string>& regs,
                         const std::map<std::string, Expr>& shift = {}) {
  ElementAt<Expr> row = ldmatrixRowStart<Expr>(op, trans, var("tsr_lane"));
  const Load& ld = operandLoad(m, op);
  std::string operands, outputs;
  for (size_t i = 0; i < regs.size(); ++i) {
    operands += (i ? ", %" : "%") + std::to_string(i);
    outputs += std::string(i ? ", " : "") + "\"=r\"(" + regs[i] + ")";
  }
  std::string address = "(unsigned)__cvta_generic_to_shared(" + identifier(ld.buffer) + " + (" +
                        ep.linear(ld.buffer, shifted(operandIndices(m, op, row.outer, row.depth), shift)) + "))";
  return "asm volatile(\"ldmatrix.sync.aligned.m8n8.x" + std::to_string(regs.size()) + (trans ? ".trans" : "") +
         ".shared.b16 {" + operands + "}, [%" + std::to_string(regs.size()) + "];\" : " + outputs + " : \"r\"(" + address + "));";
}

// The lines that fill `regs` (declared by the caller) with this lane's fragment of one 16-bit operand
// (tsr_lane = this lane): one ldmatrix where the layout allows it and `ldmatrix` is on, else a pair of
// scalar loads a register per the PTX ISA layout.
std::vector<std::string> operandLines(const MmaTile& m, const ExprPrinter& ep, MmaOperand op, const std::vector<std::string>& regs,
                                      bool ldmatrix) {
  if (std::optional<bool> trans = ldmatrix ? ldmatrixForm(m, ep, op) : std::nullopt) return {ldmatrixLine(m, ep, op, *trans, regs)};
  std::vector<std::string> out;
  bool a = op == MmaOperand::A;
  for (int i = 0; i < fragmentRegisters(op); ++i) {
    std::string halves[2];
    for (int h = 0; h < 2; ++h) {
      ElementAt<Expr> e = fragmentElement<Expr>(op, var("tsr_lane"), i, h);
      halves[h] = elementRef(m, ep, operandLoad(m, op), a ? e.outer : intImm(0), a ? intImm(0) : e.outer, e.depth);
    }
    out.push_back(regs[size_t(i)] + " = tsr_pack2(" + halves[0] + ", " + halves[1] + ");");
  }
  return out;
}

// The lines that fill `regs` with this lane's fragment of one f32 operand rounded to tf32, per the PTX ISA's
// m16n8k8 .tf32 layout (tsr_g = lane / 4, tsr_t = lane % 4), one element a register: A register i holds row
// g + 8 (i & 1), depth t + 4 (i >> 1); B register j holds depth t + 4j, column g. cvt.rna rounds to nearest,
// ties away from zero; or as MmaTile::tf32Rounding says.
std::vector<std::string> tf32OperandLines(const MmaTile& m, const ExprPrinter& ep, MmaOperand op, const std::vector<std::string>& regs) {
  std::vector<std::string> out;
  Expr g = var("tsr_g"), t = var("tsr_t");
  auto tf32Reg = [&](const std::string& name, const std::string& value) {
    switch (m.tf32Rounding) {
      case MmaTile::Tf32Rounding::Truncate: out.push_back(name + " = __float_as_uint(" + value + ");"); break;
      case MmaTile::Tf32Rounding::Add: out.push_back(name + " = __float_as_uint(" + value + ") + 0x1000u;"); break;
      case MmaTile::Tf32Rounding::Cvt:
        out.push_back("asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(" + name + ") : \"f\"(" + value + "));");
    }
  };
  if (op == MmaOperand::A)
    for (int i = 0; i < 4; ++i)
      tf32Reg(regs[size_t(i)], elementRef(m, ep, *m.a, add(g, intImm(8 * (i & 1))), intImm(0), add(t, intImm(4 * (i >> 1)))));
  else
    for (int j = 0; j < 2; ++j) tf32Reg(regs[size_t(j)], elementRef(m, ep, *m.b, intImm(0), g, add(t, intImm(4 * j))));
  return out;
}

// The depth of the element in half `half` of register `reg` of this lane's fragment (the PTX ISA layouts:
// m16n8k16 for 16-bit operands, by tsr_lane; m16n8k8 .tf32, by tsr_t, one element a register).
Expr fragmentDepth(const MmaTile& m, MmaOperand op, int reg, int half) {
  if (!m.tf32) return fragmentElement<Expr>(op, var("tsr_lane"), reg, half).depth;
  return add(var("tsr_t"), intImm(4 * (op == MmaOperand::A ? reg >> 1 : reg)));
}

// Lines that zero the elements of `regs` (an operand's fragment registers, `perTile` a tile, tiles one after
// another) whose depth the tile's depth guards leave out (MmaTile::depthGuards): a 16-bit half is cleared by a
// mask, a tf32 register whole.
std::vector<std::string> depthMaskLines(const MmaTile& m, const ExprPrinter& ep, MmaOperand op, const std::vector<std::string>& regs) {
  std::vector<std::string> out;
  if (m.depthGuards.empty()) return out;
  int perTile = fragmentRegisters(op);  // a tile's registers: 4 of A, 2 of B, in either kind of tile
  auto inside = [&](Expr depth) {
    std::string cond;
    for (const Expr& g : m.depthGuards) cond += (cond.empty() ? "" : " && ") + ("(" + ep.print(substitute(g, {{m.depth->h.var, depth}})) + ")");
    return cond;
  };
  for (size_t i = 0; i < regs.size(); ++i) {
    int reg = int(i) % perTile;
    if (m.tf32) {
      out.push_back("if (!(" + inside(fragmentDepth(m, op, reg, 0)) + ")) " + regs[i] + " = 0u;");
      continue;
    }
    for (int h = 0; h < 2; ++h)
      out.push_back("if (!(" + inside(fragmentDepth(m, op, reg, h)) + ")) " + regs[i] + " &= " + (h ? "0x0000FFFFu;" : "0xFFFF0000u;"));
  }
  return out;
}

// One operand's fragment lines, for either kind of tile.
std::vector<std::string> fragmentOf(const MmaTile& m, const ExprPrinter& ep, MmaOperand op, const std::vector<std::string>& regs,
                                    bool ldmatrix) {
  std::vector<std::string> out = m.tf32 ? tf32OperandLines(m, ep, op, regs) : operandLines(m, ep, op, regs, ldmatrix);
  for (const std::string& l : depthMaskLines(m, ep, op, regs)) out.push_back(l);
  return out;
}

// The lines that fill registers aRegs (4) and bRegs (2), declared by the caller, with this lane's fragments.
std::vector<std::string> fragmentLines(const MmaTile& m, const ExprPrinter& ep, const std::vector<std::string>& aRegs,
                                       const std::vector<std::string>& bRegs, bool ldmatrix) {
  std::vector<std::string> out = fragmentOf(m, ep, MmaOperand::A, aRegs, ldmatrix);
  for (const std::string& l : fragmentOf(m, ep, MmaOperand::B, bRegs, ldmatrix)) out.push_back(l);
  return out;
}

// The lane's indices the fragment lines use.
std::string laneLine(const MmaTile& m) {
  return m.tf32 ? "const long long tsr_g = threadIdx.x >> 2, tsr_t = threadIdx.x & 3;" : "const long long tsr_lane = threadIdx.x & 31;";
}

std::vector<std::string> registerNames(const std::string& prefix, int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The accumulator operands: this lane's rows (g, g + 8) and columns (2t, 2t + 1), by their lane counters.
std::string accumulatorOperands(const MmaTile& m, const ExprPrinter& ep) {
  std::string accs;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) {
      std::map<std::string, Expr> at = {{mmaLaneIndex(m.row->h.var), intImm(r)}, {mmaLaneIndex(m.col->h.var), intImm(c)}};
      std::vector<Expr> idx;
      for (const Expr& e : m.red->indices) idx.push_back(substitute(e, at));
      accs += std::string(accs.empty() ? "" : ", ") + "\"+f\"(" + identifier(m.red->buffer) + "[" + ep.linear(m.red->buffer, idx) + "])";
    }
  return accs;
}

// The mma instruction on registers aRegs, bRegs into the tile's accumulators.
std::vector<std::string> mmaLines(const MmaTile& m, const ExprPrinter& ep, const std::vector<std::string>& aRegs,
                                  const std::vector<std::string>& bRegs) {
  std::string type = m.tf32 ? "tf32" : m.a->dtype == DType::BF16 ? "bf16" : "f16";
  std::string shape = m.tf32 ? "m16n8k8" : "m16n8k16";
  std::string inputs;
  for (const std::string& r : aRegs) inputs += std::string(inputs.empty() ? "" : ", ") + "\"r\"(" + r + ")";
  for (const std::string& r : bRegs) inputs += ", \"r\"(" + r + ")";
  return {"asm(\"mma.sync.aligned." + shape + ".row.col.f32." + type + "." + type +
              ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"",
          "    : " + accumulatorOperands(m, ep), "    : " + inputs + ");"};
}

std::string tileComment(const MmaTile& m) {
  std::string type = m.a->dtype == DType::BF16 ? "bf16" : "f16";
  return identifier(m.row->h.var) + " x " + identifier(m.col->h.var) + " x " + identifier(m.depth->h.var) +
         " as one tensor-core mma.sync " + (m.tf32 ? "m16n8k8 (f32 operands rounded to tf32" : "m16n8k16 (" + type + " operands") +
         ", f32 accumulator)";
}

}  // namespace

bool Generator::tryMma(const ForStmt& row) {
  std::optional<MmaTile> m = matchMma(row, ep_, k_.params);
  if (!m) return false;
  const auto& prov = m->red->provenance;
  line("{  // " + tileComment(*m), prov);
  ++indent_;
  line(laneLine(*m), prov);
  std::vector<std::string> aRegs = registerNames("tsr_a", 4), bRegs = registerNames("tsr_b", 2);
  line("unsigned " + joined(aRegs) + ", " + joined(bRegs) + ";", prov);
  for (const std::string& l : fragmentLines(*m, ep_, aRegs, bRegs, ldmatrixEnabled(k_.params))) line(l, prov);
  if (m->tf32) out_.precision = "tf32";
  for (const std::string& l : mmaLines(*m, ep_, aRegs, bRegs)) line(l, prov);
  --indent_;
  line("}", prov);
  return true;
}

namespace {

// Two unrolled loops around one mma tile, A's fragment indexed by one of them (aLoop) and B's by the
// other: a warp's tiles, whose fragments are loaded once per k-step rather than once per tile.
struct MmaNest {
  const ForStmt *outer, *inner, *aLoop, *bLoop;
  MmaTile tile;
};

bool plainLoop(const ForStmt* f) {
  return f && (f->h.loopKind == LoopKind::Serial || f->h.loopKind == LoopKind::Unrolled) && !f->h.reduction &&
         f->h.pipelineStages <= 1 && f->h.extent <= 16;
}

std::optional<MmaNest> matchMmaNest(const ForStmt& outer, const ExprPrinter& ep, const std::map<std::string, int64_t>& params) {
  const ForStmt* inner = innerLoop(outer.body);
  if (!plainLoop(&outer) || !plainLoop(inner)) return std::nullopt;
  const ForStmt* row = innerLoop(inner->body);
  if (!row || row->h.loopKind != LoopKind::Bound || row->h.tag != ThreadTag::MmaRow) return std::nullopt;
  std::optional<MmaTile> m = matchMma(*row, ep, params);
  if (!m) return std::nullopt;
  auto uses = [](const Load* ld, const ForStmt* f) { return usesAnyVar(ld->indices, f->h.var); };
  const ForStmt *aLoop = &outer, *bLoop = inner;
  if (uses(m->a, inner) || uses(m->b, &outer)) std::swap(aLoop, bLoop);
  if (uses(m->a, bLoop) || uses(m->b, aLoop)) return std::nullopt;
  return MmaNest{&outer, inner, aLoop, bLoop, *m};
}

std::vector<std::string> registerRow(const std::string& array, const std::string& index, int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back(array + "[" + index + "][" + std::to_string(i) + "]");
  return names;
}

}  // namespace

bool Generator::mmaNest(const ForStmt& outer) {
  if (!ldmatrixEnabled(k_.params)) return false;
  std::optional<MmaNest> n = matchMmaNest(outer, ep_, k_.params);
  if (!n) return false;
  const MmaTile& m = n->tile;
  const auto& prov = m.red->provenance;
  std::string av = identifier(n->aLoop->h.var), bv = identifier(n->bLoop->h.var);
  auto header = [&](const ForStmt& f) {
    std::string v = identifier(f.h.var);
    line("#pragma unroll", f.provenance);
    line("for (long long " + v + " = 0; " + v + " < " + std::to_string(f.h.extent) + "; ++" + v + ") {", f.provenance);
    ++indent_;
  };
  auto close = [&](const ForStmt& f) {
    --indent_;
    line("}", f.provenance);
  };
  line("{  // " + identifier(outer.h.var) + " x " + identifier(n->inner->h.var) + " tiles, each " + tileComment(m) +
           "; fragments loaded once: A per " + av + ", B per " + bv,
       prov);
  ++indent_;
  line(laneLine(m), prov);
  line("unsigned tsr_fa[" + std::to_string(n->aLoop->h.extent) + "][4], tsr_fb[" + std::to_string(n->bLoop->h.extent) + "][2];", prov);
  header(*n->aLoop);
  for (const std::string& l : fragmentOf(m, ep_, MmaOperand::A, registerRow("tsr_fa", av, 4), true)) line(l, prov);
  close(*n->aLoop);
  if (m.tf32) out_.precision = "tf32";
  std::optional<bool> bTrans = m.tf32 ? std::nullopt : ldmatrixForm(m, ep_, MmaOperand::B);
  if (ldmatrixParam(k_.params) == 2 && bTrans && n->bLoop->h.extent % 2 == 0) {
    // ldmatrix = 2: B's n-tiles in pairs, one .x4 each (lanes 16..31 address tile j + 1).
    std::string e = std::to_string(n->bLoop->h.extent);
    line("#pragma unroll", n->bLoop->provenance);
    line("for (long long " + bv + " = 0; " + bv + " < " + e + "; " + bv + " += 2) {  // n-tiles " + bv + " and " + bv + " + 1",
         n->bLoop->provenance);
    ++indent_;
    std::vector<std::string> regs = registerRow("tsr_fb", bv, 2), next = registerRow("tsr_fb", bv + " + 1", 2);
    regs.insert(regs.end(), next.begin(), next.end());
    const std::string& j = n->bLoop->h.var;
    line(ldmatrixLine(m, ep_, MmaOperand::B, *bTrans, regs, {{j, add(var(j), pairedTile<Expr>(var("tsr_lane")))}}), prov);
    for (const std::string& l : depthMaskLines(m, ep_, MmaOperand::B, regs)) line(l, prov);
    close(*n->bLoop);
  } else {
    header(*n->bLoop);
    for (const std::string& l : fragmentOf(m, ep_, MmaOperand::B, registerRow("tsr_fb", bv, 2), true)) line(l, prov);
    close(*n->bLoop);
  }
  header(outer);
  header(*n->inner);
  for (const std::string& l : mmaLines(m, ep_, registerRow("tsr_fa", av, 4), registerRow("tsr_fb", bv, 2))) line(l, prov);
  close(*n->inner);
  close(outer);
  --indent_;
  line("}", prov);
  return true;
}

}  // namespace tessera::codegen::detail
