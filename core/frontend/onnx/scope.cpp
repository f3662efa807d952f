// What a GraphProto reads from the graphs around it, and which names decide shapes, across subgraphs.
#include <unordered_map>
#include <unordered_set>

#include "frontend/onnx/onnx_proto.h"
#include "ir/error.h"
#include "ops/registry.h"

namespace tessera::onnxio {

namespace {
using AP = onnx::AttributeProto;

void checkDepth(int depth, const onnx::GraphProto& gp) {
  if (depth > kMaxSubgraphDepth)
    fail("subgraph '" + gp.name() + "' is nested " + std::to_string(depth) + " levels deep (Tessera reads at most " +
         std::to_string(kMaxSubgraphDepth) + ")");
}

std::unordered_set<std::string> definedNames(const onnx::GraphProto& gp) {
  std::unordered_set<std::string> defined;
  for (const auto& t : gp.initializer()) defined.insert(t.name());
  for (const auto& v : gp.input()) defined.insert(v.name());
  for (const auto& n : gp.node())
    for (const std::string& out : n.output()) defined.insert(out);
  return defined;
}
}  // namespace

bool isGraphAttribute(const AP& a) { return a.type() == AP::GRAPH || (!a.has_type() && a.has_g()); }

std::vector<std::string> freeNames(const onnx::GraphProto& gp, int depth) {
  checkDepth(depth, gp);
  std::unordered_set<std::string> defined = definedNames(gp), seen;
  std::vector<std::string> free;
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) free.push_back(name);
  };
  for (const auto& n : gp.node()) {
    for (const std::string& in : n.input()) read(in);
    for (const auto& a : n.attribute())
      if (isGraphAttribute(a))
        for (const std::string& name : freeNames(a.g(), depth + 1)) read(name);
  }
  for (const auto& o : gp.output()) read(o.name());
  return free;
}

std::vector<std::string> nodeCaptures(const onnx::NodeProto& np, int depth) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (const auto& a : np.attribute())
    if (isGraphAttribute(a))
      for (const std::string& name : freeNames(a.g(), depth + 1))
        if (seen.insert(name).second) names.push_back(name);
  return names;
}

std::unordered_set<std::string> shapeFeedingNames(const onnx::GraphProto& gp, int depth) {
  checkDepth(depth, gp);
  std::unordered_map<std::string, int> producer;
  for (int k = 0; k < gp.node_size(); ++k)
    for (const std::string& out : gp.node(k).output()) producer[out] = k;
  std::vector<std::string> stack;
  for (const auto& np : gp.node()) {
    const bool ownDomain = np.domain().empty() || np.domain() == "ai.onnx";  // another's op only shares a name
    if (const OpSchema* schema = ownDomain ? OpRegistry::instance().find(np.op_type()) : nullptr)
      for (int idx : schema->shapeInputs)
        if (idx < np.input_size() && !np.input(idx).empty()) stack.push_back(np.input(idx));
    for (const auto& a : np.attribute())  // a body's shape operands may be outer values it captures
      if (isGraphAttribute(a))
        for (const std::string& name : shapeFeedingNames(a.g(), depth + 1)) stack.push_back(name);
  }
  std::unordered_set<std::string> seen;
  while (!stack.empty()) {
    std::string name = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(name).second) continue;
    auto it = producer.find(name);
    if (it == producer.end()) continue;
    const auto& np = gp.node(it->second);
    if (np.op_type() == "Shape" || np.op_type() == "Size") continue;
    for (const std::string& in : np.input())
      if (!in.empty()) stack.push_back(in);
    for (const std::string& in : nodeCaptures(np, depth)) stack.push_back(in);  // what its bodies read
  }
  return seen;
}

std::optional<TensorType> declaredType(const onnx::ValueInfoProto& vi) {
  if (std::optional<TensorType> c = containerType(vi.type())) return c;
  if (!vi.type().has_tensor_type()) return std::nullopt;
  const auto& tt = vi.type().tensor_type();
  std::optional<DType> dtype = dtypeFromOnnx(tt.elem_type());
  if (!dtype || !tt.has_shape() || tt.shape().dim_size() > 64) return std::nullopt;
  TensorType t{*dtype, {}};
  for (const auto& dim : tt.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
    t.shape.push_back(dim.dim_value());
  }
  try {
    checkTensorSize(t.shape, t.dtype, "a declared type");
  } catch (const Error&) {
    return std::nullopt;
  }
  return t;
}

}  // namespace tessera::onnxio
