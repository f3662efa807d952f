#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"
namespace tessera {
Graph importOnnxFile(const std::string& path, const OnnxImportOptions&) { fail(path + ": ONNX import not written yet"); }
Graph importOnnxBytes(std::string_view, const std::string& s, const OnnxImportOptions&) { fail(s + ": ONNX import not written yet"); }
std::string exportOnnxBytes(const Graph&) { fail("ONNX export not written yet"); }
void exportOnnxFile(const Graph&, const std::string& path) { fail(path + ": ONNX export not written yet"); }
Tensor readTensorProtoFile(const std::string& path) { fail(path + ": not written yet"); }
Tensor parseTensorProto(std::string_view, const std::string& s) { fail(s + ": not written yet"); }
void writeTensorProtoFile(const Tensor&, const std::string&, const std::string& path) { fail(path + ": not written yet"); }
}  // namespace tessera
