#pragma once
// Load or save a model by file extension: .onnx or .tsr.
#include <string>

#include "ir/graph.h"

namespace tessera {

Graph loadModel(const std::string& path);
void saveModel(const Graph& graph, const std::string& path);

}  // namespace tessera
