#pragma once
// Matching the nodes and fusion groups of two compiles of one model (two branches, two sessions, two pass
// pipelines): which node of B is which node of A, and how each fusion group changed.
#include <map>
#include <string>
#include <vector>

#include "fusion/compile.h"

namespace tessera::compare {

// How a pair of nodes was matched, in the order tried.
enum class MatchBy {
  Mapping,     // the user said so (CompareOptions::mapping)
  Id,          // the same node id
  Name,        // the same first output value name
  Provenance,  // both came from the same input nodes through the passes (a rewrite gives a node a new id)
};
const std::string& matchByName(MatchBy by);

struct NodeMatch {
  std::string a, b;
  MatchBy by = MatchBy::Id;
  bool changed = false;  // op, attributes, inputs or output types differ
};

struct NodeMatching {
  std::vector<NodeMatch> matched;          // in A's topological order
  std::vector<std::string> removed, added;  // only in A / only in B
  std::map<std::string, std::string> aToB, bToA;
};

// `mapping`: A node id → B node id, tried first (an id absent from its graph is ignored).
NodeMatching matchNodes(const CompileResult& a, const CompileResult& b, const std::map<std::string, std::string>& mapping);

// One connected piece of the two partitions: A's groups and B's groups that share (matched) nodes.
struct GroupChange {
  enum Kind { Same, Changed, Split, Merged, Regrouped, Removed, Added };
  Kind kind = Same;
  std::vector<std::string> a, b;  // group ids ("k3"), in each side's order
};
const std::string& groupChangeName(GroupChange::Kind kind);

// Groups of A against groups of B through `nodes`; Same when the node sets and kinds are equal.
std::vector<GroupChange> matchGroups(const FusionResult& a, const FusionResult& b, const NodeMatching& nodes);

}  // namespace tessera::compare
