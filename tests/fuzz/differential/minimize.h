#pragma once
// Delta debugging of a failing case: drop overrides and parameters, drop graph outputs, cut nodes (their
// outputs become graph inputs), bypass nodes (their output replaced by a same-typed input), shrink the graph
// inputs' dims (to 1, then by half). A step is kept when the case still fails the same way; it stops when no
// step is kept or the evaluations run out.
#include <functional>

#include "fuzz_case.h"

namespace tessera::fuzz {

using StillFails = std::function<bool(const FuzzCase&)>;

struct MinimizeResult {
  FuzzCase smallest;
  int evaluations = 0, kept = 0;
};

MinimizeResult minimizeCase(const FuzzCase& failing, const StillFails& stillFails, int maxEvaluations);

}  // namespace tessera::fuzz
