// Attention (opset 23/24): Y = softmax(Q K^T * scale + bias) V per head, with the optional key/value cache
// (past_key/past_value concatenated before K/V along the sequence, returned as present_key/present_value),
// grouped-query heads (each KV head serves q_num_heads / kv_num_heads consecutive query heads), a boolean or
// additive attn_mask broadcast to [batch, heads, q_seq, total_seq] (a shorter last dim is padded as masked),
// is_causal (query i sees keys j <= i + past), softcap (c * tanh(x / c), applied to the scores before the
// bias) and nonpad_kv_seqlen (keys at or past it masked per batch). Q/K/V are 4-D [batch, heads, seq, head] or
// 3-D [batch, seq, heads * head] (q_num_heads and kv_num_heads then split the last dim). Computed in double.
#include <cmath>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

struct AttentionGeometry {
  bool threeD = false;
  int64_t batch = 0, qHeads = 0, kvHeads = 0, qSeq = 0, kvSeq = 0, past = 0, head = 0, vHead = 0;
  int64_t total() const { return past + kvSeq; }
  // Flat offset of feature d of token s of head h in a Q/K/V input laid out as this node's inputs are.
  int64_t at(int64_t b, int64_t h, int64_t heads, int64_t s, int64_t seq, int64_t d, int64_t width) const {
    return threeD ? ((b * seq + s) * heads + h) * width + d : ((b * heads + h) * seq + s) * width + d;
  }
};

AttentionGeometry attentionGeometry(const Node& node, const Shape& q, const Shape& k, const Shape& v,
                                    const Shape* pastKey) {
  AttentionGeometry g;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    failNode(node, "Q " + shapeToString(q) + ", K " + shapeToString(k) + " and V " + shapeToString(v) +
                       " must all be 3-D or all 4-D");
  g.threeD = q.size() == 3;
  g.batch = q[0];
  if (g.threeD) {
    g.qHeads = node.attrInt("q_num_heads", 0);
    g.kvHeads = node.attrInt("kv_num_heads", 0);
    if (g.qHeads <= 0 || g.kvHeads <= 0 || q[2] % g.qHeads || k[2] % g.kvHeads || v[2] % g.kvHeads)
      failNode(node, "3-D inputs need q_num_heads and kv_num_heads dividing the hidden sizes of Q " +
                         shapeToString(q) + ", K " + shapeToString(k) + " and V " + shapeToString(v));
    g.qSeq = q[1], g.kvSeq = k[1], g.head = q[2] / g.qHeads, g.vHead = v[2] / g.kvHeads;
  } else {
    g.qHeads = q[1], g.kvHeads = k[1], g.qSeq = q[2], g.kvSeq = k[2], g.head = q[3], g.vHead = v[3];
  }
  int64_t kHead = g.threeD ? k[2] / g.kvHeads : k[3];
  int64_t vHeads = g.threeD ? g.kvHeads : v[1], vSeq = g.threeD ? v[1] : v[2];
  if (k[0] != g.batch || v[0] != g.batch || kHead != g.head || vHeads != g.kvHeads || vSeq != g.kvSeq)
    failNode(node, "K " + shapeToString(k) + " and V " + shapeToString(v) + " do not match Q " + shapeToString(q) +
                       " (batch, head size, KV heads and sequence)");
  if (g.kvHeads == 0 || g.qHeads % g.kvHeads)
    failNode(node, std::to_string(g.qHeads) + " query heads are not a multiple of " + std::to_string(g.kvHeads) +
                       " KV heads");
  if (pastKey) {
    const Shape& p = *pastKey;
    if (p.size() != 4 || p[0] != g.batch || p[1] != g.kvHeads || p[3] != g.head)
      failNode(node, "past_key " + shapeToString(p) + " must be [batch, kv_heads, past, head] = [" +
                         std::to_string(g.batch) + "," + std::to_string(g.kvHeads) + ",past," +
                         std::to_string(g.head) + "]");
    g.past = p[2];
  }
  return g;
}

const Shape* shapeOf(const InferContext& ctx, size_t i) { return ctx.hasInput(i) ? &ctx.input(i).shape : nullptr; }

