#include "runtime/execute/arena.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "ir/error.h"
#include "ops/registry.h"

namespace tessera::execute::detail {

using kernel::BufferRole;

size_t bufferBytes(const kernel::Buffer& b) { return numElements(b.shape) * dtypeSize(b.dtype); }

std::string readName(const kernel::Buffer& b) {
  if (!b.packBlock) return b.value;
  return b.value + "|packed(" + std::to_string(b.packAxis) + "," + std::to_string(b.packBlock) + ")";
}

namespace {
uint64_t valueBytes(const Value& v) { return uint64_t(numElements(v.shape())) * dtypeSize(v.dtype()); }
// A value's room in the arena: at least one byte (an empty value still has an address), 64-byte aligned.
uint64_t room(uint64_t bytes) { return (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64; }
}  // namespace

// The kernels whose every input is a constant (an initializer, or made by such a kernel) and that draw no random
// numbers: their outputs are the same on every run, so a deployment computes them once when it loads the model.
// fold-constants leaves such nodes as ops only when their results are too large to keep in the graph (the
// weights a light model makes with ConstantOfShape).
std::vector<bool> constantKernels(const Graph& g, const std::vector<CompiledKernel>& kernels) {
  std::set<const Value*> constant;
  for (const Value* v : g.initializers()) constant.insert(v);
  std::vector<bool> once(kernels.size(), false);
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::set<const Node*> group;
    for (const std::string& id : kernels[i].spec.nodeIds) group.insert(g.findNode(id));
    bool all = !group.count(nullptr);
    for (const Node* n : group) {
      if (!n) continue;
      all = all && !opTraits(n->op()).random && !opTraits(n->op()).randomInTraining;
      for (const Value* in : n->inputs())
        all = all && (!in || constant.count(in) || (in->producer() && group.count(in->producer())));
    }
    if (!all) continue;
    once[i] = true;
    for (const Node* n : group)
      for (const Value* out : n->outputs()) constant.insert(out);
  }
  return once;
}

ArenaLayout::ArenaLayout(const Graph& g, const std::vector<CompiledKernel>& kernels)
    : plan_(planMemory(g)), once_(detail::constantKernels(g, kernels)) {
  for (size_t i = 0; i < kernels.size(); ++i)
    for (const auto& b : kernels[i].kernel.buffers) {
      if (b.role == BufferRole::Input) lastReader_[b.value] = i;
      if (b.role == BufferRole::Output && once_[i]) constants_.insert(b.value);
    }
  for (Value* v : g.outputs()) lastReader_[v->name()] = kernels.size();
}

int ArenaLayout::place(const std::string& value, size_t bytes, size_t index) {
  if (constants_.count(value)) return -1;
  auto it = plan_.bufferOf.find(value);
  if (it == plan_.bufferOf.end() || static_cast<size_t>(plan_.bufferBytes[it->second]) < bytes) return -1;
  std::string& occupant = occupant_[it->second];
  bool busy = !occupant.empty() && lastReader_.count(occupant) && lastReader_[occupant] >= index;
  if (busy) return -1;
  occupant = value;
  return it->second;
}

ConstantZone constantZone(const Graph& g, const std::vector<CompiledKernel>& kernels) {
  ConstantZone z;
  std::set<std::string> inputs, constant;
  for (const Value* v : g.inputs()) inputs.insert(v->name());
  auto add = [&](const std::string& name, uint64_t bytes) {
    if (!z.at.emplace(name, std::make_pair(z.bytes, size_t(bytes))).second) return;
    z.bytes += room(bytes);
    z.signature += name + ":" + std::to_string(bytes) + ";";
  };
  for (const Value* v : g.initializers())
    if (!inputs.count(v->name()) && v->initializer() && !v->initializer()->holdsObjects())
      add(v->name(), valueBytes(*v)), constant.insert(v->name());
  const std::vector<bool> once = constantKernels(g, kernels);
  for (size_t i = 0; i < kernels.size(); ++i)
    for (const auto& b : kernels[i].kernel.buffers)
      if (once[i] && b.role == BufferRole::Output) add(b.value, bufferBytes(b)), constant.insert(b.value);
  for (const CompiledKernel& k : kernels)
    for (const auto& b : k.kernel.buffers)
      if (b.role == BufferRole::Input && b.packBlock && constant.count(b.value)) add(readName(b), bufferBytes(b));
  return z;
}

Arena::Arena(const Graph& g, const std::vector<Tensor>& inputs, const std::vector<CompiledKernel>& kernels,
             std::byte* block, size_t blockBytes, const ConstantZone* zone, const std::set<std::string>* kept)
    : g_(g), layout_(g, kernels), block_(block), blockBytes_(block ? blockBytes : 0),
      zone_(block && zone && zone->bytes <= blockBytes ? zone : nullptr), kept_(zone_ ? kept : nullptr) {
  if (zone_) used_ = zone_->bytes;
  for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i) own(g.inputs()[i]->name(), inputs[i]);
  for (Value* v : g.initializers()) own(v->name(), *v->initializer());
  for (int64_t bytes : layout_.plan().bufferBytes) planned_.push_back(take(size_t(bytes)));
}

