#pragma once
// The verifier: structure (cycles, dangling or foreign values, missing outputs, duplicate ids) and types
// (every output's type equals what its op infers). Each problem names the node or value at fault.
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessera {

std::vector<std::string> verifyGraph(const Graph& graph);
// Throws Error with the first problem.
void verifyOrThrow(const Graph& graph);

}  // namespace tessera
