#include "ops/registry.h"

#include <algorithm>

#include "ir/error.h"
#include "ops/families.h"

namespace tessera {

std::string_view opCategoryName(OpCategory c) {
  switch (c) {
    case OpCategory::Pointwise: return "pointwise";
    case OpCategory::Reduction: return "reduction";
    case OpCategory::Matmul: return "matmul";
    case OpCategory::Conv: return "conv";
    case OpCategory::DataMovement: return "data-movement";
    case OpCategory::Constant: return "constant";
    case OpCategory::Other: return "other";
  }
  return "other";
}

InferContext::InferContext(const Node& node, ConstantLookup constants, bool valuesTyped)
    : node_(node), constants_(std::move(constants)), valuesTyped_(valuesTyped) {}

const TensorType& InferContext::input(size_t i) const {
  const Value* v = node_.input(i);
  if (!v) error("input " + std::to_string(i) + " is missing");
  if (const Tensor* t = valuesTyped_ ? constantInput(i) : nullptr) return t->type();
  return v->type();
}

const Tensor* InferContext::constantInput(size_t i) const {
  const Value* v = node_.input(i);
  return v && constants_ ? constants_(v) : nullptr;
}

const Tensor& InferContext::requireConstant(size_t i, const std::string& what) const {
  const Tensor* t = constantInput(i);
  if (!t)
    throw NeedsValuesError("node '" + node_.id() + "' (" + node_.op() + "): input " + std::to_string(i) + " (" + what +
                               ") must be a constant known at compile time" +
                               (node_.input(i) ? " but '" + node_.input(i)->name() + "' is not" : ""),
                           node_.id());
  return *t;
}

void InferContext::error(const std::string& message) const {
  fail("node '" + node_.id() + "' (" + node_.op() + "): " + message);
}

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerElementwiseOps(r);
    registerReductionOps(r);
    registerNormalizationOps(r);
    registerLinalgOps(r);
    registerShapeOps(r);
    registerTriangularOps(r);
    registerTopKOps(r);
    registerScatterOps(r);
    registerRotaryOps(r);
    registerEinsumOps(r);
    registerLossOps(r);
    registerResizeOps(r);
    registerAttentionOps(r);
    registerLinearAttentionOps(r);
    registerConvTransposeOps(r);
    registerQuantizeOps(r);
    registerNormalizationStatsOps(r);
    registerLayoutOps(r);
    registerSignalOps(r);
    registerGridSampleOps(r);
    registerQuantLinalgOps(r);
    registerDataDependentOps(r);
    registerRecurrentOps(r);
    registerWindowInverseOps(r);
    registerRoiAlignOps(r);
    registerTfIdfOps(r);
    registerStringOps(r);
    registerMlOps(r);
    registerTrainingOps(r);
    registerControlFlowOps(r);
    registerSequenceOps(r);
    std::sort(r.schemas_.begin(), r.schemas_.end(), [](auto& a, auto& b) { return a.name < b.name; });
    return r;
  }();
  return registry;
}

const OpSchema* OpRegistry::find(const std::string& op) const {
  auto it = std::lower_bound(schemas_.begin(), schemas_.end(), op, [](auto& s, auto& n) { return s.name < n; });
  if (it != schemas_.end() && it->name == op) return &*it;
  // During registration the list is not sorted yet.
  for (const auto& s : schemas_)
    if (s.name == op) return &s;
  return nullptr;
}

const OpSchema& OpRegistry::get(const Node& node) const {
  const OpSchema* s = find(node.op());
  if (!s) fail("node '" + node.id() + "': unknown op '" + node.op() + "'");
  return *s;
}

std::string qualifiedOpName(const std::string& domain, const std::string& opType) {
  return domain.empty() || domain == "ai.onnx" ? opType : domain + "::" + opType;
}

std::pair<std::string, std::string> splitOpName(const std::string& op) {
  const size_t at = op.rfind("::");
  if (at == std::string::npos) return {"", op};
  return {op.substr(0, at), op.substr(at + 2)};
}

bool isKnownOp(const std::string& op) { return OpRegistry::instance().find(op) != nullptr; }

const Node* firstWithoutSemantics(const Node& node) {
  const OpSchema* s = OpRegistry::instance().find(node.op());
  if (!s || !s->eval) return &node;
  for (const auto& [name, attr] : node.attrs()) {
    if (attr.kind() != AttrKind::Graph) continue;
    for (const Node* n : attr.g().nodes())
      if (const Node* missing = firstWithoutSemantics(*n)) return missing;
  }
  return nullptr;
}

std::string noSemanticsMessage(const Node& node) {
  if (isKnownOp(node.op())) return "node '" + node.id() + "' (" + node.op() + "): op has no reference semantics";
  auto [domain, type] = splitOpName(node.op());
  const std::string where = domain.empty() ? "" : " (domain '" + domain + "')";
  return "node '" + node.id() + "' (" + node.op() + "): unknown op '" + type + "'" + where +
         ": Tessera has no reference semantics for it";
}

const OpTraits& opTraits(const std::string& op) {
  static const OpTraits none;
  const OpSchema* s = OpRegistry::instance().find(op);
  return s ? s->traits : none;
}

bool hasReductionKernel(const OpTraits& t) {
  bool accumulated = t.reduce == ReduceKind::Sum || t.reduce == ReduceKind::Mean || t.reduce == ReduceKind::Max ||
                     t.reduce == ReduceKind::Min;
  return accumulated || t.rowNormalization;
}

bool evalCostBounded(const Node& node) {
  if (opTraits(node.op()).unboundedEval) return false;
  for (const auto& [name, attr] : node.attrs()) {
    if (attr.kind() != AttrKind::Graph) continue;
    for (const Node* n : attr.g().nodes())
      if (!evalCostBounded(*n)) return false;
  }
  return true;
}

std::vector<std::string> OpRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& s : schemas_) out.push_back(s.name);
  return out;
}

void OpRegistry::add(OpSchema schema) {
  for (const auto& s : schemas_)
    if (s.name == schema.name) fail("op '" + schema.name + "' registered twice");
  schemas_.push_back(std::move(schema));
}

}  // namespace tessera
