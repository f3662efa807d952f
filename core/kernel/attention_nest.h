#pragma once
// The row of an attention kernel as lower_attention.cpp writes it (one query row, the keys visited once with
// the softmax online), read back from the body of the loop over the rows. The attention template asks it
// whether the tensor-core form applies; the CUDA generator (codegen/flash_attention.cpp) asks it where the
// operands, the pointwise chain between the products and the epilogue are.
#include <optional>
#include <string>
#include <vector>

#include "kernel/kernel_ir.h"

namespace tessera::kernel {

struct AttentionNest {
  std::vector<Expr> guards;         // conditions around the row (a split of the rows that does not divide)
  const ForStmt* keys = nullptr;    // j: over the keys, the softmax online
  const ForStmt* depth = nullptr;   // c: the score's sum over the head, inside the key loop
  const ForStmt* values = nullptr;  // d: o[d] = o[d]·alpha + p·v[j, d], inside the key loop
  const ForStmt* output = nullptr;  // d_out: y = o[d_out] / l, the group's epilogue and stores
  const Load *q = nullptr, *k = nullptr, *v = nullptr;  // the operand loads: q[.., i, c], kᵀ[c, j], v[j, d]
  std::string score, maximum, sum, context;             // register accumulators s, m, l and the row o
  std::vector<Stmt> chain;  // the statements between the score and the maximum: f(s), a scale or a mask
  Expr x;                   // f(s), the value the maximum takes in
};

// Null when `rowBody` is not such a row.
std::optional<AttentionNest> attentionNest(const Kernel& k, const Stmt& rowBody);

// Why the row cannot take the tensor-core form (mma.sync m16n8k16 for both products), "" when it can: q, kᵀ and
// v of one 16-bit type, heads of 16 to 128 in steps of 16, each operand's rows contiguous along the head
// (kᵀ read from k's rows, a folded Transpose), the keys and values read the same for every query row.
std::string tensorCoreRefusal(const Kernel& k, const AttentionNest& n);

// The first loop over the rows of the lowered attention kernel ("i"), whose body attentionNest reads.
const ForStmt* attentionRowLoop(const Kernel& k);

}  // namespace tessera::kernel
