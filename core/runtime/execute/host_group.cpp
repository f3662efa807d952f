#include "runtime/execute/host_group.h"

#include <chrono>
#include <unordered_map>

#include "ir/error.h"
#include "ops/specialize.h"
#include "runtime/reference/interpreter.h"

namespace tessera::execute::detail {

using kernel::BufferRole;

double runHostGroup(const CompiledModel& m, size_t index, Arena& arena, const CancelToken& cancel) {
  const CompiledKernel& ck = m.kernels.at(index);
  const auto start = std::chrono::steady_clock::now();
  std::unordered_map<std::string, Tensor> values;
  for (const auto& b : ck.kernel.buffers) {
    if (b.role != BufferRole::Input) continue;
    if (!arena.find(b.value)) fail("value '" + b.value + "' read by host group " + ck.spec.id + " was never written");
    values[b.value] = arena.read(b.value);
  }
  std::unordered_map<std::string, Tensor> made = runReferenceNodes(*m.graph, ck.spec.nodeIds, values, cancel);
  for (const auto& b : ck.kernel.buffers) {
    if (b.role != BufferRole::Output) continue;
    auto it = made.find(b.value);
    if (it == made.end()) fail("host group " + ck.spec.id + " made no value '" + b.value + "'");
    arena.set(b.value, it->second, index);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

namespace {

bool holdsSpecializedNode(const Graph& g, const CompiledKernel& ck) {
  for (const std::string& id : ck.spec.nodeIds)
    if (const Node* n = g.findNode(id); n && isSpecialized(*n)) return true;
  return false;
}

}  // namespace

std::set<std::string> valuesReadOnHost(const CompiledModel& m) {
  std::set<std::string> read, mayChange;  // mayChange: values whose extents may follow a specialized node's data
  for (const CompiledKernel& ck : m.kernels) {
    bool after = holdsSpecializedNode(*m.graph, ck);
    for (const auto& b : ck.kernel.buffers) {
      after = after || (b.role == BufferRole::Input && mayChange.count(b.value));
      if (b.role == BufferRole::Input && b.packBlock) read.insert(b.value);  // packed on the host (Arena::input)
    }
    if (!ck.onHost() && !after) continue;
    for (const auto& b : ck.kernel.buffers)
      if (b.role == BufferRole::Input) read.insert(b.value);
      else if (after && b.role == BufferRole::Output) mayChange.insert(b.value);
  }
  return read;
}

}  // namespace tessera::execute::detail
