// RotaryEmbedding (opset 23): rotates pairs of each head's first rotary_embedding_dim features by the angle whose
// cosine and sine the caches hold for the token's position. X is [batch, heads, seq, head] or [batch, seq,
// heads * head] (num_heads then says how to split the last dim). Pairs are (j, j + half) or, interleaved,
// (2j, 2j + 1); features past rotary_embedding_dim pass through.
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

struct RotaryGeometry {
  int64_t batch, seq, heads, head, rotary;
  bool fourD;
  // Flat offset of feature d of head h of token (b, s).
  int64_t at(int64_t b, int64_t s, int64_t h, int64_t d) const {
    return fourD ? ((b * heads + h) * seq + s) * head + d : ((b * seq + s) * heads + h) * head + d;
  }
};

RotaryGeometry rotaryGeometry(const Node& node, const Shape& x) {
  RotaryGeometry g{};
  g.fourD = x.size() == 4;
  if (x.size() != 3 && !g.fourD) failNode(node, "input 0 (X) must have rank 3 or 4, not " + shapeToString(x));
  g.batch = x[0];
  g.seq = g.fourD ? x[2] : x[1];
  g.heads = g.fourD ? x[1] : node.attrInt("num_heads", 0);
  if (g.heads <= 0 || (!g.fourD && x[2] % g.heads))
    failNode(node, "a 3-D X " + shapeToString(x) + " needs attribute num_heads dividing its last dim");
  g.head = g.fourD ? x[3] : x[2] / g.heads;
  g.rotary = node.attrInt("rotary_embedding_dim", 0);
  if (g.rotary == 0) g.rotary = g.head;
  if (g.rotary < 0 || g.rotary > g.head || g.rotary % 2)
    failNode(node, "rotary_embedding_dim " + std::to_string(g.rotary) + " must be even and at most the head size " +
                       std::to_string(g.head));
  return g;
}

void inferRotary(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  RotaryGeometry g = rotaryGeometry(ctx.node(), ctx.input(0).shape);
  bool positions = ctx.hasInput(3);
  for (size_t i = 1; i < 3; ++i) {
    requireSameDType(ctx, 0, i);
    const Shape& c = ctx.input(i).shape;
    bool ok = positions ? c.size() == 2 : c.size() == 3 && c[0] == g.batch && c[1] == g.seq;
    if (!ok || c.back() < g.rotary / 2)
      ctx.error(
          "input " + std::to_string(i) + " (" + (i == 1 ? "cos" : "sin") + "_cache) " + ctx.input(i).toString() +
          (positions ? " must be [max_position, >= rotary_dim / 2]" : " must be [batch, seq, >= rotary_dim / 2]"));
  }
  if (ctx.input(1).shape != ctx.input(2).shape) ctx.error("cos_cache and sin_cache must have the same shape");
  if (positions && ctx.input(3).shape != Shape{g.batch, g.seq})
    ctx.error("input 3 (position_ids) " + ctx.input(3).toString() + " must be [batch, seq] = [" +
              std::to_string(g.batch) + "," + std::to_string(g.seq) + "]");
  if (positions) requireDType(ctx, 3, {DType::I64});
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalRotary(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  RotaryGeometry g = rotaryGeometry(node, in[0]->shape());
  bool interleaved = node.attrInt("interleaved", 0) != 0;
  const Tensor* positions = in.size() > 3 ? in[3] : nullptr;
  std::vector<double> x = in[0]->toDoubles(), y = x, cosv = in[1]->toDoubles(), sinv = in[2]->toDoubles();
  const Shape& cache = in[1]->shape();
  int64_t width = cache.back(), half = g.rotary / 2;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t s = 0; s < g.seq; ++s) {
      int64_t row = b * g.seq + s;  // the cache row without position_ids
      if (positions) {
        row = positions->getInt(b * g.seq + s);
        if (row < 0 || row >= cache[0])
          failNode(node, "position id " + std::to_string(row) + " is outside the caches' " +
                             std::to_string(cache[0]) + " positions");
      }
      for (int64_t h = 0; h < g.heads; ++h)
        for (int64_t j = 0; j < half; ++j) {
          int64_t i1 = g.at(b, s, h, interleaved ? 2 * j : j), i2 = g.at(b, s, h, interleaved ? 2 * j + 1 : j + half);
          double c = cosv[size_t(row * width + j)], sn = sinv[size_t(row * width + j)];
          y[size_t(i1)] = c * x[size_t(i1)] - sn * x[size_t(i2)];
          y[size_t(i2)] = sn * x[size_t(i1)] + c * x[size_t(i2)];
        }
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerRotaryOps(OpRegistry& r) {
  addOp(r, {"RotaryEmbedding", OpCategory::Other, "rotate feature pairs of each head by the cached cos/sin of the "
            "token's position", 3, 4, 1, 1, {}, inferRotary, evalRotary});
}

}  // namespace tessera
