// Graph → ModelProto: IR version 8, the default domain at opset 18 (or newer when an op's only form in the
// registry is newer), nodes in topological order, initializers as raw_data, types of every value.
#include <algorithm>
#include <fstream>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_proto.h"
#include "ir/error.h"

namespace tessera {

namespace {
using namespace onnxio;

constexpr int64_t kExportOpset = 18;

// The first opset that has a node's form, when that is newer than 18: a new op, or an attribute added later.
int64_t opsetNeededFor(const Node& n) {
  if (n.op() == "Gelu") return 20;
  if (n.op() == "AveragePool" && n.hasAttr("dilations")) return 19;
  if (n.op() == "Cast" && n.hasAttr("saturate")) return 19;
  const Attribute* mode = n.attr("mode");
  if (n.op() == "Pad" && mode && mode->kind() == AttrKind::String && mode->s() == "wrap") return 19;
  return kExportOpset;
}

void setValueInfo(const Value& v, onnx::ValueInfoProto& vi) {
  vi.set_name(v.name());
  auto* tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtypeToOnnx(v.dtype()));
  auto* shape = tt->mutable_shape();
  for (int64_t d : v.shape()) shape->add_dim()->set_dim_value(d);
}

void exportNode(const Node& n, onnx::NodeProto& np) {
  np.set_name(n.id());
  np.set_op_type(n.op());
  for (const Value* in : n.inputs()) np.add_input(in ? in->name() : "");
  for (const Value* out : n.outputs()) np.add_output(out->name());
  for (const auto& [name, attr] : n.attrs()) attributeToProto(name, attr, *np.add_attribute());
}

onnx::ModelProto exportModel(const Graph& g) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tessera");
  onnx::GraphProto& gp = *m.mutable_graph();
  gp.set_name(g.name());
  for (const Value* v : g.initializers()) tensorToProto(*v->initializer(), v->name(), *gp.add_initializer());
  for (const Value* v : g.inputs()) setValueInfo(*v, *gp.add_input());
  int64_t opset = kExportOpset;
  for (const Node* n : g.topoOrder()) {
    exportNode(*n, *gp.add_node());
    opset = std::max(opset, opsetNeededFor(*n));
    for (const Value* out : n->outputs())
      if (!out->isGraphOutput()) setValueInfo(*out, *gp.add_value_info());
  }
  for (const Value* v : g.outputs()) setValueInfo(*v, *gp.add_output());
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  return m;
}
}  // namespace

std::string exportOnnxBytes(const Graph& graph) {
  onnx::ModelProto m = exportModel(graph);
  if (int64_t(m.ByteSizeLong()) > kMaxProtoBytes)
    fail("graph '" + graph.name() + "' is larger than the 2 GiB a protobuf message can hold");
  std::string bytes;
  if (!m.SerializeToString(&bytes)) fail("graph '" + graph.name() + "': ONNX serialization failed");
  return bytes;
}

void exportOnnxFile(const Graph& graph, const std::string& path) {
  std::string bytes = exportOnnxBytes(graph);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(bytes.data(), std::streamsize(bytes.size()))) fail(path + ": cannot write file");
}

}  // namespace tessera
