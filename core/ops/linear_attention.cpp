// LinearAttention (opset 27): a recurrent state S [B, H_kv, d_k, d_v] per KV head, stepped over T tokens of
// packed [B, T, H * D] query/key/value. update_rule linear: S += k v^T; gated: S = exp(g) S + k v^T; delta:
// v' = beta (v - S^T k), S += k v'^T; gated_delta: both (decay first). Each output token is scale * q^T S with
// the KV head shared by q_num_heads / kv_num_heads consecutive query heads. Outputs the [B, T, H_q * d_v] result
// and the present state. Follows ONNX's reference (f32 accumulation there; double here).
#include <cmath>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

struct LinearAttentionGeometry {
  int64_t batch, tokens, qHeads, kvHeads, dk, dv;
  bool gating, delta;
};

LinearAttentionGeometry linearGeometry(const Node& node, const Shape& q, const Shape& k, const Shape& v) {
  LinearAttentionGeometry g{};
  g.qHeads = node.attrInt("q_num_heads", 0);
  g.kvHeads = node.attrInt("kv_num_heads", 0);
  if (g.qHeads <= 0 || g.kvHeads <= 0 || g.qHeads % g.kvHeads)
    failNode(node, "q_num_heads must be a positive multiple of kv_num_heads");
  if (q.size() != 3 || k.size() != 3 || v.size() != 3 || q[2] % g.qHeads || v[2] % g.kvHeads)
    failNode(node, "query " + shapeToString(q) + ", key " + shapeToString(k) + " and value " + shapeToString(v) +
                       " must be [B, T, heads * D]");
  g.batch = q[0], g.tokens = q[1], g.dk = q[2] / g.qHeads, g.dv = v[2] / g.kvHeads;
  if (k != Shape{g.batch, g.tokens, g.kvHeads * g.dk} || v[0] != g.batch || v[1] != g.tokens)
    failNode(node, "key " + shapeToString(k) + " must be [B, T, kv_num_heads * d_k] and value match query's B, T");
  std::string rule = node.attrString("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    failNode(node, "update_rule '" + rule + "' is not linear, gated, delta or gated_delta");
  g.gating = rule == "gated" || rule == "gated_delta";
  g.delta = rule == "delta" || rule == "gated_delta";
  return g;
}

void inferLinearAttention(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  LinearAttentionGeometry g = linearGeometry(ctx.node(), ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape);
  if (g.gating != ctx.hasInput(4)) ctx.error(g.gating ? "this update_rule needs decay (input 4)" : "decay is not used");
  if (g.delta != ctx.hasInput(5)) ctx.error(g.delta ? "this update_rule needs beta (input 5)" : "beta is not used");
  Shape state{g.batch, g.kvHeads, g.dk, g.dv};
  if (ctx.hasInput(3) && ctx.input(3).shape != state) ctx.error("past_state must be " + shapeToString(state));
  ctx.outputs[0] = {ctx.input(0).dtype, {g.batch, g.tokens, g.qHeads * g.dv}};
  if (ctx.outputs.size() > 1) ctx.outputs[1] = {ctx.hasInput(3) ? ctx.input(3).dtype : ctx.input(0).dtype, state};
}

// A per-token gate of [B, T, H_kv * width] or [B, T, H_kv] (or [B, T, 1] for beta), read at (b, t, h, d).
struct TokenGate {
  std::vector<double> v;
  int64_t tokens = 0, heads = 0, width = 1;  // heads 1: shared by every KV head; width 1: by every dim
  double at(int64_t b, int64_t t, int64_t h, int64_t d) const {
    return v[size_t(((b * tokens + t) * heads + (heads == 1 ? 0 : h)) * width + (width == 1 ? 0 : d))];
  }
};

TokenGate tokenGate(const Node& node, const Tensor& t, const LinearAttentionGeometry& g, int64_t width) {
  const Shape& s = t.shape();
  if (s.size() != 3 || s[0] != g.batch || s[1] != g.tokens)
    failNode(node, "gate " + shapeToString(s) + " must be [B, T, ...] = [" + std::to_string(g.batch) + "," +
                       std::to_string(g.tokens) + ",...]");
  int64_t last = s[2];
  TokenGate gate{t.toDoubles(), g.tokens, g.kvHeads, 1};
  if (last == g.kvHeads * width && width > 1) gate.width = width;
  else if (last == 1) gate.heads = 1;
  else if (last != g.kvHeads) failNode(node, "gate " + shapeToString(s) + " does not fit " + std::to_string(g.kvHeads) +
                                                 " KV heads");
  return gate;
}

std::vector<Tensor> evalLinearAttention(const Node& node, const std::vector<const Tensor*>& in,
                                        const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i && in[i] ? in[i] : nullptr; };
  LinearAttentionGeometry g = linearGeometry(node, in[0]->shape(), in[1]->shape(), in[2]->shape());
  double scale = node.attrFloat("scale", 0.0);
  if (scale == 0) scale = 1 / std::sqrt(double(g.dk));
  std::vector<double> q = in[0]->toDoubles(), k = in[1]->toDoubles(), v = in[2]->toDoubles();
  std::vector<double> S =
      input(3) ? input(3)->toDoubles() : std::vector<double>(size_t(g.batch * g.kvHeads * g.dk * g.dv), 0.0);
  TokenGate decay, beta, erase;
  if (g.gating) decay = tokenGate(node, *in[4], g, g.dk);
  if (g.delta) beta = tokenGate(node, *in[5], g, 1);
  if (input(6)) erase = tokenGate(node, *in[6], g, g.dk);
  std::vector<double> out(size_t(g.batch * g.tokens * g.qHeads * g.dv)), vt(size_t(g.dv));
  int64_t group = g.qHeads / g.kvHeads;
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t t = 0; t < g.tokens; ++t) {
      for (int64_t h = 0; h < g.kvHeads; ++h) {
        double* s = S.data() + (b * g.kvHeads + h) * g.dk * g.dv;
        const double* kt = k.data() + ((b * g.tokens + t) * g.kvHeads + h) * g.dk;
        const double* vv = v.data() + ((b * g.tokens + t) * g.kvHeads + h) * g.dv;
        if (g.gating)
          for (int64_t d = 0; d < g.dk; ++d)
            for (int64_t m = 0; m < g.dv; ++m) s[d * g.dv + m] *= std::exp(decay.at(b, t, h, d));
        for (int64_t m = 0; m < g.dv; ++m) {
          vt[size_t(m)] = vv[m];
          if (!g.delta) continue;
          double retrieved = 0;  // (S^T k)_m, k through the erase gate when given
          for (int64_t d = 0; d < g.dk; ++d)
            retrieved += s[d * g.dv + m] * kt[d] * (erase.v.empty() ? 1.0 : erase.at(b, t, h, d));
          vt[size_t(m)] = beta.at(b, t, h, 0) * (vv[m] - retrieved);
        }
        for (int64_t d = 0; d < g.dk; ++d)
          for (int64_t m = 0; m < g.dv; ++m) s[d * g.dv + m] += kt[d] * vt[size_t(m)];
      }
      for (int64_t hq = 0; hq < g.qHeads; ++hq) {
        const double* s = S.data() + (b * g.kvHeads + hq / group) * g.dk * g.dv;
        const double* qt = q.data() + ((b * g.tokens + t) * g.qHeads + hq) * g.dk;
        for (int64_t m = 0; m < g.dv; ++m) {
          double o = 0;
          for (int64_t d = 0; d < g.dk; ++d) o += qt[d] * s[d * g.dv + m];
          out[size_t(((b * g.tokens + t) * g.qHeads + hq) * g.dv + m)] = scale * o;
        }
      }
    }
  std::vector<Tensor> result{fromDoublesRounded(types[0].dtype, types[0].shape, out)};
  if (types.size() > 1) result.push_back(fromDoublesRounded(types[1].dtype, types[1].shape, S));
  return result;
}

}  // namespace

void registerLinearAttentionOps(OpRegistry& r) {
  addOp(r, {"LinearAttention", OpCategory::Other, "recurrent linear attention (linear, gated, delta, gated_delta "
            "state updates) with grouped KV heads", 3, 7, 1, 2, {}, inferLinearAttention, evalLinearAttention});
}

}  // namespace tessera
