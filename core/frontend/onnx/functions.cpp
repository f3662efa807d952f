// Model-local functions (ModelProto.functions, IR version 8 and later): before import, every node that calls one
// is replaced by the function's nodes, so the importer sees only operators. The nodes made from a call are named
// under the call ("/blocks/b.0" calling Block gives "/blocks/b.0/MatMul", ...), which is where the window's layers
// come from (core/layers reads scopes from node ids); the function's inner values are renamed under the call too.
#include <map>
#include <utility>

#include "frontend/onnx/functions.h"
#include "ir/error.h"

namespace tessera {
namespace {

constexpr int kMaxCallDepth = 16;  // deeper is a recursive function, which ONNX forbids

using Nodes = google::protobuf::RepeatedPtrField<onnx::NodeProto>;
using FunctionKey = std::pair<std::string, std::string>;  // domain, name

std::string quoted(const std::string& s) { return "'" + s + "'"; }

bool isDefault(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

class Inliner {
 public:
  explicit Inliner(const onnx::ModelProto& model) {
    int64_t opset = 0;
    for (const auto& o : model.opset_import())
      if (isDefault(o.domain())) opset = o.version();
    for (const onnx::FunctionProto& f : model.functions()) {
      for (const auto& o : f.opset_import())
        if (isDefault(o.domain()) && o.version() != opset)
          fail("function " + quoted(f.name()) + " imports opset " + std::to_string(o.version()) +
               " of the default domain and the model " + std::to_string(opset) + " (one opset is supported)");
      functions_[{f.domain(), f.name()}] = &f;
    }
  }

  void graph(onnx::GraphProto& g, int depth) {
    Nodes out;
    for (const onnx::NodeProto& n : g.node()) expand(n, depth, out);
    g.mutable_node()->Swap(&out);
  }

 private:
  // Appends `node` to `out`, or the nodes of the function it calls (their own calls expanded in turn).
  void expand(const onnx::NodeProto& node, int depth, Nodes& out) {
    auto it = functions_.find({node.domain(), node.op_type()});
    if (it == functions_.end()) {
      onnx::NodeProto* copy = out.Add();
      *copy = node;
      for (onnx::AttributeProto& a : *copy->mutable_attribute()) {  // bodies of If, Loop, Scan
        if (a.has_g()) graph(*a.mutable_g(), depth);
        for (onnx::GraphProto& g : *a.mutable_graphs()) graph(g, depth);
      }
      return;
    }
    if (depth >= kMaxCallDepth)
      fail("function " + quoted(node.op_type()) + ": calls nested more than " + std::to_string(kMaxCallDepth) +
           " deep (a function calling itself?)");
    const onnx::FunctionProto& f = *it->second;
    if (node.input_size() > f.input_size() || node.output_size() > f.output_size())
      fail("node " + quoted(node.name()) + " calls function " + quoted(f.name()) + " with " +
           std::to_string(node.input_size()) + " inputs and " + std::to_string(node.output_size()) +
           " outputs; it takes " + std::to_string(f.input_size()) + " and gives " + std::to_string(f.output_size()));
    const std::string scope = callScope(node);
    std::map<std::string, std::string> rename;  // the function's names → the caller's (or fresh ones)
    for (int i = 0; i < f.input_size(); ++i) rename[f.input(i)] = i < node.input_size() ? node.input(i) : "";
    for (int i = 0; i < f.output_size(); ++i)
      rename[f.output(i)] = i < node.output_size() && !node.output(i).empty() ? node.output(i) : scope + "/" + f.output(i);
    for (const onnx::NodeProto& inner : f.node()) {
      onnx::NodeProto n = inner;
      n.set_name(scope + "/" + (inner.name().empty() ? inner.op_type() + "_" + std::to_string(++unnamed_) : inner.name()));
      for (std::string& in : *n.mutable_input()) in = renamed(rename, in, scope);
      for (std::string& o : *n.mutable_output()) o = renamed(rename, o, scope);
      bindAttributes(n, node);
      expand(n, depth + 1, out);
    }
  }

  // The name the call's nodes are put under: the call's own name ("/blocks/b.0"), else its op and a number.
  std::string callScope(const onnx::NodeProto& call) {
    std::string s = call.name().empty() ? call.op_type() + "_" + std::to_string(++unnamed_) : call.name();
    return s.front() == '/' ? s : "/" + s;
  }

  static std::string renamed(const std::map<std::string, std::string>& rename, const std::string& name,
                             const std::string& scope) {
    if (name.empty()) return name;
    auto it = rename.find(name);
    return it != rename.end() ? it->second : scope + "/" + name;
  }

  // An attribute that refers to one of the function's (ref_attr_name) takes the call's value, else it is left
  // out, as ONNX says. (Defaults declared in FunctionProto.attribute_proto, IR 9, are newer than the ONNX
  // library this builds with, so a function's defaults are not read: the node's operator default applies.)
  static void bindAttributes(onnx::NodeProto& n, const onnx::NodeProto& call) {
    google::protobuf::RepeatedPtrField<onnx::AttributeProto> bound;
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.ref_attr_name().empty()) {
        *bound.Add() = a;
        continue;
      }
      const onnx::AttributeProto* value = nullptr;
      for (const onnx::AttributeProto& c : call.attribute())
        if (c.name() == a.ref_attr_name()) value = &c;
      if (!value) continue;
      onnx::AttributeProto* b = bound.Add();
      *b = *value;
      b->set_name(a.name());
    }
    n.mutable_attribute()->Swap(&bound);
  }

  std::map<FunctionKey, const onnx::FunctionProto*> functions_;
  int unnamed_ = 0;
};

}  // namespace

void inlineFunctions(onnx::ModelProto& model) {
  if (model.functions_size() == 0) return;
  Inliner(model).graph(*model.mutable_graph(), 0);
  model.clear_functions();
}

}  // namespace tessera
