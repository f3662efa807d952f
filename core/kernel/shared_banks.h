#pragma once
// Shared memory's banks: how many wavefronts a warp's shared-memory access takes. There are 32 banks of 4
// bytes; a warp's access takes as many wavefronts as the most distinct 4-byte words any one bank is asked
// for (lanes reading the same word share it). Used by the conv's mma defaults to pad its halo tile, and by
// the cost model to price a fragment's reads.
#include <cstdint>
#include <functional>
#include <vector>

namespace tessera::kernel {

// Wavefronts of one warp access whose lanes read the 4-byte words at these byte addresses (1 for none).
int64_t sharedWavefronts(const std::vector<int64_t>& byteAddresses);

// Where register `reg` of lane `lane` of a tf32 m16n8k8 fragment lies in its tile (PTX ISA): A's registers
// 0..3 at row g + 8 (reg & 1), depth t + 4 (reg >> 1); B's 0..1 at column g, depth t + 4 reg (g = lane / 4,
// t = lane % 4). Scalar fragment loads (tf32 has no ldmatrix here) read exactly these elements.
struct FragmentPlace {
  int64_t outer = 0, depth = 0;  // A's row or B's column; the depth
};
FragmentPlace tf32FragmentPlace(bool operandA, int64_t lane, int reg);

// Wavefronts per load of a tf32 fragment whose element at `place` lies at byte address byteAddressOf(place),
// averaged over the registers (A's 4, B's 2).
double tf32FragmentWavefronts(bool operandA, const std::function<int64_t(const FragmentPlace&)>& byteAddressOf);

// Wavefronts per load of a tf32 fragment of an operand tile stored in rows of `rowElems` 4-byte elements, its
// depth along each row (A [m][k], a transposed B [n][k]) or down the rows (B [k][n], A stored [k][m]), averaged
// over the registers: the gemm's mma defaults pad each operand's rows by it. Unpadded 16-deep A rows and 64-wide
// B rows both take 4 (g or t 16 and 64 words apart); 20 and 72, 1.
double tf32OperandWavefronts(bool operandA, bool depthAlongRow, int64_t rowElems);

// The input's halo tile of the conv's mma form (templates/template_conv.cpp) as its A fragments read it:
// stored channels x rows x columns, the tile_h x tile_w output pixels fused into the rows of 16-row mma tiles
// (pixel p is (p / tileW, p % tileW)), pixel (y, x) at tap (i, j) reading row y·strideH + i·dilationH and
// column x·strideW + j·dilationW.
struct HaloReads {
  int64_t tileH = 1, tileW = 1;  // the block's pixel tile
  int64_t rows = 1, cols = 1;    // the halo tile's rows and columns, unpadded
  int64_t kh = 1, kw = 1, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int64_t elementBytes = 4;  // 4: tf32's m16n8k8 fragments (an element a register); 2: f16 or bf16's m16n8k16
  // Columns stored by phase (deinterleave): column x at (x % phases) · ⌈cols / phases⌉ + x / phases, so a
  // strided conv's lanes read consecutive words; 1: in order.
  int64_t phases = 1;
};

// Wavefronts per fragment load, averaged over the taps, the pixel tiles and the registers, with each row of the
// halo widened by `pad` elements and each plane by `padRows` rows (cache_read pad, pad_rows). 1 is
// conflict-free. Lanes whose pixel is past the tile (the last mma tile's unused rows) are left out.
double haloFragmentWavefronts(const HaloReads& h, int64_t pad, int64_t padRows);

}  // namespace tessera::kernel
