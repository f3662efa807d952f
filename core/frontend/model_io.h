#pragma once
// Load or save a model by file extension: .onnx or .tsr.
#include <map>
#include <string>

#include "ir/graph.h"

namespace tessera {

Graph loadModel(const std::string& path);
// An ONNX model whose data-dependent shapes are specialized on these values of its inputs, by name, rather than
// on the inputs a run feeds by default (ops/specialize.h); a .tsr file keeps the specialization it was written
// with.
Graph loadModel(const std::string& path, const std::map<std::string, Tensor>& sampleInputs);
void saveModel(const Graph& graph, const std::string& path);

}  // namespace tessera
