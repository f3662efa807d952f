#pragma once
// Cheap content fingerprints of nodes and graphs: how the step recorder tells what a pass changed.
#include <cstdint>
#include <string>
#include <unordered_map>

#include "ir/graph.h"

namespace tessera {

// Op, attributes, input value names and output types of one node (not its id).
uint64_t nodeFingerprint(const Node& node);
// Every node's fingerprint, by node id.
std::unordered_map<std::string, uint64_t> nodeFingerprints(const Graph& graph);
// The whole graph: nodes (ids, fingerprints, output names), inputs, initializers and outputs. Large
// initializers are identified by their shared storage instead of hashing their bytes (tensors are
// immutable by convention, so the same storage means the same data).
uint64_t graphFingerprint(const Graph& graph);
// Attribute hash, shared with CSE.
uint64_t attributeHash(const Attribute& attr);

}  // namespace tessera
