#include "passes/decompose_rotary.h"

#include "passes/decompose_emitter.h"

namespace tessera {
namespace {
using decompose::Emitter;

// Features [from, to) of the last axis.
Value* lastAxis(Emitter& e, const std::string& name, Value* x, int64_t from, int64_t to) {
  return e.op(name, "Slice", {x, e.ints(name + "_from", {from}), e.ints(name + "_to", {to}), e.ints(name + "_axis", {-1})});
}

}  // namespace

Value* rotaryAsPrimitives(Graph& g, const Node& n) {
  Emitter e(g, n);
  Value* x = n.input(0);
  const Shape& xs = x->shape();
  bool fourD = xs.size() == 4;
  int64_t batch = xs[0], seq = fourD ? xs[2] : xs[1], heads = fourD ? xs[1] : n.attrInt("num_heads", 0);
  if (heads <= 0 || (!fourD && xs[2] % heads)) return nullptr;
  int64_t head = fourD ? xs[3] : xs[2] / heads, rotary = n.attrInt("rotary_embedding_dim", 0);
  if (rotary == 0) rotary = head;
  if (rotary <= 0 || rotary > head || rotary % 2) return nullptr;
  int64_t half = rotary / 2;
  bool interleaved = n.attrInt("interleaved", 0) != 0;
  // x as [batch, heads, seq, head] or [batch, seq, heads, head]; cos and sin as [batch, 1, seq, half] or
  // [batch, seq, 1, half] to broadcast over the heads (with a trailing 1 for the interleaved pairs).
  Value* x4 = fourD ? x : e.reshape("heads", x, {batch, seq, heads, head});
  Shape angles = fourD ? Shape{batch, 1, seq, half} : Shape{batch, seq, 1, half};
  if (interleaved) angles.push_back(1);
  auto cache = [&](const std::string& name, Value* c) {
    Value* rows = n.numInputs() > 3 && n.input(3) ? e.op(name + "_rows", "Gather", {c, n.input(3)}, {{"axis", int64_t(0)}}) : c;
    return e.reshape(name, lastAxis(e, name + "_half", rows, 0, half), angles);
  };
  Value* cos = cache("cos", n.input(1));
  Value* sin = cache("sin", n.input(2));
  Value* part = rotary < head ? lastAxis(e, "rotated", x4, 0, rotary) : x4;
  Value *x1, *x2;
  Shape partShape = part->shape();
  if (interleaved) {
    Shape pairs = partShape;
    pairs.back() = half;
    pairs.push_back(2);
    Value* p = e.reshape("pairs", part, pairs);
    x1 = lastAxis(e, "first", p, 0, 1);
    x2 = lastAxis(e, "second", p, 1, 2);
  } else {
    x1 = lastAxis(e, "first", part, 0, half);
    x2 = lastAxis(e, "second", part, half, rotary);
  }
  Value* y1 = e.op("y1", "Sub", {e.op("x1cos", "Mul", {x1, cos}), e.op("x2sin", "Mul", {x2, sin})});
  Value* y2 = e.op("y2", "Add", {e.op("x1sin", "Mul", {x1, sin}), e.op("x2cos", "Mul", {x2, cos})});
  Value* y = e.op("turned", "Concat", {y1, y2}, {{"axis", int64_t(-1)}});
  if (interleaved) y = e.reshape("unpaired", y, partShape);
  if (rotary < head) y = e.op("joined", "Concat", {y, lastAxis(e, "passed", x4, rotary, head)}, {{"axis", int64_t(-1)}});
  return fourD ? y : e.reshape("out", y, xs);
}

}  // namespace tessera
