#pragma once
// Internal to the decompose pass: TopK as ranks counted by comparison, which lower to two row kernels and a
// gather (before: a host group). Each element's rank is the number of elements ordered before it; the output
// at rank r is the element whose rank is r. The work is quadratic in the axis, every pair compared, so it is
// kept to axes short enough that this beats a sort on the host: a mixture-of-experts router's choice among its
// experts, a classifier's top five classes; a detector's thousands of boxes or a vocabulary stay on the host.
#include <vector>

#include "ir/graph.h"

namespace tessera {

inline constexpr int64_t kTopKMaxKernelAxis = 256;

// {values, indices} equal to the reference's (ops/topk.cpp) element for element: the order is the reference's
// (larger first, or smaller with largest=0; NaN after +inf, as PyTorch orders it; ties by the lower index), so
// ranks are a permutation and every output position finds its element. Empty when the node keeps its form: an
// axis over kTopKMaxKernelAxis, K = 0, an element type generated code does not compare.
std::vector<Value*> topkAsRanks(Graph& graph, const Node& topk);

}  // namespace tessera
