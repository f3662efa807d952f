#pragma once
// The iteration space of a node or a group: what a kernel template loops over. Fusion merges two spaces
// when one template can run both in one loop nest and one tiling, and names the legality rule when not.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessera {

// Attention: a whole attention pattern (attention.h), formed only by its own rule, never merged further.
enum class SpaceKind { Pointwise, Reduction, Gemm, Conv, Move, Attention, Opaque };

struct Space {
  SpaceKind kind = SpaceKind::Opaque;
  Shape shape;                // the loop extents: the output shape, or for a reduction its input shape
  std::vector<int64_t> axes;  // reduction: the reduced axes of `shape`, sorted
  Shape reduced;              // reduction: the output shape (keepdims or not; pooled for windows)
  bool windowed = false;      // sliding-window pool: rows overlap, so nothing else reduces alongside it
  std::string anchorOp;       // the op that sets the space ("MatMul", "ReduceMax", ...), for reasons
};

// The space of one node, from its op category (ops/registry.h) and its types.
Space nodeSpace(const Node& node);

// The outcome of asking whether a consumer-side space can join a producer-side group space.
struct MergeCheck {
  std::optional<Space> merged;  // set when legal
  std::string rule;             // the legality rule broken, or the fused pattern ("epilogue", ...)
  std::string reason;           // one sentence with the shapes
  double recompute = 1.0;       // how many times the producer side's work repeats in the merged space
};
MergeCheck mergeSpaces(const Space& producer, const Space& consumer);
// A lone Transpose whose result only the Conv `consumer` reads, as its input 0, folds into the conv's input
// loads (an NHWC input read where it lies, docs/fusion.md): the merged space is the conv's. Null otherwise.
std::optional<MergeCheck> transposeIntoConv(const Node& producer, const Node& consumer, const Space& convGroup);

std::string describeSpace(const Space& s);  // "row reduction of [256,1024] over axis 1"

}  // namespace tessera
