#pragma once
// Graph-wide type inference with constant propagation: small values computable at compile time
// (Shape → Gather → Concat → Reshape chains, Constant nodes, initializers) are evaluated with the reference
// semantics so that shape operands are known.
#include <memory>
#include <unordered_map>

#include "ir/graph.h"

namespace tessera {

// Values known at compile time, by value. Owned by whoever ran inference.
class ConstantTable {
 public:
  const Tensor* find(const Value* v) const;
  void set(const Value* v, Tensor t) {
    foldedElements_ += t.numElements();
    known_[v] = std::move(t);
  }
  size_t size() const { return known_.size(); }
  // Elements of every tensor set so far: bounds what a small hostile file can make inference hold.
  int64_t foldedElements() const { return foldedElements_; }

 private:
  std::unordered_map<const Value*, Tensor> known_;
  int64_t foldedElements_ = 0;
};

// Largest output (in elements) that inference evaluates to propagate constants.
inline constexpr int64_t kMaxFoldElements = 1 << 16;
// Bounds on what a small hostile file can make folding cost: no node above kMaxFoldFlops is folded, and
// outputs above kAlwaysFoldElements (shape arithmetic stays below it) only while the table holds fewer than
// kMaxFoldTotalElements elements. Without them a chain of large foldable nodes takes gigabytes and minutes.
inline constexpr int64_t kAlwaysFoldElements = 64;
inline constexpr int64_t kMaxFoldTotalElements = int64_t(1) << 24;
inline constexpr int64_t kMaxFoldFlops = int64_t(1) << 24;

// Infers the type of every node output in topological order, overwriting the types present.
// Throws Error naming the node on the first failure. Returns the constants it found.
ConstantTable inferTypes(Graph& graph);

// After a node's output types are set: records its outputs as constants when all its inputs are known and
// the outputs are small (Shape and Size only need their input's type).
void propagateConstants(const Node& node, ConstantTable& constants);

// The extents a Shape node returns: its input's dims [start, end), negative values counted from the end, clamped.
std::vector<int64_t> shapeSlice(const Node& node, const Shape& inputShape);

// Infers one node's output types given a constant lookup; does not modify the graph. A node whose op the
// registry does not know (ops/registry.h, isKnownOp) keeps the types its outputs have: the declared ones. A node
// whose types need values the table lacks takes the types it was specialized to (ops/specialize.h). With
// `runValues`, the table holds a run's values (ops/specialize.h, evalOnValues): their types are the inputs' types,
// and no specialization stands in (NeedsValuesError propagates).
std::vector<TensorType> inferNode(const Node& node, const ConstantTable& constants, bool runValues = false);

}  // namespace tessera
