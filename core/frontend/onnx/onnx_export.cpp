// Graph → ModelProto: IR version 8, the default domain at opset 18 (or newer when an op's only form in the
// registry is newer), nodes in topological order, initializers as raw_data, types of every value.
#include <algorithm>
#include <fstream>
#include <set>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_proto.h"
#include "ir/error.h"
#include "ops/registry.h"
#include "ops/specialize.h"

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
  typeToProto(v.type(), *vi.mutable_type());
}

void exportGraph(const Graph& g, onnx::GraphProto& gp, int64_t& opset, bool body);

// The captures a node passes its subgraphs: its last inputs (every subgraph of one node has the same list).
size_t captureCount(const Node& n) {
  for (const auto& [name, attr] : n.attrs())
    if (attr.kind() == AttrKind::Graph) return attr.g().numCaptures();
  return 0;
}

// A body reads outer values by name in ONNX: a capture whose outer value has another name is bound by an
// Identity at the body's start.
void exportBody(const Node& n, const Graph& body, onnx::GraphProto& gp, int64_t& opset) {
  size_t first = n.numInputs() - body.numCaptures(), formal = body.inputs().size() - body.numCaptures();
  for (size_t c = 0; c < body.numCaptures(); ++c) {
    const Value* outer = n.input(first + c);
    const Value* inner = body.inputs()[formal + c];
    if (!outer) fail("node '" + n.id() + "' (" + n.op() + "): outer value " + std::to_string(c) + " is missing");
    if (outer->name() == inner->name()) continue;
    auto* bind = gp.add_node();
    bind->set_op_type("Identity");
    bind->add_input(outer->name());
    bind->add_output(inner->name());
  }
  exportGraph(body, gp, opset, true);
}

void exportNode(const Node& n, onnx::NodeProto& np, int64_t& opset) {
  np.set_name(n.id());
  auto [domain, opType] = splitOpName(n.op());  // an opaque node of another domain: "com.acme::Foo"
  np.set_op_type(opType);
  if (!domain.empty()) np.set_domain(domain);
  size_t inputs = n.numInputs() - captureCount(n);
  for (size_t i = 0; i < inputs; ++i) np.add_input(n.input(i) ? n.input(i)->name() : "");
  for (const Value* out : n.outputs()) np.add_output(out->name());
  for (const auto& [name, attr] : n.attrs()) {
    if (name == kSpecializedTypesAttr && isKnownOp(n.op())) continue;  // Tessera's own: a re-import specializes again
    if (n.op() == "Optional" && name == "type" && attr.kind() == AttrKind::String) {
      typeAttributeToProto(name, attr.s(), *np.add_attribute());
      continue;
    }
    if (attr.kind() != AttrKind::Graph) {
      attributeToProto(name, attr, *np.add_attribute());
      continue;
    }
    auto* ap = np.add_attribute();
    ap->set_name(name);
    ap->set_type(onnx::AttributeProto::GRAPH);
    exportBody(n, attr.g(), *ap->mutable_g(), opset);
  }
  opset = std::max(opset, opsetNeededFor(n));
}

// A body lists its formal inputs only (its captures are outer names) and no value_info: its inner types are
// inferred again from the node holding it. An opaque node's outputs are the exception: nothing infers them, so
// their types are written wherever the node is.
void exportGraph(const Graph& g, onnx::GraphProto& gp, int64_t& opset, bool body) {
  gp.set_name(g.name());
  for (const Value* v : g.initializers()) tensorToProto(*v->initializer(), v->name(), *gp.add_initializer());
  size_t inputs = g.inputs().size() - g.numCaptures();
  for (size_t i = 0; i < inputs; ++i) setValueInfo(*g.inputs()[i], *gp.add_input());
  for (const Node* n : g.topoOrder()) {
    exportNode(*n, *gp.add_node(), opset);
    if (body && isKnownOp(n->op())) continue;
    for (const Value* out : n->outputs())
      if (!out->isGraphOutput()) setValueInfo(*out, *gp.add_value_info());
  }
  for (const Value* v : g.outputs()) setValueInfo(*v, *gp.add_output());
}

// The domains of the graph's opaque nodes (ops/registry.h, qualifiedOpName), subgraphs included.
void collectDomains(const Graph& g, std::set<std::string>& out) {
  for (const Node* n : g.nodes()) {
    if (std::string d = splitOpName(n->op()).first; !d.empty()) out.insert(d);
    for (const auto& [name, attr] : n->attrs())
      if (attr.kind() == AttrKind::Graph) collectDomains(attr.g(), out);
  }
}

onnx::ModelProto exportModel(const Graph& g) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tessera");
  int64_t opset = kExportOpset;
  exportGraph(g, *m.mutable_graph(), opset, false);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  std::set<std::string> domains;
  collectDomains(g, domains);
  for (const std::string& d : domains) {  // the version its model imported is not kept: 1
    auto* other = m.add_opset_import();
    other->set_domain(d);
    other->set_version(1);
  }
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
