#pragma once
// Where ScatterElements (and its opset-9 name Scatter) and ScatterND write: shared by their reference semantics
// and the decompose pass, which turns a scatter by constant indices into a gather (passes/decompose_scatter.h).
#include <vector>

#include "ir/graph.h"

namespace tessera::ops {

bool isScatterOp(const std::string& op);  // ScatterElements, Scatter, ScatterND

// For each element of `updates`, in its row-major order, the flat offset in `data` it is written to; a later
// element with the same target overwrites (or combines with) an earlier one. Throws Error naming the node for an
// index out of range, as the reference does at run time.
std::vector<int64_t> scatterTargets(const Node& node, const Shape& data, const Shape& indicesShape,
                                    const std::vector<int64_t>& indices);

}  // namespace tessera::ops
