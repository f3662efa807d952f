#include "passes/rewrite.h"

#include <set>

#include "ir/error.h"
#include "ops/infer.h"
#include "ops/registry.h"

namespace tessera {

std::optional<Tensor> materializeConstant(const Value* v) {
  if (const Tensor* t = constantValue(v)) return *t;
  const Node* p = v ? v->producer() : nullptr;
  if (!p || p->op() != "ConstantOfShape" || !constantValue(p->input(0))) return std::nullopt;
  const OpSchema* schema = OpRegistry::instance().find(p->op());
  if (!schema || !schema->eval) return std::nullopt;
  std::vector<Tensor> out = schema->eval(*p, {constantValue(p->input(0))}, {v->type()});
  if (out.empty() || out[0].type() != v->type()) return std::nullopt;
  return out[0];
}

bool isConstantSplat(const Value* v, double x) {
  const Tensor* t = constantValue(v);
  if (!t) return false;
  for (int64_t i = 0; i < t->numElements(); ++i)
    if (t->getDouble(i) != x) return false;
  return true;
}

bool removeIfDead(Graph& graph, Node* node) {
  for (Value* out : node->outputs())
    if (!out->uses().empty() || out->isGraphOutput()) return false;
  graph.removeNode(node);
  return true;
}

bool forwardOutput(Graph& graph, Node* node, size_t index, Value* to) {
  Value* from = node->output(index);
  if (!from || !to || from == to || from->type() != to->type()) return false;
  if (!from->isGraphOutput()) {
    graph.replaceAllUsesWith(from, to);
    removeIfDead(graph, node);
    return true;
  }
  // The graph output's name is part of the model's interface: only an intermediate may take it over.
  if (!to->producer() || to->isGraphOutput()) return false;
  for (Value* other : node->outputs())
    if (other != from && (!other->uses().empty() || other->isGraphOutput())) return false;
  std::string name = from->name();
  graph.replaceAllUsesWith(from, to);
  if (removeIfDead(graph, node)) graph.renameValue(to, name);
  return true;
}

bool forwardOutputs(Graph& graph, Node* node, const std::vector<Value*>& to) {
  std::vector<std::pair<Value*, Value*>> moves;  // (from, to) of the used outputs
  std::set<Value*> naming;                        // the values taking a graph output's name
  for (size_t i = 0; i < node->numOutputs(); ++i) {
    Value* from = node->output(i);
    if (!from || (from->uses().empty() && !from->isGraphOutput())) continue;
    Value* t = i < to.size() ? to[i] : nullptr;
    if (!t || t == from || t->type() != from->type()) return false;
    if (from->isGraphOutput() && (!t->producer() || t->isGraphOutput() || !naming.insert(t).second)) return false;
    moves.push_back({from, t});
  }
  std::vector<std::pair<Value*, std::string>> names;
  for (auto [from, t] : moves) {
    if (from->isGraphOutput()) names.push_back({t, from->name()});
    graph.replaceAllUsesWith(from, t);
  }
  if (!removeIfDead(graph, node)) return false;
  for (auto& [t, name] : names) graph.renameValue(t, name);
  return true;
}

Node* replaceNode(Graph& graph, Node* node, const std::string& op, const std::vector<Value*>& inputs,
                  Attributes attrs) {
  std::string id = node->id();
  std::vector<std::string> names;
  for (Value* out : node->outputs()) names.push_back(out->name() + ".new");
  Node* fresh = graph.addNode(op, inputs, names, std::move(attrs), id + ".new");
  for (size_t i = 0; i < node->numOutputs(); ++i) {
    fresh->output(i)->setType(node->output(i)->type());
    names[i] = node->output(i)->name();
    graph.replaceAllUsesWith(node->output(i), fresh->output(i));
  }
  graph.removeNode(node);
  graph.renameNode(fresh, id);
  for (size_t i = 0; i < fresh->numOutputs(); ++i) graph.renameValue(fresh->output(i), names[i]);
  return fresh;
}

Value* addConstant(Graph& graph, const std::string& hint, Tensor data) {
  return graph.addInitializer(graph.uniqueValueName(hint), std::move(data));
}

void replaceWithConstants(Graph& graph, Node* node, std::vector<Tensor> data) {
  if (data.size() != node->numOutputs())
    fail("node '" + node->id() + "' (" + node->op() + "): " + std::to_string(data.size()) + " constants for " +
         std::to_string(node->numOutputs()) + " outputs");
  std::vector<std::pair<Value*, std::string>> made;
  for (size_t i = 0; i < data.size(); ++i) {
    Value* from = node->output(i);
    Value* c = addConstant(graph, from->name() + ".const", std::move(data[i]));
    graph.replaceAllUsesWith(from, c);
    made.emplace_back(c, from->name());
  }
  graph.removeNode(node);  // frees the output names for the constants
  for (auto& [c, name] : made) graph.renameValue(c, name);
}

Value* addInferredNode(Graph& graph, const std::string& op, const std::vector<Value*>& inputs, Attributes attrs,
                       const std::string& id) {
  std::string nodeId = graph.uniqueNodeId(id);
  Node* n = graph.addNode(op, inputs, {nodeId}, std::move(attrs), nodeId);
  ConstantTable initializersOnly;
  std::vector<TensorType> types = inferNode(*n, initializersOnly);
  n->output(0)->setType(types.at(0));
  return n->output(0);
}

}  // namespace tessera