void inferAttention(InferContext& ctx) {
  for (size_t i : {0, 1, 2}) requireDType(ctx, i, DTypeClass::Float);
  AttentionGeometry g = attentionGeometry(ctx.node(), ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape,
                                          shapeOf(ctx, 4));
  if (ctx.hasInput(4) != ctx.hasInput(5)) ctx.error("past_key and past_value must be given together");
  if (ctx.hasInput(5) && ctx.input(5).shape != Shape{g.batch, g.kvHeads, g.past, g.vHead})
    ctx.error("past_value " + ctx.input(5).toString() + " does not match past_key and V");
  if (ctx.hasInput(3)) {
    const Shape& m = ctx.input(3).shape;
    if (m.size() < 2 || m.size() > 4 || m.back() > g.total())
      ctx.error("attn_mask " + ctx.input(3).toString() + " must have rank 2-4 and a last dim of at most the " +
                std::to_string(g.total()) + " keys");
  }
  if (ctx.hasInput(6) && ctx.input(6).shape != Shape{g.batch})
    ctx.error("nonpad_kv_seqlen " + ctx.input(6).toString() + " must be [batch]");
  DType t = ctx.input(0).dtype;
  ctx.outputs[0] = {t,
                    g.threeD ? Shape{g.batch, g.qSeq, g.qHeads * g.vHead} : Shape{g.batch, g.qHeads, g.qSeq, g.vHead}};
  if (ctx.outputs.size() > 1) ctx.outputs[1] = {ctx.input(1).dtype, {g.batch, g.kvHeads, g.total(), g.head}};
  if (ctx.outputs.size() > 2) ctx.outputs[2] = {ctx.input(2).dtype, {g.batch, g.kvHeads, g.total(), g.vHead}};
  if (ctx.outputs.size() > 3) ctx.outputs[3] = {t, {g.batch, g.qHeads, g.qSeq, g.total()}};
}

// present = concat(past, new) along the sequence, as [batch, kv_heads, total, width] doubles.
std::vector<double> present(const AttentionGeometry& g, const Tensor* past, const Tensor& now, int64_t width) {
  std::vector<double> p = past ? past->toDoubles() : std::vector<double>{}, n = now.toDoubles();
  std::vector<double> out(size_t(g.batch * g.kvHeads * g.total() * width));
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t h = 0; h < g.kvHeads; ++h)
      for (int64_t s = 0; s < g.total(); ++s)
        for (int64_t d = 0; d < width; ++d) {
          bool old = s < g.past;
          double v = old ? p[size_t(((b * g.kvHeads + h) * g.past + s) * width + d)]
                         : n[size_t(g.at(b, h, g.kvHeads, s - g.past, g.kvSeq, d, width))];
          out[size_t(((b * g.kvHeads + h) * g.total() + s) * width + d)] = v;
        }
  return out;
}

// The additive bias for (b, h, i, j): the mask (bool: 0 or -inf; missing trailing keys: -inf), the causal
// frontier and the padding of nonpad_kv_seqlen.
struct AttentionBias {
  const AttentionGeometry& g;
  const Tensor* mask;
  std::vector<int64_t> maskStrides;  // over [batch, heads, q_seq, mask's last dim], 0 where broadcast
  bool causal;
  const Tensor* nonpad;

  AttentionBias(const AttentionGeometry& geo, const Tensor* m, bool isCausal, const Tensor* np)
      : g(geo), mask(m), causal(isCausal), nonpad(np) {
    if (!mask) return;
    Shape s = mask->shape();
    while (s.size() < 4) s.insert(s.begin(), 1);
    std::vector<int64_t> st = stridesOf(s);
    for (size_t d = 0; d < 4; ++d) maskStrides.push_back(s[d] == 1 ? 0 : st[d]);
  }
  double operator()(int64_t b, int64_t h, int64_t i, int64_t j) const {
    double bias = 0;
    if (mask) {
      if (j >= mask->shape().back()) return -INFINITY;
      int64_t at = b * maskStrides[0] + h * maskStrides[1] + i * maskStrides[2] + j * maskStrides[3];
      bias = mask->dtype() == DType::Bool ? (mask->getInt(at) ? 0.0 : -INFINITY) : mask->getDouble(at);
    }
    if (causal) {
      int64_t offset = nonpad && g.past == 0 ? nonpad->getInt(b) - g.qSeq : g.past;
      if (j > i + offset) return -INFINITY;
    }
    if (nonpad && j >= nonpad->getInt(b)) return -INFINITY;
    return bias;
  }
};

struct AttentionOptions {
  double scale, softcap;
  int64_t qkMode;
};

