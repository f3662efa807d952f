#pragma once
// Random valid graphs for differential fuzzing: a few graph inputs, then a chain of ops drawn from the families
// that have lowerings (elementwise with broadcasting, reductions, softmax and layernorm, MatMul and Gemm, Conv,
// pools, Transpose, Reshape, Slice, Concat, Gather), with random shapes (zero-size dims included), dtypes and
// attributes (negative axes included). Every op goes through type inference as it is added; a draw that
// inference refuses is drawn again, so what comes out is valid by construction. The same seed gives the same graph.
#include <cstdint>

#include "ir/graph.h"

namespace tessera::fuzz {

struct GenOptions {
  int minOps = 2, maxOps = 8;  // ops drawn (helpers such as a Where's condition come on top)
  int maxRank = 4;
  bool zeroSizeDims = true;    // now and then a dimension of 0
};

Graph generateGraph(uint64_t seed, const GenOptions& options = {});

}  // namespace tessera::fuzz