std::byte* Arena::inZone(const std::string& name, size_t bytes) {
  if (!zone_) return nullptr;
  auto it = zone_->at.find(name);
  if (it == zone_->at.end() || bytes > it->second.second) return nullptr;
  placedInZone_.insert(name);
  return block_ + it->second.first;
}

size_t Arena::keptBytes() const {
  size_t bytes = 0;
  for (const std::string& name : placedInZone_)
    if (keptHere(name)) bytes += zone_->at.at(name).second;
  return bytes;
}

std::byte* Arena::take(size_t bytes) {
  if (used_ + room(bytes) <= blockBytes_) {
    std::byte* p = block_ + used_;
    used_ += room(bytes);
    return p;
  }
  return heap_.emplace_back(std::max<size_t>(bytes, 1)).data();
}

void* Arena::find(const std::string& value) {
  if (auto held = held_.find(value); held != held_.end()) return &held->second;
  auto it = where_.find(value);
  return it == where_.end() ? nullptr : it->second;
}

void* Arena::input(const kernel::Buffer& b) {
  void* value = find(b.value);
  if (!b.packBlock || !value) return value;
  const std::string name = readName(b);
  if (auto it = where_.find(name); it != where_.end()) return it->second;
  if (held_.count(b.value)) fail("value '" + b.value + "' has other extents on this run than the packed buffer of its kernel");
  std::byte* kept = inZone(name, bufferBytes(b));
  std::byte* copy = kept ? kept : take(bufferBytes(b));
  if (!kept || !keptHere(name)) kernel::packBytes(b, static_cast<const std::byte*>(value), copy, dtypeSize(b.dtype));
  return where_[name] = copy;
}

void* Arena::place(const std::string& value, size_t bytes, size_t index) {
  if (void* p = find(value)) return p;
  if (std::byte* p = inZone(value, bytes)) return where_[value] = p;  // a constant kernel's output
  int slot = layout_.place(value, bytes, index);
  return where_[value] = slot >= 0 ? planned_[size_t(slot)] : take(bytes);
}

void Arena::set(const std::string& value, const Tensor& t, size_t index) {
  const Value* v = g_.findValue(value);
  if (t.holdsObjects() || (v && v->type().isTensor() && t.type() != v->type())) {
    held_.insert_or_assign(value, t);
    return;
  }
  void* p = place(value, t.byteSize(), index);
  if (t.byteSize()) std::memcpy(p, t.bytes().data(), t.byteSize());  // empty tensors may have null storage
}

Tensor Arena::read(const std::string& value) {
  Tensor seen = view(value);
  if (!seen.mapped()) return seen;  // held on the host
  Tensor t = Tensor::uninitialized(seen.dtype(), seen.shape());
  if (t.byteSize()) std::memcpy(t.mutableBytes().data(), seen.bytes().data(), t.byteSize());
  return t;
}

Tensor Arena::view(const std::string& value) {
  Value* v = g_.findValue(value);
  if (!v) fail("run: no value '" + value + "' in the graph");
  if (auto held = held_.find(value); held != held_.end()) return held->second;
  if (!v->type().isTensor() || v->dtype() == DType::String) fail("run: value '" + value + "' was never written");
  void* p = find(value);
  if (!p) fail("run: value '" + value + "' was never written");
  const TensorType type{v->dtype(), v->shape()};
  return Tensor::fromMapping(type, {static_cast<std::byte*>(p), size_t(type.bytes())}, std::shared_ptr<void>(p, [](void*) {}));
}

void Arena::own(const std::string& name, const Tensor& t) {
  if (t.holdsObjects()) {
    held_.insert_or_assign(name, t);
    return;
  }
  std::byte* kept = inZone(name, t.byteSize());
  std::byte* p = kept ? kept : take(t.byteSize());
  if (t.byteSize() && (!kept || !keptHere(name))) std::memcpy(p, t.bytes().data(), t.byteSize());
  where_[name] = p;
}

std::optional<TensorType> Arena::otherType(const std::string& value) const {
  auto held = held_.find(value);
  if (held == held_.end() || held->second.holdsObjects()) return std::nullopt;
  return held->second.type();
}

uint64_t arenaBytes(const Graph& g, const std::vector<CompiledKernel>& kernels) {
  ArenaLayout layout(g, kernels);
  const ConstantZone zone = constantZone(g, kernels);
  uint64_t total = zone.bytes;
  std::set<std::string> placed;
  for (const auto& [name, at] : zone.at) placed.insert(name);
  for (Value* v : g.inputs()) placed.insert(v->name()), total += room(valueBytes(*v));
  for (Value* v : g.initializers())
    if (!zone.at.count(v->name())) placed.insert(v->name()), total += room(valueBytes(*v));
  for (int64_t bytes : layout.plan().bufferBytes) total += room(uint64_t(bytes));
  for (size_t i = 0; i < kernels.size(); ++i)
    for (const auto& b : kernels[i].kernel.buffers)
      if (b.role == BufferRole::Output && placed.insert(b.value).second && layout.place(b.value, bufferBytes(b), i) < 0)
        total += room(bufferBytes(b));
      else if (b.role == BufferRole::Input && b.packBlock && placed.insert(readName(b)).second)
        total += room(bufferBytes(b));  // its packed copy (Arena::input)
  return total;
}

}  // namespace tessera::execute::detail
