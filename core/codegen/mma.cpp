// Loops bound to the mma lanes (kernel_ir.h, ThreadTag::MmaRow/MmaCol). Each lane runs 2 of the 16 rows and 2
// of the 8 columns of the tile, in the layout of the m16n8k16 tensor-core instruction's accumulator; when the
// tile's body is exactly a 16-deep sum of products of two 16-bit operands into an f32 register accumulator,
// the whole tile is one `mma.sync` m16n8k16 (docs/codegen.md, Tensor cores). With the kernel's parameter
// tf32 = 1, an 8-deep sum of products of two f32 operands is one m16n8k8 on operands rounded to tf32 (the
// same accumulator layout). Anything else runs as the plain loops.
#include <map>

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

bool Generator::tryMma(const ForStmt& row) {
  Stmt s = unwrapBlocks(row.body);
  if (s->kind != StmtKind::For) return false;
  const auto& col = static_cast<const ForStmt&>(*s);
  if (col.h.loopKind != LoopKind::Bound || col.h.tag != ThreadTag::MmaCol) return false;
  s = unwrapBlocks(col.body);
  if (s->kind != StmtKind::For) return false;
  const auto& depth = static_cast<const ForStmt&>(*s);
  if (!depth.h.reduction || depth.h.loopKind == LoopKind::Bound) return false;
  s = unwrapBlocks(depth.body);
  if (s->kind != StmtKind::Reduce) return false;
  const auto& red = static_cast<const ReduceStmt&>(*s);
  const Buffer& acc = ep_.buffer(red.buffer);
  if (red.op != ReduceOp::Sum || acc.dtype != DType::F32 || acc.scope != MemScope::Register) return false;
  if (red.value->kind != ExprKind::Binary || static_cast<const Binary&>(*red.value).op != BinaryOp::Mul) return false;
  const auto& product = static_cast<const Binary&>(*red.value);
  const Load* a = operandLoad(product.a);
  const Load* b = operandLoad(product.b);
  if (!a || !b || a->dtype != b->dtype) return false;
  // f32 operands go to the tensor cores only when the schedule chose tf32 (a loss of precision, never implied).
  auto tf32 = k_.params.find("tf32");
  bool f32 = a->dtype == DType::F32 && tf32 != k_.params.end() && tf32->second != 0;
  if (!f32 && a->dtype != DType::BF16 && a->dtype != DType::F16) return false;
  if (depth.h.extent != (f32 ? 8 : 16)) return false;
  // A is indexed by the rows and the depth, B by the depth and the columns: a matrix product.
  if (usesAnyVar(a->indices, col.h.var) || usesAnyVar(b->indices, row.h.var)) return false;
  if (usesAnyVar(red.indices, depth.h.var)) return false;
  const auto& prov = red.provenance;
  auto element = [&](const Load& ld, Expr r, Expr c, Expr k) {
    std::map<std::string, Expr> at = {{row.h.var, r}, {col.h.var, c}, {depth.h.var, k}};
    std::vector<Expr> idx;
    for (const Expr& e : ld.indices) idx.push_back(substitute(e, at));
    return identifier(ld.buffer) + "[" + ep_.linear(ld.buffer, idx) + "]";
  };
  Expr g = var("tsr_g"), t = var("tsr_t"), t2 = mul(t, intImm(2));
  std::string type = f32 ? "tf32" : a->dtype == DType::BF16 ? "bf16" : "f16";
  std::string shape = f32 ? "m16n8k8" : "m16n8k16";
  line("{  // " + identifier(row.h.var) + " x " + identifier(col.h.var) + " x " + identifier(depth.h.var) +
           " as one tensor-core mma.sync " + shape + " (" + (f32 ? "f32 operands rounded to tf32" : type + " operands") +
           ", f32 accumulator)",
       prov);
  ++indent_;
  line("const long long tsr_g = threadIdx.x >> 2, tsr_t = threadIdx.x & 3;", prov);
  if (f32) {
    // tf32 fragments, one element a register (PTX ISA, mma.m16n8k8 .tf32): A register i holds row g + 8 (i & 1),
    // depth t + 4 (i >> 1); B register j holds depth t + 4j, column g. cvt.rna rounds to nearest, ties away.
    auto tf32Reg = [&](const std::string& name, const std::string& value) {
      line("unsigned " + name + ";", prov);
      line("asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(" + name + ") : \"f\"(" + value + "));", prov);
    };
    for (int i = 0; i < 4; ++i)
      tf32Reg("tsr_a" + std::to_string(i), element(*a, add(g, intImm(8 * (i & 1))), intImm(0), add(t, intImm(4 * (i >> 1)))));
    for (int j = 0; j < 2; ++j) tf32Reg("tsr_b" + std::to_string(j), element(*b, intImm(0), g, add(t, intImm(4 * j))));
    out_.precision = "tf32";
  } else {
    // A fragment: register i holds rows g + 8 (i & 1), depths 2t + 8 (i >> 1) and the next one.
    for (int i = 0; i < 4; ++i) {
      Expr r = add(g, intImm(8 * (i & 1))), k = add(t2, intImm(8 * (i >> 1)));
      line("const unsigned tsr_a" + std::to_string(i) + " = tsr_pack2(" + element(*a, r, intImm(0), k) + ", " +
               element(*a, r, intImm(0), add(k, intImm(1))) + ");",
           prov);
    }
    // B fragment: register j holds depths 2t + 8j and the next one, column g.
    for (int j = 0; j < 2; ++j) {
      Expr k = add(t2, intImm(8 * j));
      line("const unsigned tsr_b" + std::to_string(j) + " = tsr_pack2(" + element(*b, intImm(0), g, k) + ", " +
               element(*b, intImm(0), g, add(k, intImm(1))) + ");",
           prov);
    }
  }
  // The accumulator: this lane's rows (g, g + 8) and columns (2t, 2t + 1), by their lane counters.
  std::string accs;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) {
      std::map<std::string, Expr> at = {{mmaLaneIndex(row.h.var), intImm(r)}, {mmaLaneIndex(col.h.var), intImm(c)}};
      std::vector<Expr> idx;
      for (const Expr& e : red.indices) idx.push_back(substitute(e, at));
      accs += std::string(accs.empty() ? "" : ", ") + "\"+f\"(" + identifier(red.buffer) + "[" + ep_.linear(red.buffer, idx) + "])";
    }
  line("asm(\"mma.sync.aligned." + shape + ".row.col.f32." + type + "." + type +
           ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"",
       prov);
  line("    : " + accs, prov);
  line("    : \"r\"(tsr_a0), \"r\"(tsr_a1), \"r\"(tsr_a2), \"r\"(tsr_a3), \"r\"(tsr_b0), \"r\"(tsr_b1));", prov);
  --indent_;
  line("}", prov);
  return true;
}

}  // namespace tessera::codegen::detail
