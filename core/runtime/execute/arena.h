#pragma once
// Internal: the executor's host memory. Graph inputs and initializers are copied in; the values kernels write go
// into the memory plan's buffers (planMemory), except that a planned buffer still holding a value some later
// kernel reads is not reused: the value gets a buffer of its own (the plan is per node; fused kernels read their
// inputs throughout). The values constant kernels make (constantKernels) get buffers of their own too, as
// initializers do: a deployment makes them once, at load, so no value of a run may take their place. ArenaLayout
// makes those choices without memory, so a run's size is known before it starts (arenaBytes), and the arena can
// take all of it from one block the backend runs kernels on in place (KernelBackend::residentMemory).
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "passes/plan_memory.h"
#include "runtime/execute/compiled_model.h"

namespace tessera::execute::detail {

// The kernels whose every input is a constant (an initializer, or made by such a kernel) and that draw no random
// numbers: computed once at load (RunReport: their time is onceMs, not the total; a whole run leaves them out).
std::vector<bool> constantKernels(const Graph& g, const std::vector<CompiledKernel>& kernels);

class ArenaLayout {
 public:
  ArenaLayout(const Graph& g, const std::vector<CompiledKernel>& kernels);
  // The planned buffer kernel `index` writes `value` (bytes long) into, or -1: it needs a buffer of its own.
  int place(const std::string& value, size_t bytes, size_t index);
  const MemoryPlan& plan() const { return plan_; }
  const std::vector<bool>& constantKernels() const { return once_; }  // constantKernels(g, kernels)

 private:
  MemoryPlan plan_;
  std::map<int, std::string> occupant_;
  std::map<std::string, size_t> lastReader_;
  std::vector<bool> once_;           // constantKernels(g, kernels)
  std::set<std::string> constants_;  // outputs of constant kernels: never in a planned (shared) buffer
};

// The values that are the same on every run of a model: its initializers (but those that are graph inputs too),
// the outputs of its constant kernels and the packed copies (Buffer::packBlock) of either, each at a fixed offset
// at the start of the arena's block. A driver's next run of the same model in the same block (RunSession) finds
// them there, so it neither copies, packs nor zeroes them again.
struct ConstantZone {
  std::map<std::string, std::pair<size_t, size_t>> at;  // value (readName for a packed copy) -> offset, bytes
  size_t bytes = 0;                                     // the zone's length, 64-byte aligned
  std::string signature;                                // names and sizes in order: equal zones lay out the same
};
ConstantZone constantZone(const Graph& g, const std::vector<CompiledKernel>& kernels);

// Sequences and optionals (ir/shape.h) are not bytes: they are held as they are, beside the buffers, and only host
// groups read or make them. So is a tensor a host group made with other extents than the graph's (a data-dependent
// shape on inputs other than the sample's, ops/specialize.h): no kernel built for the graph's extents may read it.
class Arena {
 public:
  // `block` (null: none) is zeroed memory of `blockBytes` (arenaBytes(g, kernels)) that values are carved from,
  // 64-byte aligned; what does not fit (a run that places values otherwise than arenaBytes foresaw) goes to the heap.
  // With `zone` (constantZone(g, kernels)) the constant values take its offsets at the block's start; `kept`: the
  // zone's values the block already holds there from an earlier run of the same model (its zoneValues()), which
  // are neither copied nor packed again (the rest of the block was zeroed).
  Arena(const Graph& g, const std::vector<Tensor>& inputs, const std::vector<CompiledKernel>& kernels,
        std::byte* block = nullptr, size_t blockBytes = 0, const ConstantZone* zone = nullptr,
        const std::set<std::string>* kept = nullptr);
  // Where `value` is, or null when nothing wrote it (a container's holder, whose address means only "written").
  void* find(const std::string& value);
  // Where kernel `index` writes `value`.
  void* place(const std::string& value, size_t bytes, size_t index);
  // Where a kernel reads input buffer `b` from: its value, or for a packed buffer (Buffer::packBlock) the
  // value's packed copy, made on the first request and kept for the run (the value is written once a run);
  // null when the value was never written.
  void* input(const kernel::Buffer& b);
  void set(const std::string& value, const Tensor& t, size_t index);
  Tensor read(const std::string& value);
  // The same value without a copy: a tensor over the arena's bytes, to read while no kernel runs (comparing a
  // kernel's outputs with the reference's: vgg19-light's fill kernels write 548 MB each run); it must not outlive
  // the arena's block.
  Tensor view(const std::string& value);
  // The type `value` has on this run when it is not the graph's (held with other extents), else nullopt.
  std::optional<TensorType> otherType(const std::string& value) const;
  const std::vector<bool>& constantKernels() const { return layout_.constantKernels(); }
  size_t keptBytes() const;  // the bytes of the zone's values found in place (kept), not copied or packed again
  // The zone's values this run placed (found kept, or written): what a later run may find in place.
  const std::set<std::string>& zoneValues() const { return placedInZone_; }

 private:
  void own(const std::string& name, const Tensor& t);
  std::byte* take(size_t bytes);  // zeroed memory from the block, else from the heap
  std::byte* inZone(const std::string& name, size_t bytes);  // the zone's place for a constant value, or null
  const Graph& g_;
  ArenaLayout layout_;
  std::byte* block_;
  size_t blockBytes_, used_ = 0;
  const ConstantZone* zone_;
  const std::set<std::string>* kept_;
  std::set<std::string> placedInZone_;
  bool keptHere(const std::string& name) const { return kept_ && kept_->count(name); }
  std::vector<std::byte*> planned_;
  std::list<std::vector<std::byte>> heap_;
  std::map<std::string, void*> where_;
  std::map<std::string, Tensor> held_;  // containers, and tensors with other extents than the graph's
};

size_t bufferBytes(const kernel::Buffer& b);  // a kernel buffer's bytes
// The name what a kernel reads for buffer `b` goes by: its value's, or for a packed buffer its copy's (a device
// backend keeps it apart from the value): "w|packed(0,32)".
std::string readName(const kernel::Buffer& b);

// The bytes an Arena for `kernels` holds once every kernel has written its outputs, each value's rounded up to 64.
uint64_t arenaBytes(const Graph& g, const std::vector<CompiledKernel>& kernels);

}  // namespace tessera::execute::detail