// Scores of one query row against every key: (q . k) * scale, softcapped, biased; `raw` keeps the form
// qk_matmul_output_mode asks for (0: the product, 1: softcapped, 2: plus the bias, 3: softmax), in the order
// ONNX's reference and its test data use (softcap first, so that a masked -inf stays -inf).
void scoreRow(const AttentionOptions& o, const std::vector<double>& scores, const AttentionBias& bias, int64_t b,
              int64_t h, int64_t i, std::vector<double>& biased, double* raw) {
  for (size_t j = 0; j < scores.size(); ++j) {
    double s = scores[j];
    if (raw && o.qkMode == 0) raw[j] = s;
    if (o.softcap > 0) s = o.softcap * std::tanh(s / o.softcap);
    if (raw && o.qkMode == 1) raw[j] = s;
    s += bias(b, h, i, int64_t(j));
    if (raw && o.qkMode == 2) raw[j] = s;
    biased[j] = s;
  }
  double peak = -INFINITY, sum = 0;
  for (double s : biased) peak = std::max(peak, s);
  for (double& s : biased) sum += (s = std::exp(s - peak));
  for (double& s : biased) s /= sum;  // a row masked everywhere is NaN, as the reference's softmax gives
  if (raw && o.qkMode == 3) std::copy(biased.begin(), biased.end(), raw);
}

std::vector<Tensor> evalAttention(const Node& node, const std::vector<const Tensor*>& in,
                                  const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i ? in[i] : nullptr; };
  const Tensor* pastKey = input(4);
  AttentionGeometry g = attentionGeometry(node, in[0]->shape(), in[1]->shape(), in[2]->shape(),
                                          pastKey ? &pastKey->shape() : nullptr);
  AttentionOptions o{node.attrFloat("scale", 1.0 / std::sqrt(double(g.head))), node.attrFloat("softcap", 0.0),
                     node.attrInt("qk_matmul_output_mode", 0)};
  AttentionBias bias(g, input(3), node.attrInt("is_causal", 0) != 0, input(6));
  std::vector<double> q = in[0]->toDoubles(), k = present(g, pastKey, *in[1], g.head);
  std::vector<double> v = present(g, input(5), *in[2], g.vHead);
  int64_t total = g.total(), group = g.qHeads / g.kvHeads;
  std::vector<double> y(size_t(g.batch * g.qHeads * g.qSeq * g.vHead)), qk;
  if (types.size() > 3) qk.resize(size_t(g.batch * g.qHeads * g.qSeq * total));
  std::vector<double> scores(static_cast<size_t>(total)), p(static_cast<size_t>(total));
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t h = 0; h < g.qHeads; ++h)
      for (int64_t i = 0; i < g.qSeq; ++i) {
        int64_t kvh = h / group, kvBase = (b * g.kvHeads + kvh) * total;
        for (int64_t j = 0; j < total; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < g.head; ++d)
            dot += q[size_t(g.at(b, h, g.qHeads, i, g.qSeq, d, g.head))] * k[size_t((kvBase + j) * g.head + d)];
          scores[size_t(j)] = dot * o.scale;
        }
        double* raw = qk.empty() ? nullptr : qk.data() + ((b * g.qHeads + h) * g.qSeq + i) * total;
        scoreRow(o, scores, bias, b, h, i, p, raw);
        for (int64_t d = 0; d < g.vHead; ++d) {
          double sum = 0;
          for (int64_t j = 0; j < total; ++j) sum += p[size_t(j)] * v[size_t((kvBase + j) * g.vHead + d)];
          y[size_t(g.at(b, h, g.qHeads, i, g.qSeq, d, g.vHead))] = sum;
        }
      }
  std::vector<Tensor> out{fromDoublesRounded(types[0].dtype, types[0].shape, y)};
  if (types.size() > 1) out.push_back(fromDoublesRounded(types[1].dtype, types[1].shape, k));
  if (types.size() > 2) out.push_back(fromDoublesRounded(types[2].dtype, types[2].shape, v));
  if (types.size() > 3) out.push_back(fromDoublesRounded(types[3].dtype, types[3].shape, qk));
  return out;
}

}  // namespace

void registerAttentionOps(OpRegistry& r) {
  addOp(r, {"Attention", OpCategory::Other, "softmax(Q K^T * scale + mask) V per head, with KV cache, grouped heads, "
            "causal masking and softcap", 3, 7, 1, 4, {}, inferAttention, evalAttention});
}

}  // namespace tessera
