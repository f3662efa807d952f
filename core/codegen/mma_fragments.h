#pragma once
// Internal: where the registers of an m16n8k16 operand fragment (16-bit elements) come from, written once as
// templates over the number type so the generator spells them as kernel-IR expressions (of tsr_g, tsr_t or
// tsr_lane) and tests evaluate them on integers, lane by lane (tests/codegen/test_ldmatrix.cpp).
//
// An operand's element is named by its `outer` index (A: the row, B: the column) and its depth. Register i
// of the PTX ISA layout holds two elements of the 8 x 8 block at outer blockOuter(i), depth blockDepth(i): the
// lane's group g = lane / 4 is its outer offset in the block, depths 2t and 2t + 1 (t = lane % 4) its halves.
// ldmatrix's 8 x 8 matrix i is that block (lanes 8i..8i+7 give its row addresses), so one ldmatrix fills all
// of an operand's registers: .x4 for A's four, .x2 for B's two.
#include <cstdint>

#include "kernel/kernel_ir.h"

namespace tessera::codegen::detail {

enum class MmaOperand { A, B };

inline int fragmentRegisters(MmaOperand op) { return op == MmaOperand::A ? 4 : 2; }
inline int64_t blockOuter(MmaOperand op, int reg) { return op == MmaOperand::A ? 8 * (reg & 1) : 0; }
inline int64_t blockDepth(MmaOperand op, int reg) { return op == MmaOperand::A ? 8 * (reg >> 1) : 8 * reg; }

// Integer twins of the kernel IR's expression builders, so the templates below run on either.
using kernel::add, kernel::mul, kernel::idiv, kernel::imod;
inline int64_t add(int64_t a, int64_t b) { return a + b; }
inline int64_t mul(int64_t a, int64_t b) { return a * b; }
inline int64_t idiv(int64_t a, int64_t b) { return a / b; }
inline int64_t imod(int64_t a, int64_t b) { return a % b; }
inline int64_t constant(int64_t v, int64_t) { return v; }
inline kernel::Expr constant(int64_t v, const kernel::Expr&) { return kernel::intImm(v); }

template <class N>
struct ElementAt {
  N outer, depth;
};

// The element in half `half` (0: low 16 bits) of register `reg` of lane `lane` (the PTX ISA layout).
template <class N>
ElementAt<N> fragmentElement(MmaOperand op, const N& lane, int reg, int half) {
  N g = idiv(lane, constant(4, lane)), t = imod(lane, constant(4, lane));
  return {add(g, constant(blockOuter(op, reg), lane)),
          add(add(mul(t, constant(2, lane)), constant(half, lane)), constant(blockDepth(op, reg), lane))};
}

// The first element of the 8-element row whose address `lane` gives to ldmatrix: matrix m = (lane / 8) modulo
// the register count (the .x2 form ignores lanes 16..31; they repeat 0..15 so every address stays valid), its
// row r = lane % 8. The rows run along the depth when the operand is contiguous in depth (plain ldmatrix), along
// the outer index when it is contiguous there (.trans: each matrix arrives transposed).
template <class N>
ElementAt<N> ldmatrixRowStart(MmaOperand op, bool trans, const N& lane) {
  N m = imod(idiv(lane, constant(8, lane)), constant(fragmentRegisters(op), lane)), r = imod(lane, constant(8, lane));
  // blockOuter / blockDepth of matrix m, as arithmetic on m (A: 8 (m % 2), 8 (m / 2); B: 0, 8 m).
  N outer = op == MmaOperand::A ? mul(imod(m, constant(2, lane)), constant(8, lane)) : constant(0, lane);
  N depth = op == MmaOperand::A ? mul(idiv(m, constant(2, lane)), constant(8, lane)) : mul(m, constant(8, lane));
  if (trans) return {outer, add(depth, r)};
  return {add(outer, r), depth};
}

// B fragments of two neighbouring tiles (n-tiles j and j + 1) in one ldmatrix .x4: lanes 0..15 give tile j's
// rows as for .x2 (registers 0, 1), lanes 16..31 the same rows of tile j + pairedTile(lane) = j + 1
// (registers 2, 3).
template <class N>
N pairedTile(const N& lane) {
  return idiv(lane, constant(16, lane));
}

}  // namespace tessera::codegen::detail
