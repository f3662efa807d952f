#include "ir/constant.h"

namespace tessera {

const Tensor* constantValue(const Value* v) {
  if (!v) return nullptr;
  if (const Tensor* t = v->initializer()) return t;
  const Node* p = v->producer();
  if (p && p->op() == "Constant" && p->numInputs() == 0)
    if (const Attribute* a = p->attr("value"); a && a->kind() == AttrKind::Tensor) return &a->t();
  return nullptr;
}

std::optional<std::vector<int64_t>> constantInts(const Value* v) {
  if (const Tensor* t = constantValue(v)) return t->toInts();
  return std::nullopt;
}

}  // namespace tessera
