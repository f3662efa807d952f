#include "passes/decompose_attention.h"

#include <cmath>

#include "passes/decompose_emitter.h"

namespace tessera {
namespace {
using decompose::Emitter;

bool isFloatType(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }

}  // namespace

bool attentionDecomposes(const Node& n) {
  if (n.numInputs() > 6 && n.input(6) && n.input(6)->dtype() != DType::I64) return false;
  DType t = n.input(0)->dtype();
  if (!isFloatType(t) || n.input(1)->dtype() != t || n.input(2)->dtype() != t) return false;
  for (size_t i : {4, 5})
    if (n.numInputs() > i && n.input(i) && n.input(i)->dtype() != t) return false;
  const Value* mask = n.numInputs() > 3 ? n.input(3) : nullptr;
  if (!mask) return true;
  const Shape& k = n.input(1)->shape();
  const Value* past = n.numInputs() > 4 ? n.input(4) : nullptr;
  int64_t keys = (k.size() == 4 ? k[2] : k[1]) + (past && past->shape().size() == 4 ? past->shape()[2] : 0);
  return (mask->dtype() == DType::Bool || mask->dtype() == t) && !mask->shape().empty() && mask->shape().size() <= 4 &&
         mask->shape().back() <= keys && mask->shape().back() > 0;
}

namespace {

// A 3-D [batch, seq, heads · head] input as 4-D [batch, heads, seq, head].
Value* toHeads(Emitter& e, const std::string& name, Value* x, int64_t heads) {
  const Shape& s = x->shape();
  return e.transpose(name, e.reshape(name + "_split", x, {s[0], s[1], heads, s[2] / heads}), {0, 2, 1, 3});
}

// K or V of kvHeads heads read by qHeads query heads: each KV head repeated for its qHeads / kvHeads query heads.
Value* repeatHeads(Emitter& e, const std::string& name, Value* x, int64_t qHeads) {
  const Shape& s = x->shape();  // [batch, kvHeads, seq, head]
  int64_t group = qHeads / s[1];
  if (group == 1) return x;
  Value* wide = e.op(name + "_repeat", "Expand", {e.reshape(name + "_group", x, {s[0], s[1], 1, s[2], s[3]}),
                                                  e.ints(name + "_to", {s[0], s[1], group, s[2], s[3]})});
  return e.reshape(name + "_heads", wide, {s[0], qHeads, s[2], s[3]});
}

// Query i sees keys j <= i: true where a key is hidden.
// Query row i sees the keys up to i + past (the cache's tokens come first), as the reference's frontier.
Value* causalMask(Graph& g, const std::string& id, int64_t rows, int64_t keys, int64_t past) {
  std::vector<int64_t> hidden;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < keys; ++j) hidden.push_back(j > i + past ? 1 : 0);
  return addConstant(g, id + ".causal", Tensor::fromInts(DType::Bool, {rows, keys}, hidden));
}

}  // namespace

// j - i + rows at [i, j]: compared with a batch's key count, the causal frontier of keys padded at the end.
Value* frontier(Graph& g, const std::string& id, int64_t rows, int64_t keys) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < keys; ++j) v.push_back(j - i + rows);
  return addConstant(g, id + ".frontier", Tensor::fromInts(DType::I64, {rows, keys}, v));
}

// The cache's tokens, then the new ones: present = Concat(past, new) along the sequence ([batch, kv heads, seq, head]).
Value* withPast(Emitter& e, const std::string& name, const Node& n, size_t pastInput, Value* now) {
  Value* past = n.numInputs() > pastInput ? n.input(pastInput) : nullptr;
  return past ? e.op(name + "_present", "Concat", {past, now}, {{"axis", int64_t(2)}}) : now;
}

