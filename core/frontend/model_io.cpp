#include "frontend/model_io.h"

#include "frontend/onnx/onnx_import.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"

namespace tessera {

namespace {
bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

Graph loadModel(const std::string& path) { return loadModel(path, {}); }

Graph loadModel(const std::string& path, const std::map<std::string, Tensor>& sampleInputs) {
  if (endsWith(path, ".onnx")) {
    OnnxImportOptions options;
    options.sampleInputs = sampleInputs;
    return importOnnxFile(path, options);
  }
  if (endsWith(path, ".tsr")) return parseTsrFile(path);
  fail(path + ": unknown model format (expected a .onnx or .tsr file)");
}

void saveModel(const Graph& graph, const std::string& path) {
  if (endsWith(path, ".onnx")) return exportOnnxFile(graph, path);
  if (endsWith(path, ".tsr")) return writeTsrFile(graph, path);
  fail(path + ": unknown model format (expected a .onnx or .tsr file)");
}

}  // namespace tessera
