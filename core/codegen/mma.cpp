// Loops bound to the mma lanes (kernel_ir.h, ThreadTag::MmaRow/MmaCol). Each lane runs 2 of the 16 rows and 2
// of the 8 columns of the tile, in the layout of the m16n8k16 tensor-core instruction's accumulator; when the
// tile's body is exactly a 16-deep sum of products of two 16-bit operands into an f32 register accumulator,
// the whole tile is one `mma.sync` m16n8k16 (docs/codegen.md, Tensor cores). With the kernel's parameter
// tf32 = 1, an 8-deep sum of products of two f32 operands is one m16n8k8 on operands rounded to tf32 (the
// same accumulator layout). Anything else runs as the plain loops.
#include <map>
#include <optional>

#include "codegen/generator.h"
#include "codegen/thread_registers.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

Stmt unwrapBlocks(Stmt s) {
  while (s->kind == StmtKind::Block && static_cast<BlockStmt&>(*s).stmts.size() == 1) s = static_cast<BlockStmt&>(*s).stmts[0];
  return s;
}

const Load* operandLoad(const Expr& e) {
  const ExprNode* n = e.get();
  if (n->kind == ExprKind::Cast) n = static_cast<const Cast&>(*n).a.get();
  return n->kind == ExprKind::Load ? static_cast<const Load*>(n) : nullptr;
}

bool usesAnyVar(const std::vector<Expr>& idx, const std::string& name) {
  for (const Expr& e : idx)
    if (usesVar(e, name)) return true;
  return false;
}

}  // namespace

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

// A tile the tensor cores compute as one instruction: the lane loops, the depth loop directly inside them, and
// its one statement `acc sum= A * B`.
struct MmaTile {
  const ForStmt *row, *col, *depth;
  const ReduceStmt* red;
  const Load *a, *b;
  bool tf32;  // f32 operands rounded to tf32 (m16n8k8); else f16/bf16 operands (m16n8k16)
};

const ForStmt* innerLoop(const Stmt& body) {
  Stmt s = unwrapBlocks(body);
  return s->kind == StmtKind::For ? static_cast<const ForStmt*>(s.get()) : nullptr;
}

std::optional<MmaTile> matchMma(const ForStmt& row, const ExprPrinter& ep, const std::map<std::string, int64_t>& params) {
  const ForStmt* col = innerLoop(row.body);
  if (!col || col->h.loopKind != LoopKind::Bound || col->h.tag != ThreadTag::MmaCol) return std::nullopt;
  const ForStmt* depth = innerLoop(col->body);
  if (!depth || !depth->h.reduction || depth->h.loopKind == LoopKind::Bound) return std::nullopt;
  Stmt s = unwrapBlocks(depth->body);
  if (s->kind != StmtKind::Reduce) return std::nullopt;
  const auto& red = static_cast<const ReduceStmt&>(*s);
  const Buffer& acc = ep.buffer(red.buffer);
  if (red.op != ReduceOp::Sum || acc.dtype != DType::F32 || acc.scope != MemScope::Register) return std::nullopt;
  if (red.value->kind != ExprKind::Binary || static_cast<const Binary&>(*red.value).op != BinaryOp::Mul) return std::nullopt;
  const auto& product = static_cast<const Binary&>(*red.value);
  const Load* a = operandLoad(product.a);
  const Load* b = operandLoad(product.b);
  if (!a || !b || a->dtype != b->dtype) return std::nullopt;
  // f32 operands go to the tensor cores only when the schedule chose tf32 (a loss of precision, never implied).
  auto tf32 = params.find("tf32");
  bool f32 = a->dtype == DType::F32 && tf32 != params.end() && tf32->second != 0;
  if (!f32 && a->dtype != DType::BF16 && a->dtype != DType::F16) return std::nullopt;
  if (depth->h.extent != (f32 ? 8 : 16)) return std::nullopt;
  // A is indexed by the rows and the depth, B by the depth and the columns: a matrix product.
  if (usesAnyVar(a->indices, col->h.var) || usesAnyVar(b->indices, row.h.var)) return std::nullopt;
  if (usesAnyVar(red.indices, depth->h.var)) return std::nullopt;
  return MmaTile{&row, col, depth, &red, a, b, f32};
}

