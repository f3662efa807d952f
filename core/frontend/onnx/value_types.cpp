// ONNX's container values (sequences and optionals of tensors, ir/shape.h ValueKind): their TypeProtos and the
// SequenceProto / OptionalProto messages a backend test's data files hold.
#include <onnx/onnx-data_pb.h>

#include <set>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_proto.h"
#include "ir/error.h"

namespace tessera::onnxio {

namespace {

std::optional<DType> tensorElement(const onnx::TypeProto& tp) {
  if (!tp.has_tensor_type()) return std::nullopt;
  return dtypeFromOnnx(tp.tensor_type().elem_type());
}

// A sequence of tensors' element dtype; nullopt for anything else (a sequence of maps, of sequences, ...).
std::optional<DType> sequenceElement(const onnx::TypeProto& tp) {
  if (!tp.has_sequence_type() || !tp.sequence_type().has_elem_type()) return std::nullopt;
  return tensorElement(tp.sequence_type().elem_type());
}

}  // namespace

std::optional<TensorType> containerType(const onnx::TypeProto& tp) {
  if (auto e = sequenceElement(tp)) return TensorType::container(ValueKind::Sequence, *e);
  if (!tp.has_optional_type() || !tp.optional_type().has_elem_type()) return std::nullopt;
  const onnx::TypeProto& inner = tp.optional_type().elem_type();
  if (auto e = tensorElement(inner)) return TensorType::container(ValueKind::Optional, *e);
  if (auto e = sequenceElement(inner)) return TensorType::container(ValueKind::OptionalSequence, *e);
  return std::nullopt;
}

void typeToProto(const TensorType& t, onnx::TypeProto& tp) {
  onnx::TypeProto* tensor = &tp;
  if (t.isOptional()) tensor = tp.mutable_optional_type()->mutable_elem_type();
  if (t.isSequence()) tensor = tensor->mutable_sequence_type()->mutable_elem_type();
  auto* tt = tensor->mutable_tensor_type();
  tt->set_elem_type(dtypeToOnnx(t.dtype));
  if (!t.isTensor()) return;  // a container's element shapes are data, not type
  auto* shape = tt->mutable_shape();
  for (int64_t d : t.shape) shape->add_dim()->set_dim_value(d);
}

namespace {

Tensor sequenceFromProto(const onnx::SequenceProto& p, DType element, const std::string& what) {
  if (p.elem_type() != onnx::SequenceProto::TENSOR && p.tensor_values_size() == 0 && p.elem_type() != 0)
    fail(what + ": a sequence of " + onnx::SequenceProto::DataType_Name(p.elem_type()) + " values; Tessera's hold tensors");
  std::vector<Tensor> elements;
  for (int i = 0; i < p.tensor_values_size(); ++i) {
    elements.push_back(tensorFromProto(p.tensor_values(i), what + ": element " + std::to_string(i)));
    if (elements.back().dtype() != element)
      fail(what + ": element " + std::to_string(i) + " is " + elements.back().type().toString() +
           " but the model declares " + TensorType::container(ValueKind::Sequence, element).toString());
  }
  return Tensor::sequence(element, std::move(elements));
}

void sequenceToProto(const Tensor& seq, onnx::SequenceProto& p) {
  p.set_elem_type(onnx::SequenceProto::TENSOR);
  for (const Tensor& e : seq.elements()) tensorToProto(e, "", *p.add_tensor_values());
}

}  // namespace

void writeContainer(const Tensor& value, const std::string& name, const std::string& path) {
  if (value.type().kind == ValueKind::Sequence) {
    onnx::SequenceProto p;
    p.set_name(name);
    sequenceToProto(value, p);
    return writeMessage(p, path);
  }
  onnx::OptionalProto p;  // an empty one stays UNDEFINED, as ONNX's own test files write it
  p.set_name(name);
  if (!value.elements().empty() && value.type().isSequence()) {
    p.set_elem_type(onnx::OptionalProto::SEQUENCE);
    sequenceToProto(value.elements()[0], *p.mutable_sequence_value());
  } else if (!value.elements().empty()) {
    p.set_elem_type(onnx::OptionalProto::TENSOR);
    tensorToProto(value.elements()[0], "", *p.mutable_tensor_value());
  }
  writeMessage(p, path);
}

Tensor containerFromBytes(std::string_view bytes, const TensorType& declared, const std::string& what) {
  if (declared.kind == ValueKind::Sequence) {
    onnx::SequenceProto p;
    parseBounded(p, bytes, what, "ONNX SequenceProto");
    return sequenceFromProto(p, declared.dtype, what);
  }
  onnx::OptionalProto p;
  parseBounded(p, bytes, what, "ONNX OptionalProto");
  std::optional<Tensor> element;
  if (declared.isSequence() && p.has_sequence_value())
    element = sequenceFromProto(p.sequence_value(), declared.dtype, what);
  else if (!declared.isSequence() && p.has_tensor_value())
    element = tensorFromProto(p.tensor_value(), what);
  else if (p.has_tensor_value() || p.has_sequence_value())
    fail(what + ": the optional holds a " + std::string(p.has_tensor_value() ? "tensor" : "sequence") +
         " but the model declares " + declared.toString());
  return Tensor::optional(declared, std::move(element));
}

}  // namespace tessera::onnxio

namespace tessera {

OnnxSignature onnxSignature(const std::string& path) {
  onnx::ModelProto model;
  onnxio::parseBounded(model, onnxio::readBoundedFile(path), path, "ONNX model");
  std::set<std::string> initializers;
  for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
  auto typeOf = [](const onnx::ValueInfoProto& vi) {
    return onnxio::containerType(vi.type()).value_or(TensorType{});
  };
  OnnxSignature s;
  for (const auto& v : model.graph().input())
    if (!initializers.count(v.name())) s.feeds.push_back(v.name()), s.feedTypes.push_back(typeOf(v));
  for (const auto& v : model.graph().output()) s.outputTypes.push_back(typeOf(v));
  return s;
}

Tensor parseValueProto(std::string_view bytes, const std::string& sourceName, const TensorType& declared) {
  if (declared.isTensor()) return parseTensorProto(bytes, sourceName);
  return onnxio::containerFromBytes(bytes, declared, sourceName);
}

Tensor readValueFile(const std::string& path, const TensorType& declared) {
  return parseValueProto(onnxio::readBoundedFile(path), path, declared);
}

void writeValueFile(const Tensor& value, const std::string& name, const std::string& path) {
  if (value.isContainer()) return onnxio::writeContainer(value, name, path);
  writeTensorProtoFile(value, name, path);
}

}  // namespace tessera
