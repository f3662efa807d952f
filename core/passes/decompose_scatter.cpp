#include "passes/decompose_scatter.h"

#include "ir/error.h"
#include "ops/registry.h"
#include "ops/scatter.h"
#include "passes/decompose_emitter.h"

namespace tessera {

namespace {
using decompose::Emitter;
constexpr int64_t kMaxMapElements = int64_t(1) << 24;
}  // namespace

Value* scatterAsGather(Graph& g, const Node& n) {
  if (n.attrString("reduction", "none") != "none") return nullptr;
  for (const char* op : {"Reshape", "Concat", "Gather"})
    if (!OpRegistry::instance().find(op)) return nullptr;
  Value *data = n.input(0), *updates = n.input(2);
  std::optional<Tensor> indices = materializeConstant(n.input(1));
  int64_t elements = numElements(data->shape()), written = numElements(updates->shape());
  if (!indices || elements == 0 || elements > kMaxMapElements) return nullptr;
  std::vector<int64_t> targets;
  try {
    targets = ops::scatterTargets(n, data->shape(), indices->shape(), indices->toInts());
  } catch (const Error&) {
    return nullptr;  // out of range: the node stays, and a run reports it as the reference does
  }
  if (int64_t(targets.size()) != written) return nullptr;
  std::vector<int64_t> map(static_cast<size_t>(elements));
  for (int64_t p = 0; p < elements; ++p) map[size_t(p)] = written + p;  // untouched: data's own element
  for (size_t k = 0; k < targets.size(); ++k) map[size_t(targets[k])] = int64_t(k);  // in order: the last wins
  Emitter e(g, n);
  Value* flatData = e.reshape("data_flat", data, {elements});
  Value* source = written ? e.op("source", "Concat", {e.reshape("updates_flat", updates, {written}), flatData}, {{"axis", int64_t(0)}})
                          : flatData;
  Value* where = addConstant(g, n.id() + ".map", Tensor::fromInts(DType::I32, data->shape(), map));
  return e.op("gather", "Gather", {source, where}, {{"axis", int64_t(0)}});
}

}  // namespace tessera
