#pragma once
// Internal to the ONNX frontend: conversions between protobuf messages and the IR, shared by import, export
// and the TensorProto file functions. Every function that reads a message checks it; `what` names the object
// in error messages ("initializer 'w'", "input 'x'").
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "ir/attribute.h"
#include "ir/tensor.h"

namespace tessera::onnxio {

// Files and messages above this size are rejected before reading (protobuf's own limit is 2 GiB).
inline constexpr int64_t kMaxProtoBytes = (int64_t(1) << 31) - 1;
// Messages nested deeper than this are refused. protobuf's default of 100 refused valid models: each If or Loop
// body costs three levels (node, attribute, graph), so bodies 33 deep did not parse. 1024 is about 340 bodies,
// and the parser's stack for it stays far below a thread's.
inline constexpr int kMaxProtoNesting = 1024;

// "FLOAT", "FLOAT8E4M3FN", ... for an ONNX TensorProto.DataType code; "code N" when unknown.
std::string onnxTypeName(int32_t code);
std::optional<DType> dtypeFromOnnx(int32_t code);
int32_t dtypeToOnnx(DType t);
// Throws "WHAT: element type NAME (CODE) is not supported" for anything outside Tessera's dtypes.
DType requireDType(int32_t code, const std::string& what);

// Checks extents (non-negative, total size within Tensor::kMaxTensorBytes) and returns the shape.
Shape checkedShape(const google::protobuf::RepeatedField<int64_t>& dims, DType dtype, const std::string& what);
void checkTensorSize(const Shape& shape, DType dtype, const std::string& what);

// `folder`: where external data (data_location EXTERNAL) is read from, the model's folder; "" refuses it.
Tensor tensorFromProto(const onnx::TensorProto& proto, const std::string& what, const std::string& folder = "");
// The external data of `proto` (external_data.cpp): its location must stay inside `folder`.
Tensor externalTensor(const onnx::TensorProto& proto, DType dtype, const Shape& shape, const std::string& folder,
                      const std::string& what);
void tensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto& proto);
// Sub-byte dtypes (ir/dtype.h packedBits) hold one value a byte in a Tensor and two or four a byte in files, the
// last byte partly used when the count does not divide. fileByteSize: the bytes of a type's data in a file
// (raw_data, external data); unpackValues reads `packed` (fileByteSize long, checked by the caller).
int64_t fileByteSize(const TensorType& type);
Tensor unpackValues(std::string_view packed, DType dtype, const Shape& shape);
std::string packValues(const Tensor& tensor);

Attribute attributeFromProto(const onnx::AttributeProto& proto, const std::string& what);
// A TYPE_PROTO attribute is imported as a string attribute holding the type's text (TensorType::toString); the
// exporter writes the one op attribute of that kind (Optional's `type`) back as a TypeProto.
std::string typeAttributeText(const onnx::TypeProto& tp, const std::string& what);
void typeAttributeToProto(const std::string& name, const std::string& text, onnx::AttributeProto& proto);
void attributeToProto(const std::string& name, const Attribute& attr, onnx::AttributeProto& proto);

// --- module scopes (module_scope.cpp) ---
// `name` under the module path a torch.export-based PyTorch export records in the node's metadata
// (`pkg.torch.onnx.name_scopes`): "/layer1/layer1.0/conv1/node_Conv_12". `name` itself when the node has no such
// metadata or its name has a '/' scope already.
std::string moduleScopedName(const onnx::NodeProto& np, const std::string& name);

// --- subgraphs (scope.cpp) ---

// How deep subgraphs may nest (a body in a body ...): a hostile file cannot recurse the importer without bound.
// (protobuf's own recursion limit stops a file at about 32 levels; real models nest two or three.)
inline constexpr int kMaxSubgraphDepth = 16;
bool isGraphAttribute(const onnx::AttributeProto& a);
// Names a graph reads but does not define (its nodes' inputs, its outputs, and what its nodes' subgraphs read
// and it does not define), in first-read order: the outer-scope values it captures. `depth` is its nesting
// level (the model's graph is 0); deeper than kMaxSubgraphDepth throws naming the subgraph.
std::vector<std::string> freeNames(const onnx::GraphProto& gp, int depth);
// The union of what the subgraphs of a node of a graph at `depth` capture: the node's extra inputs.
std::vector<std::string> nodeCaptures(const onnx::NodeProto& np, int depth);
// Names whose values decide a shape: operands listed in a schema's shapeInputs, those of the subgraphs of its
// nodes, and everything they are computed from (except through Shape and Size, which read only a type).
std::unordered_set<std::string> shapeFeedingNames(const onnx::GraphProto& gp, int depth);
// A value's declared type when it is a tensor of a Tessera dtype with a static shape, or a container of them.
std::optional<TensorType> declaredType(const onnx::ValueInfoProto& vi);

// --- containers (value_types.cpp) ---
// The container type (a sequence or optional of tensors, ir/shape.h) a TypeProto declares; nullopt for a tensor,
// a map, or an element dtype Tessera does not hold.
std::optional<TensorType> containerType(const onnx::TypeProto& tp);
// Any value type, a tensor's with its shape.
void typeToProto(const TensorType& t, onnx::TypeProto& tp);
// A SequenceProto or OptionalProto (as `declared`'s kind says) read as a container of `declared`'s dtype.
Tensor containerFromBytes(std::string_view bytes, const TensorType& declared, const std::string& what);
// Writes a container as the SequenceProto or OptionalProto containerFromBytes reads.
void writeContainer(const Tensor& value, const std::string& name, const std::string& path);

// Reads a whole file, refusing files over kMaxProtoBytes before allocating.
std::string readBoundedFile(const std::string& path);
// Writes one message as a file; throws "PATH: cannot write file".
void writeMessage(const google::protobuf::MessageLite& message, const std::string& path);
// Parses a size checked against kMaxProtoBytes, nested up to kMaxProtoNesting; throws "SOURCE: not a valid ONNX KIND".
void parseBounded(google::protobuf::MessageLite& message, std::string_view bytes, const std::string& source,
                  const std::string& kind);

}  // namespace tessera::onnxio
