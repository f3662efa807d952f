#pragma once
// Small graph-editing helpers shared by the passes: forward a value, swap a node for another op while keeping
// its id and output names, turn a value into a constant, and build new nodes with inferred types.
#include <optional>
#include <string>
#include <vector>

#include "ir/constant.h"
#include "ir/graph.h"

namespace tessera {

// As constantValue, and also the result of a ConstantOfShape with a constant shape (how some exporters store
// splat weights), evaluated on demand; nullopt when the value is not known without inputs.
std::optional<Tensor> materializeConstant(const Value* v);
// True when `v` is a constant whose every element equals `x`.
bool isConstantSplat(const Value* v, double x);

// Redirects the uses of node output `index` to `to` and removes the node once none of its outputs is used.
// A graph output keeps its name: `to` is renamed when it is an intermediate used nowhere else as an output;
// otherwise (or when the types differ) nothing changes and false is returned.
bool forwardOutput(Graph& graph, Node* node, size_t index, Value* to);

// Redirects each used output i of `node` to to[i] and removes the node (several outputs at once, which
// forwardOutput refuses when another output is a graph output). A graph output keeps its name: to[i] takes it,
// and must be an intermediate that is not already an output. False, changing nothing, when a used output has no
// to[i], a type differs, or that naming is impossible.
bool forwardOutputs(Graph& graph, Node* node, const std::vector<Value*>& to);

// Replaces `node` by a node of another op with the same id, output names and output types.
Node* replaceNode(Graph& graph, Node* node, const std::string& op, const std::vector<Value*>& inputs,
                  Attributes attrs = {});

// Replaces the node by initializers (one per output, `data` in output order) that take the outputs' names.
void replaceWithConstants(Graph& graph, Node* node, std::vector<Tensor> data);

// Adds an initializer with a fresh name derived from `hint`.
Value* addConstant(Graph& graph, const std::string& hint, Tensor data);

// Adds a one-output node with id and output name derived from `id`, and infers its type (ops/infer.h).
Value* addInferredNode(Graph& graph, const std::string& op, const std::vector<Value*>& inputs, Attributes attrs,
                       const std::string& id);

// Removes the node when none of its outputs is used or a graph output; true when removed.
bool removeIfDead(Graph& graph, Node* node);

}  // namespace tessera
