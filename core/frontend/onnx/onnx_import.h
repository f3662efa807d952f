#pragma once
// ONNX import and export (libonnx-dev + protobuf). Import accepts opsets 1–27 of the default domain and
// upgrades older operator forms (attribute operands such as axes, split, Clip bounds, Slice bounds, Reshape
// shape) to the latest form used by the op registry. Any malformed input gets an Error naming the file and
// the node, value or field at fault; no allocation is sized by the file without a bound.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace tessera {

struct OnnxImportOptions {
  // Data for graph inputs. An input whose value decides a shape (an operand in a registry schema's
  // shapeInputs, e.g. Reshape's shape) and that has data here becomes a constant, so the graph stays static.
  std::map<std::string, Tensor> inputData;
  // Values of graph inputs that data-dependent shapes (NonZero, NonMaxSuppression, ...) are specialized on
  // (ops/specialize.h): the inputs the model will run on. An input missing here takes randomInputs(graph, 0),
  // what a run feeds when it is given none.
  std::map<std::string, Tensor> sampleInputs;
  // Where initializers' external data files are (their locations are relative to it and may not leave it);
  // importOnnxFile uses the model's folder when this is empty, importOnnxBytes refuses external data then.
  std::string externalDataDir;
};

Graph importOnnxFile(const std::string& path, const OnnxImportOptions& options = {});
Graph importOnnxBytes(std::string_view bytes, const std::string& sourceName, const OnnxImportOptions& options = {});

// The graph inputs that are not initializers (names and types, in order) and the graph outputs' types, read
// from the file without importing it: how an ONNX backend test's input_N.pb and output_N.pb files map to values
// before OnnxImportOptions::inputData is built. Only a type's kind and a container's dtype are read (a tensor's
// type is f32[] here): what readValueFile needs.
struct OnnxSignature {
  std::vector<std::string> feeds;
  std::vector<TensorType> feedTypes, outputTypes;
};
OnnxSignature onnxSignature(const std::string& path);

// Writes a ModelProto (IR version 8, opset 18 of the default domain) holding the graph.
std::string exportOnnxBytes(const Graph& graph);
void exportOnnxFile(const Graph& graph, const std::string& path);

// One serialized TensorProto (the .pb files of ONNX backend tests).
Tensor readTensorProtoFile(const std::string& path);
Tensor parseTensorProto(std::string_view bytes, const std::string& sourceName);
// A TensorProto, or for a container type (a sequence or an optional) a SequenceProto or OptionalProto holding one
// of `declared`'s dtype.
Tensor readValueFile(const std::string& path, const TensorType& declared);
Tensor parseValueProto(std::string_view bytes, const std::string& sourceName, const TensorType& declared);
// The inverse of readValueFile: a TensorProto, SequenceProto or OptionalProto as the value's type says.
void writeValueFile(const Tensor& value, const std::string& name, const std::string& path);
void writeTensorProtoFile(const Tensor& tensor, const std::string& name, const std::string& path);

}  // namespace tessera
