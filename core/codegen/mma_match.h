#pragma once
// Internal: the loops around a reduction that the tensor cores compute as one instruction (mma.cpp: one warp's
// mma.sync; wgmma.cpp: four warps' tiles as one warpgroup wgmma).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/c_types.h"

namespace tessera::codegen::detail {

// A tile the tensor cores compute as one instruction: the lane loops, the depth loop directly inside them, and
// its one statement `acc sum= A * B`.
struct MmaTile {
  const kernel::ForStmt *row, *col, *depth;
  const kernel::ReduceStmt* red;
  const kernel::Load *a, *b;
  bool tf32;  // f32 operands rounded to tf32 (m16n8k8); else f16/bf16 operands (m16n8k16)
  // How the f32 operands become tf32, by the tf32 parameter: 1 cvt.rna (to nearest); 2 the bits as they are,
  // the mma reading the top 19 (a truncation, no instruction); 3 to nearest by an integer add on the bits.
  enum class Tf32Rounding { Cvt = 1, Truncate = 2, Add = 3 } tf32Rounding = Tf32Rounding::Cvt;
  // Guards on the depth (the last k step of a K that the steps do not divide: `k < K`). The mma computes all
  // its depth positions, so the fragments' elements at positions a guard leaves out are set to 0 in both
  // operands (their shared tiles hold stale values there): those products add nothing, as the IR says.
  std::vector<kernel::Expr> depthGuards;
};

// The tile whose row loop (bound to mma.row) is `row`: its column loop, the depth loop directly inside, and
// `acc sum= A * B` of 16-bit operands (8-deep f32 ones rounded to tf32 when params has tf32 = 1).
std::optional<MmaTile> matchMma(const kernel::ForStmt& row, const ExprPrinter& ep, const std::map<std::string, int64_t>& params);

// The operand a product reads (through a Cast), or null.
const kernel::Load* operandLoad(const kernel::Expr& e);
bool usesAnyVar(const std::vector<kernel::Expr>& idx, const std::string& name);
// The statement inside single-statement blocks and guards, the guards' conditions appended to `guards`.
kernel::Stmt unwrapGuards(const kernel::Stmt& body, std::vector<kernel::Expr>* guards);
// The loop that is the body (through blocks and guards), or null.
const kernel::ForStmt* innerLoop(const kernel::Stmt& body, std::vector<kernel::Expr>* guards = nullptr);

}  // namespace tessera::codegen::detail