// The lines that fill registers tsr_a0..3 and tsr_b0..1 with this lane's fragments (tsr_g = lane / 4, tsr_t =
// lane % 4), the layouts of the PTX ISA's mma.m16n8k16 (16-bit) and mma.m16n8k8 .tf32 fragments.
std::vector<std::string> fragmentLines(const MmaTile& m, const ExprPrinter& ep) {
  auto element = [&](const Load& ld, Expr r, Expr c, Expr k) {
    std::map<std::string, Expr> at = {{m.row->h.var, r}, {m.col->h.var, c}, {m.depth->h.var, k}};
    std::vector<Expr> idx;
    for (const Expr& e : ld.indices) idx.push_back(substitute(e, at));
    return identifier(ld.buffer) + "[" + ep.linear(ld.buffer, idx) + "]";
  };
  Expr g = var("tsr_g"), t = var("tsr_t"), t2 = mul(t, intImm(2));
  std::vector<std::string> out;
  if (m.tf32) {
    // One element a register: A register i holds row g + 8 (i & 1), depth t + 4 (i >> 1); B register j holds
    // depth t + 4j, column g. cvt.rna rounds to nearest, ties away from zero.
    auto tf32Reg = [&](const std::string& name, const std::string& value) {
      out.push_back("unsigned " + name + ";");
      out.push_back("asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(" + name + ") : \"f\"(" + value + "));");
    };
    for (int i = 0; i < 4; ++i)
      tf32Reg("tsr_a" + std::to_string(i), element(*m.a, add(g, intImm(8 * (i & 1))), intImm(0), add(t, intImm(4 * (i >> 1)))));
    for (int j = 0; j < 2; ++j) tf32Reg("tsr_b" + std::to_string(j), element(*m.b, intImm(0), g, add(t, intImm(4 * j))));
    return out;
  }
  // A fragment: register i holds rows g + 8 (i & 1), depths 2t + 8 (i >> 1) and the next one.
  for (int i = 0; i < 4; ++i) {
    Expr r = add(g, intImm(8 * (i & 1))), k = add(t2, intImm(8 * (i >> 1)));
    out.push_back("const unsigned tsr_a" + std::to_string(i) + " = tsr_pack2(" + element(*m.a, r, intImm(0), k) + ", " +
                  element(*m.a, r, intImm(0), add(k, intImm(1))) + ");");
  }
  // B fragment: register j holds depths 2t + 8j and the next one, column g.
  for (int j = 0; j < 2; ++j) {
    Expr k = add(t2, intImm(8 * j));
    out.push_back("const unsigned tsr_b" + std::to_string(j) + " = tsr_pack2(" + element(*m.b, intImm(0), g, k) + ", " +
                  element(*m.b, intImm(0), g, add(k, intImm(1))) + ");");
  }
  return out;
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

}  // namespace

bool Generator::tryMma(const ForStmt& row) {
  std::optional<MmaTile> m = matchMma(row, ep_, k_.params);
  if (!m) return false;
  const auto& prov = m->red->provenance;
  std::string type = m->tf32 ? "tf32" : m->a->dtype == DType::BF16 ? "bf16" : "f16";
  std::string shape = m->tf32 ? "m16n8k8" : "m16n8k16";
  line("{  // " + identifier(row.h.var) + " x " + identifier(m->col->h.var) + " x " + identifier(m->depth->h.var) +
           " as one tensor-core mma.sync " + shape + " (" + (m->tf32 ? "f32 operands rounded to tf32" : type + " operands") +
           ", f32 accumulator)",
       prov);
  ++indent_;
  line("const long long tsr_g = threadIdx.x >> 2, tsr_t = threadIdx.x & 3;", prov);
  for (const std::string& l : fragmentLines(*m, ep_)) line(l, prov);
  if (m->tf32) out_.precision = "tf32";
  line("asm(\"mma.sync.aligned." + shape + ".row.col.f32." + type + "." + type +
           ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"",
       prov);
  line("    : " + accumulatorOperands(*m, ep_), prov);
  line("    : \"r\"(tsr_a0), \"r\"(tsr_a1), \"r\"(tsr_a2), \"r\"(tsr_a3), \"r\"(tsr_b0), \"r\"(tsr_b1));", prov);
  --indent_;
  line("}", prov);
  return true;
}

}  // namespace tessera::codegen::detail
