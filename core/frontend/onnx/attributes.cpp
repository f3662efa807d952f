// AttributeProto ↔ Attribute. ONNX floats are 32-bit; Tessera keeps them as double.
#include <charconv>
#include <cmath>

#include "frontend/onnx/onnx_proto.h"
#include "ir/error.h"

namespace tessera::onnxio {

namespace {
using AP = onnx::AttributeProto;

// Old exporters leave `type` unset; the field that is filled then says what the attribute is.
AP::AttributeType guessType(const AP& p) {
  if (p.has_f()) return AP::FLOAT;
  if (p.has_i()) return AP::INT;
  if (p.has_s()) return AP::STRING;
  if (p.has_t()) return AP::TENSOR;
  if (p.floats_size()) return AP::FLOATS;
  if (p.ints_size()) return AP::INTS;
  if (p.strings_size()) return AP::STRINGS;
  if (p.has_g() || p.graphs_size()) return AP::GRAPH;
  return AP::UNDEFINED;
}

// The double whose shortest decimal form is that of the float: 1e-05f reads as 1e-05, not 9.99999974e-06.
// It is the value the model's author wrote, and a graph's double attributes survive export → import exactly
// whenever they have a float's precision.
double widen(float f) {
  if (!std::isfinite(f)) return double(f);
  char text[32];
  auto printed = std::to_chars(text, text + sizeof text, f);
  double d = double(f);
  std::from_chars(text, printed.ptr, d);
  return d;
}

std::string kindName(AP::AttributeType t) {
  switch (t) {
    case AP::GRAPH: return "graph";
    case AP::GRAPHS: return "graphs";
    case AP::SPARSE_TENSOR: return "sparse tensor";
    case AP::SPARSE_TENSORS: return "sparse tensors";
    case AP::TENSORS: return "tensors";
    case AP::TYPE_PROTO: return "type";
    case AP::TYPE_PROTOS: return "types";
    default: return "code " + std::to_string(int(t));
  }
}
}  // namespace

// A type attribute (Optional's `type`) is kept as the text of the type (ir/shape.h): "seq<f32>", or a tensor's
// dtype as "f32[]" (only a tensor's dtype matters to the op, not its shape).
std::string typeAttributeText(const onnx::TypeProto& tp, const std::string& what) {
  if (std::optional<TensorType> c = containerType(tp)) return c->toString();
  if (tp.has_tensor_type())
    if (std::optional<DType> d = dtypeFromOnnx(tp.tensor_type().elem_type())) return TensorType{*d, {}}.toString();
  fail(what + ": the type is neither a tensor nor a sequence or optional of tensors of a Tessera dtype");
}

void typeAttributeToProto(const std::string& name, const std::string& text, AP& p) {
  std::optional<TensorType> t = TensorType::fromString(text);
  if (!t) fail("attribute '" + name + "': '" + text + "' is not a type");
  p.set_name(name);
  p.set_type(AP::TYPE_PROTO);
  typeToProto(*t, *p.mutable_tp());
}

Attribute attributeFromProto(const AP& p, const std::string& what) {
  if (!p.ref_attr_name().empty()) fail(what + ": refers to a function attribute, which is not supported");
  AP::AttributeType type = p.has_type() ? p.type() : guessType(p);
  switch (type) {
    case AP::FLOAT: return widen(p.f());
    case AP::INT: return int64_t(p.i());
    case AP::STRING: return p.s();
    case AP::TENSOR: return tensorFromProto(p.t(), what);
    case AP::FLOATS: {
      std::vector<double> values;
      for (float f : p.floats()) values.push_back(widen(f));
      return values;
    }
    case AP::INTS: return std::vector<int64_t>(p.ints().begin(), p.ints().end());
    case AP::STRINGS: return std::vector<std::string>(p.strings().begin(), p.strings().end());
    case AP::TYPE_PROTO: return typeAttributeText(p.tp(), what);
    case AP::UNDEFINED: fail(what + ": has no type and no value");
    default: fail(what + ": attributes of kind " + kindName(type) + " are not supported");
  }
}

void attributeToProto(const std::string& name, const Attribute& attr, AP& p) {
  p.set_name(name);
  switch (attr.kind()) {
    case AttrKind::Int: p.set_type(AP::INT); p.set_i(attr.i()); break;
    case AttrKind::Float: p.set_type(AP::FLOAT); p.set_f(float(attr.f())); break;
    case AttrKind::String: p.set_type(AP::STRING); p.set_s(attr.s()); break;
    case AttrKind::Tensor: p.set_type(AP::TENSOR); tensorToProto(attr.t(), "", *p.mutable_t()); break;
    case AttrKind::Ints:
      p.set_type(AP::INTS);
      for (int64_t v : attr.ints()) p.add_ints(v);
      break;
    case AttrKind::Floats:
      p.set_type(AP::FLOATS);
      for (double v : attr.floats()) p.add_floats(float(v));
      break;
    case AttrKind::Strings:
      p.set_type(AP::STRINGS);
      for (const std::string& v : attr.strings()) p.add_strings(v);
      break;
    case AttrKind::Graph: fail("attribute '" + name + "': a graph is written with its node (onnx_export.cpp)");
  }
}

}  // namespace tessera::onnxio
