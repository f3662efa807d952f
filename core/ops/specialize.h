#pragma once
// Data-dependent shapes, by specialization. Tessera's shapes are static, but some nodes' output shapes follow from
// input values that are not known at compile time: NonZero's count, NonMaxSuppression's selected boxes, a Reshape
// by a shape computed from data. Such a node is specialized: the graph is evaluated with the reference semantics
// on sample inputs up to it, and the types its outputs took there are kept on the node (attribute
// `specialized_types`, one "i64[2,37]" per output), so inference, passes and kernels see static shapes. The node
// itself then runs on the host (placement rule `data-dependent`), where a run on other inputs gives the extents
// these inputs give: the reference semantics carry them on (evalOnValues), and the executor runs a kernel built
// for the sample's extents on the host when its inputs have others. docs/operators.md, "Data-dependent shapes".
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessera {

inline constexpr const char* kSpecializedTypesAttr = "specialized_types";

// The types kept on a specialized node; nullopt when it is not one. Throws Error naming the node when the
// attribute is malformed (not one "dtype[dims]" string per output).
std::optional<std::vector<TensorType>> specializedTypes(const Node& node);
bool isSpecialized(const Node& node);

struct SpecializeResult {
  std::vector<std::string> nodes;  // the ids of the nodes specialized, in the order found
};

// Infers the graph's types like inferTypes; each node whose inference needs values it does not know is
// specialized on the inputs `sampleInputs` returns (asked once, only when a node needs them; graph input order,
// each of its input's type). Throws Error as inferTypes does for anything else, and when the node still cannot be
// typed with its input values known.
SpecializeResult inferSpecializing(Graph& graph, const std::function<std::vector<Tensor>()>& sampleInputs);

// "node 'nz' (NonZero): output 0 is i64[2,41] on these inputs, but ...": what an evaluation against the graph's
// types says when a specialized node gives other types than those it was specialized to.
std::string specializedMismatch(const Node& node, size_t output, const TensorType& got);

// The node's reference semantics with the extents these inputs give: its output types inferred again from the
// inputs' values, not taken from the graph. How a specialized node runs, and every node after one whose run gave
// other extents than the sample did (evalNode calls it for them). Throws Error as inference or the op does.
std::vector<Tensor> evalOnValues(const Node& node, const std::vector<const Tensor*>& inputs);

}  // namespace tessera
