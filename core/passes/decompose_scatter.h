#pragma once
// Internal to the decompose pass: a scatter (ScatterElements, Scatter, ScatterND) with constant indices and
// reduction none as a gather, which runs as a generated data-movement kernel (before: a host group). PyTorch's
// slice and index assignments export as such scatters once their index arithmetic is folded.
#include "ir/graph.h"

namespace tessera {

// Gather(Concat(updates flattened, data flattened), map): map holds, for each output element, the last update
// written to it, or its own element of data past the updates; computed here from the constant indices with the
// reference's own target enumeration (ops/scatter.h), so last-write-wins is the reference's. Nullptr (the node
// stays whole) for a reduction, indices not constant or out of range, or data over 2^24 elements (the map is a
// constant of 4 bytes an element).
Value* scatterAsGather(Graph& graph, const Node& scatter);

}  // namespace tessera
