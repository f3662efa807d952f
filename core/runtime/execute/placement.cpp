#include "runtime/execute/placement.h"

#include <set>

#include "codegen/codegen.h"
#include "ir/enum_names.h"
#include "ops/registry.h"
#include "ops/specialize.h"

namespace tessera::execute {

namespace {

const EnumNames<HostRule>& ruleNames() {
  static const EnumNames<HostRule> names = {
      {HostRule::None, "kernel"},          {HostRule::ControlFlow, "control-flow"}, {HostRule::UnknownOp, "unknown-op"},
      {HostRule::NoLowering, "no-lowering"}, {HostRule::NoCodegen, "dtype"}, {HostRule::DataDependent, "data-dependent"},
      {HostRule::Containers, "container"},
  };
  return names;
}

std::string nodeText(const Node& n) { return "node '" + n.id() + "' (" + n.op() + ")"; }

// A value of the group's nodes that generated code cannot hold, as a reason; "" when there is none.
std::string dtypeWithoutForm(const Node& n) {
  for (const std::vector<Value*>* list : {&n.inputs(), &n.outputs()})
    for (const Value* v : *list)
      if (v && !codegen::hasGeneratedForm(v->dtype()))
        return nodeText(n) + ": '" + v->name() + "' is " + std::string(dtypeName(v->dtype())) +
               ", which generated code cannot hold yet (float4 lives in the reference semantics only)";
  return "";
}

// A sequence, optional or string tensor the node reads or makes, as a reason; "" when there is none.
std::string containerValue(const Node& n) {
  for (const std::vector<Value*>* list : {&n.inputs(), &n.outputs()})
    for (const Value* v : *list)
      if (v && (!v->type().isTensor() || v->dtype() == DType::String))
        return nodeText(n) + ": '" + v->name() + "' is a " + v->type().toString() +
               ", a value that lives on the host (the reference semantics run the nodes that read or make one)";
  return "";
}

std::string specializedText(const Node& n) {
  std::string s;
  for (const TensorType& t : specializedTypes(n).value_or(std::vector<TensorType>{})) s += (s.empty() ? "" : ", ") + t.toString();
  return s;
}

}  // namespace

const std::string& hostRuleName(HostRule r) { return enumName(ruleNames(), r, "host rule"); }

std::string Placement::describe() const {
  if (!onHost()) return "runs as a generated kernel";
  return "runs on the host (" + hostRuleName(rule) + "): " + reason;
}

Placement placeBeforeLowering(const Graph& g, const kernel::KernelSpec& spec) {
  std::vector<const Node*> nodes;
  for (const std::string& id : spec.nodeIds)
    if (const Node* n = g.findNode(id)) nodes.push_back(n);
  for (const Node* n : nodes)  // first: a node nothing can run decides what a run does
    if (const Node* missing = firstWithoutSemantics(*n))
      return {HostRule::UnknownOp, noSemanticsMessage(*missing) + (missing == n ? "" : ", in a subgraph of " + nodeText(*n)) +
                                       "; a run stops before it"};
  for (const Node* n : nodes)
    if (opTraits(n->op()).subgraphs)
      return {HostRule::ControlFlow, nodeText(*n) + " is control flow: it runs on the host, its subgraphs by the "
                                                    "reference interpreter"};
  for (const Node* n : nodes)
    if (std::string why = containerValue(*n); !why.empty()) return {HostRule::Containers, why};
  for (const Node* n : nodes)
    if (std::string why = dtypeWithoutForm(*n); !why.empty()) return {HostRule::NoCodegen, why};
  for (const Node* n : nodes)
    if (isSpecialized(*n))
      return {HostRule::DataDependent, nodeText(*n) + "'s output shape depends on input values: it was specialized to " +
                                           specializedText(*n) + " on the inputs the model was opened with, and runs "
                                           "on the host with the extents each run's values give"};
  return {};
}

kernel::Kernel hostKernel(const Graph& g, const kernel::KernelSpec& spec) {
  kernel::Kernel k;
  k.id = spec.id;
  k.kind = "host";
  k.nodeIds = spec.nodeIds;
  k.machine = spec.machine;
  std::set<const Node*> inGroup;
  for (const std::string& id : spec.nodeIds)
    if (const Node* n = g.findNode(id)) inGroup.insert(n);
  std::set<const Value*> seen;
  auto add = [&](const Value* v, kernel::BufferRole role) {
    if (!v || !seen.insert(v).second) return;
    const char* prefix = role == kernel::BufferRole::Input ? "in" : "out";
    kernel::Buffer b;
    b.name = prefix + std::to_string(k.buffers.size());
    b.dtype = v->dtype();
    b.shape = v->shape();
    b.role = role;
    b.value = v->name();
    k.buffers.push_back(std::move(b));
  };
  for (const std::string& id : spec.nodeIds)  // the group's node order is topological
    if (const Node* n = g.findNode(id))
      for (const Value* in : n->inputs())
        if (in && !inGroup.count(in->producer())) add(in, kernel::BufferRole::Input);
  for (const std::string& id : spec.nodeIds)
    if (const Node* n = g.findNode(id))
      for (const Value* out : n->outputs()) {
        bool readOutside = out->isGraphOutput();
        for (const Use& u : out->uses()) readOutside = readOutside || !inGroup.count(u.node);
        if (readOutside) add(out, kernel::BufferRole::Output);
      }
  return k;
}

}  // namespace tessera::execute