std::vector<Value*> attentionAsPrimitives(Graph& g, const Node& n) {
  if (!attentionDecomposes(n)) return {};
  Emitter e(g, n);
  Value *q = n.input(0), *k = n.input(1), *v = n.input(2);
  bool threeD = q->shape().size() == 3;
  int64_t qHeads = threeD ? n.attrInt("q_num_heads", 0) : q->shape()[1];
  int64_t kvHeads = threeD ? n.attrInt("kv_num_heads", 0) : k->shape()[1];
  if (threeD) {
    q = toHeads(e, "q", q, qHeads);
    k = toHeads(e, "k", k, kvHeads);
    v = toHeads(e, "v", v, kvHeads);
  }
  Value* presentK = withPast(e, "k", n, 4, k);
  Value* presentV = withPast(e, "v", n, 5, v);
  int64_t past = presentK->shape()[2] - k->shape()[2];
  k = repeatHeads(e, "k", presentK, qHeads);
  v = repeatHeads(e, "v", presentV, qHeads);
  int64_t rows = q->shape()[2], keys = k->shape()[2], head = q->shape()[3];
  // The scores in the reference's order: scaled product, softcap, mask and causal frontier, softmax; output 3
  // (qk_matmul_output) is the form its mode names.
  std::vector<Value*> stages;
  Value* s = e.op("scores", "MatMul", {q, e.transpose("kT", k, {0, 1, 3, 2})});
  s = e.op("scale", "Mul", {s, e.scalar("scale_value", n.attrFloat("scale", 1.0 / std::sqrt(double(head))))});
  stages.push_back(s);
  if (double cap = n.attrFloat("softcap", 0.0); cap > 0)
    s = e.op("softcap", "Mul", {e.op("capped", "Tanh", {e.op("uncapped", "Div", {s, e.scalar("cap", cap)})}), e.scalar("cap_out", cap)});
  stages.push_back(s);
  Value* ninf = e.scalar("ninf", -INFINITY);
  if (const Value* mask = n.numInputs() > 3 ? n.input(3) : nullptr) {
    Value* m = const_cast<Value*>(mask);
    if (int64_t short_ = keys - mask->shape().back(); short_ > 0) {  // the keys past the mask's last are hidden
      Shape rest = mask->shape();
      rest.back() = short_;
      bool flags = mask->dtype() == DType::Bool;
      Tensor hidden = Tensor::fromDoubles(mask->dtype(), rest, std::vector<double>(size_t(numElements(rest)), flags ? 0.0 : -INFINITY));
      m = e.op("mask_keys", "Concat", {m, addConstant(g, n.id() + ".mask_rest", hidden)}, {{"axis", int64_t(-1)}});
    }
    s = mask->dtype() == DType::Bool ? e.op("mask", "Where", {m, s, ninf}) : e.op("mask", "Add", {s, m});
  }
  Value* lengths = n.numInputs() > 6 ? n.input(6) : nullptr;  // nonpad_kv_seqlen: each batch's valid keys
  Value* valid = lengths ? e.reshape("lengths", lengths, {lengths->shape()[0], 1, 1, 1}) : nullptr;
  if (n.attrInt("is_causal", 0)) {
    // Without a past, padded keys move the frontier: row i sees keys up to i + length - rows, so j is hidden
    // where j - i + rows > length (a constant of j - i + rows against each batch's length).
    Value* hidden = valid && past == 0 ? e.op("causal_hidden", "Greater", {frontier(g, n.id(), rows, keys), valid})
                                       : causalMask(g, n.id(), rows, keys, past);
    s = e.op("causal", "Where", {hidden, ninf, s});
  }
  if (valid) {
    Value* key = e.iota("key", DType::I64, keys);
    s = e.op("padding", "Where", {e.op("padded", "GreaterOrEqual", {key, valid}), ninf, s});
  }
  stages.push_back(s);
  Value* probs = e.op("probs", "Softmax", {s}, {{"axis", int64_t(-1)}});
  stages.push_back(probs);
  Value* y = e.op("context", "MatMul", {probs, v});
  if (threeD) {
    const Shape& ys = y->shape();  // [batch, heads, seq, v head]
    y = e.reshape("merge", e.transpose("tokens", y, {0, 2, 1, 3}), {ys[0], ys[2], ys[1] * ys[3]});
  }
  int64_t mode = n.attrInt("qk_matmul_output_mode", 0);
  Value* qk = mode >= 0 && mode < int64_t(stages.size()) ? stages[size_t(mode)] : nullptr;
  std::vector<Value*> outputs{y, presentK, presentV, qk};
  outputs.resize(std::min(outputs.size(), n.numOutputs()));
  return outputs;
}

}  // namespace tessera
