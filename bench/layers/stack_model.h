#pragma once
// Generated transformer stacks named as PyTorch exports them (`/h.3/attn/c_attn/MatMul`), for the layer tests
// and bench_layers: a GPT-2-shaped block (layer norms and the tanh GELU written out, as exporters before opset 17
// do) repeated to reach a node count. Tensors are tiny (4 tokens of width 16): the point is the graph, not the
// arithmetic. Weights of one shape share one storage.
#include <map>
#include <string>

#include "ops/builder.h"

namespace tessera::bench {

class StackBuilder {
 public:
  static constexpr int64_t kTokens = 4, kWidth = 16, kHeads = 2;
  static constexpr int kNodesPerBlock = 51, kNodesOutside = 11;

  explicit StackBuilder(int blocks) : b_("stack" + std::to_string(blocks)), blocks_(blocks) {}

  Graph build() {
    Value* x = b_.input("x", {DType::F32, {kTokens, kWidth}});
    for (int i = 0; i < blocks_; ++i) x = block("/h." + std::to_string(i), x);
    x = layerNorm("/ln_f", x);
    b_.output(linear("/lm_head", x, kWidth));
    return b_.finish();
  }

 private:
  Value* weight(const std::string& name, Shape shape) {
    const std::string key = shapeKey(shape);
    auto it = weights_.find(key);
    if (it == weights_.end()) it = weights_.emplace(key, Tensor(DType::F32, shape)).first;
    return b_.constant(name, it->second);
  }
  static std::string shapeKey(const Shape& s) {
    std::string k;
    for (int64_t d : s) k += std::to_string(d) + ",";
    return k;
  }
  Value* scalar(const std::string& name, double v) { return b_.constant(name, Tensor::scalar(DType::F32, v)); }
  Value* op(const std::string& op, std::vector<Value*> in, const std::string& id, Attributes a = {}) {
    return b_.op(op, in, std::move(a), id);
  }

  // 9 nodes: mean, centre, square, variance, epsilon, root, divide, scale, shift.
  Value* layerNorm(const std::string& p, Value* x) {
    Attributes keep{{"keepdims", 1}};
    Value* mean = op("ReduceMean", {x, b_.ints(p + "/axes", {-1})}, p + "/ReduceMean", keep);
    Value* d = op("Sub", {x, mean}, p + "/Sub");
    Value* sq = op("Pow", {d, scalar(p + "/two", 2)}, p + "/Pow");
    Value* var = op("ReduceMean", {sq, b_.ints(p + "/axes", {-1})}, p + "/ReduceMean", keep);
    Value* sd = op("Sqrt", {op("Add", {var, scalar(p + "/eps", 1e-5)}, p + "/Add")}, p + "/Sqrt");
    Value* n = op("Div", {d, sd}, p + "/Div");
    Value* m = op("Mul", {n, weight(p + ".weight", {kWidth})}, p + "/Mul");
    return op("Add", {m, weight(p + ".bias", {kWidth})}, p + "/Add");
  }
  // 2 nodes.
  Value* linear(const std::string& p, Value* x, int64_t out) {
    Value* y = op("MatMul", {x, weight(p + ".weight", {x->shape().back(), out})}, p + "/MatMul");
    return op("Add", {y, weight(p + ".bias", {out})}, p + "/Add");
  }
  // 18 nodes.
  Value* attention(const std::string& p, Value* x) {
    const int64_t dh = kWidth / kHeads;
    std::vector<Value*> qkv = b_.opN("Split", {linear(p + "/c_attn", x, 3 * kWidth)}, 3, {{"axis", int64_t(1)}}, p + "/Split");
    std::vector<Value*> heads;
    for (Value* t : qkv) {
      Value* r = op("Reshape", {t, b_.ints(p + "/shape", {kTokens, kHeads, dh})}, p + "/Reshape");
      heads.push_back(op("Transpose", {r}, p + "/Transpose", {{"perm", std::vector<int64_t>{1, 0, 2}}}));
    }
    Value* kt = op("Transpose", {heads[1]}, p + "/Transpose", {{"perm", std::vector<int64_t>{0, 2, 1}}});
    Value* s = op("Div", {op("MatMul", {heads[0], kt}, p + "/MatMul"), scalar(p + "/scale", 2.828)}, p + "/Div");
    Value* probs = op("Softmax", {s}, p + "/Softmax", {{"axis", int64_t(-1)}});
    Value* ctx = op("MatMul", {probs, heads[2]}, p + "/MatMul");
    Value* t = op("Transpose", {ctx}, p + "/Transpose", {{"perm", std::vector<int64_t>{1, 0, 2}}});
    Value* merged = op("Reshape", {t, b_.ints(p + "/shape", {kTokens, kWidth})}, p + "/Reshape");
    return linear(p + "/c_proj", merged, kWidth);
  }
  // 9 nodes: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
  Value* gelu(const std::string& p, Value* x) {
    Value* cube = op("Mul", {op("Mul", {x, x}, p + "/Mul"), x}, p + "/Mul");
    Value* inner = op("Add", {x, op("Mul", {cube, scalar(p + "/c", 0.044715)}, p + "/Mul")}, p + "/Add");
    Value* th = op("Tanh", {op("Mul", {inner, scalar(p + "/k", 0.7978845608)}, p + "/Mul")}, p + "/Tanh");
    Value* one = op("Add", {th, scalar(p + "/one", 1)}, p + "/Add");
    return op("Mul", {op("Mul", {x, one}, p + "/Mul"), scalar(p + "/half", 0.5)}, p + "/Mul");
  }
  // 51 nodes: ln_1 (9), attn (18), residual, ln_2 (9), mlp (2 + 9 + 2), residual.
  Value* block(const std::string& p, Value* x) {
    Value* a = op("Add", {x, attention(p + "/attn", layerNorm(p + "/ln_1", x))}, p + "/Add");
    Value* h = gelu(p + "/mlp/act", linear(p + "/mlp/c_fc", layerNorm(p + "/ln_2", a), 4 * kWidth));
    return op("Add", {a, linear(p + "/mlp/c_proj", h, kWidth)}, p + "/Add");
  }

  GraphBuilder b_;
  int blocks_;
  std::map<std::string, Tensor> weights_;
};

// A stack of about `nodes` nodes (at least one block).
inline Graph transformerStack(int nodes) {
  const int blocks = std::max(1, (nodes - StackBuilder::kNodesOutside) / StackBuilder::kNodesPerBlock);
  return StackBuilder(blocks).build();
}

}  // namespace tessera::bench
