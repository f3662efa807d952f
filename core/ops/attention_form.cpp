#include "ops/attention_form.h"

#include <algorithm>

#include "ir/constant.h"

namespace tessera::ops {
namespace {

// A reduction of `n`'s input 0 over its last axis only, keeping it.
bool reducesLastAxis(const Node& n, const char* op) {
  if (n.op() != op || !n.input(0) || n.attrInt("keepdims", 1) != 1) return false;
  int64_t rank = int64_t(n.input(0)->shape().size());
  std::optional<std::vector<int64_t>> axes;
  if (n.numInputs() > 1 && n.input(1)) axes = tessera::constantInts(n.input(1));
  else if (n.hasAttr("axes")) axes = n.attrInts("axes");
  return rank >= 1 && axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == rank - 1);
}

const Node* producer(const Value* v, const char* op) {
  const Node* p = v ? v->producer() : nullptr;
  return p && p->op() == op && p->output(0) == v ? p : nullptr;
}

// Every reader of `v` is one of `nodes`, and it is not a graph output.
bool readOnlyBy(const Value* v, const std::vector<const Node*>& nodes) {
  if (!v || v->isGraphOutput()) return false;
  for (const Use& u : v->uses())
    if (std::find(nodes.begin(), nodes.end(), u.node) == nodes.end()) return false;
  return true;
}

std::optional<SoftmaxForm> expanded(const Node& div) {
  const Node* exp = producer(div.input(0), "Exp");
  const Node* sum = producer(div.input(1), "ReduceSum");
  if (!exp || !sum || sum->input(0) != exp->output(0) || !reducesLastAxis(*sum, "ReduceSum")) return std::nullopt;
  const Node* sub = producer(exp->input(0), "Sub");
  const Node* max = sub ? producer(sub->input(1), "ReduceMax") : nullptr;
  if (!max || max->input(0) != sub->input(0) || !reducesLastAxis(*max, "ReduceMax")) return std::nullopt;
  SoftmaxForm f{{max, sub, exp, sum, &div}, sub->input(0), div.output(0)};
  if (!readOnlyBy(max->output(0), {sub}) || !readOnlyBy(sub->output(0), {exp}) ||
      !readOnlyBy(exp->output(0), {sum, &div}) || !readOnlyBy(sum->output(0), {&div}))
    return std::nullopt;
  return f;
}

}  // namespace

std::optional<SoftmaxForm> lastAxisSoftmax(const Node& last) {
  if (last.op() == "Div") return expanded(last);
  if (last.op() != "Softmax" || !last.input(0)) return std::nullopt;
  int64_t rank = int64_t(last.input(0)->shape().size());
  int64_t axis = last.attrInt("axis", -1);
  if (rank < 1 || (axis != -1 && axis != rank - 1)) return std::nullopt;
  return SoftmaxForm{{&last}, last.input(0), last.output(0)};
}

bool transposesKeyRows(const Node& t) {
  const Value* in = t.op() == "Transpose" ? t.input(0) : nullptr;
  size_t rank = in ? in->shape().size() : 0;
  if (rank < 2) return false;
  std::vector<int64_t> reversed(rank);
  for (size_t a = 0; a < rank; ++a) reversed[a] = int64_t(rank - 1 - a);
  std::vector<int64_t> perm = t.attrInts("perm", reversed);
  return perm.size() == rank && perm[rank - 2] == int64_t(rank - 1);
}

}  // namespace tessera::ops
