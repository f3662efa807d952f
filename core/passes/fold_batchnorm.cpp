#include "passes/fold_batchnorm.h"

#include <algorithm>
#include <cmath>

#include "ops/broadcast.h"
#include "passes/rewrite.h"

namespace tessera {
namespace {

// An inference BatchNormalization as y = x * s[c] + t[c] over channel axis 1.
struct Affine {
  std::vector<double> s, t;
};

std::optional<Affine> affineOf(const Node& bn) {
  if (bn.attrInt("training_mode", 0) != 0) return std::nullopt;
  for (size_t i = 1; i < bn.numOutputs(); ++i)
    if (!bn.output(i)->uses().empty() || bn.output(i)->isGraphOutput()) return std::nullopt;
  const Tensor *scale = constantValue(bn.input(1)), *bias = constantValue(bn.input(2)),
               *mean = constantValue(bn.input(3)), *var = constantValue(bn.input(4));
  if (!scale || !bias || !mean || !var) return std::nullopt;
  int64_t channels = scale->numElements();
  const Shape& x = bn.input(0)->shape();
  if (x.size() < 2 || x[1] != channels) return std::nullopt;
  double eps = bn.attrFloat("epsilon", 1e-5);
  Affine a;
  for (int64_t c = 0; c < channels; ++c) {
    a.s.push_back(scale->getDouble(c) / std::sqrt(var->getDouble(c) + eps));
    a.t.push_back(bias->getDouble(c) - mean->getDouble(c) * a.s.back());
  }
  return a;
}

// Multiplies the weight along `axis` (the output-channel axis) by s.
template <class T>
void scaleBlocks(T* v, size_t size, size_t channels, size_t inner, const std::vector<double>& s) {
  size_t outer = channels * inner == 0 ? 0 : size / (channels * inner);
  for (size_t o = 0; o < outer; ++o)
    for (size_t c = 0; c < channels; ++c) {
      T* block = v + (o * channels + c) * inner;
      for (size_t i = 0; i < inner; ++i) block[i] = T(double(block[i]) * s[c]);
    }
}

Tensor scaleAlong(const Tensor& w, size_t axis, const std::vector<double>& s) {
  size_t channels = size_t(w.shape()[axis]), inner = size_t(stridesOf(w.shape())[axis]);
  size_t size = size_t(w.numElements());
  if (w.dtype() == DType::F32) {  // the common case, without a round trip through doubles
    Tensor out(DType::F32, w.shape());
    std::copy_n(w.data<float>(), size, out.mutableData<float>());
    scaleBlocks(out.mutableData<float>(), size, channels, inner, s);
    return out;
  }
  std::vector<double> v = w.toDoubles();
  scaleBlocks(v.data(), size, channels, inner, s);
  return Tensor::fromDoubles(w.dtype(), w.shape(), v);
}

bool floatConstant(const Value* v) {
  std::optional<Tensor> t = materializeConstant(v);
  return t && isFloat(t->dtype());
}

class FoldBatchNormPass : public Pass {
 public:
  std::string name() const override { return "fold-batchnorm"; }
  std::string summary() const override { return "fold inference batch norms into the weights before them"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"into-conv", "batch norms folded into a Conv"},
            {"into-gemm", "batch norms folded into a Gemm"},
            {"into-matmul", "batch norms folded into a MatMul (plus an Add for the shift)"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    for (Node* bn : graph.topoOrder()) {
      if (bn->op() != "BatchNormalization") continue;
      Value* x = bn->input(0);
      Node* producer = x->producer();
      if (!producer || x->uses().size() != 1 || x->isGraphOutput() || producer->numOutputs() != 1) continue;
      std::optional<Affine> a = affineOf(*bn);
      if (!a || !floatConstant(producer->input(1))) continue;
      const std::string& op = producer->op();
      if (op == "Conv" && foldableConv(*producer, a->s.size()) && ctx.tryRewrite()) {
        intoConv(graph, producer, *a);
        forwardOutput(graph, bn, 0, producer->output(0));
        ctx.count("into-conv");
      } else if (op == "Gemm" && gemmChannels(*producer) == int64_t(a->s.size()) && ctx.tryRewrite()) {
        intoGemm(graph, producer, *a);
        forwardOutput(graph, bn, 0, producer->output(0));
        ctx.count("into-gemm");
      } else if (op == "MatMul" && bn->numOutputs() == 1 && matmulChannels(*producer) == int64_t(a->s.size()) &&
                 ctx.tryRewrite()) {
        intoMatMul(graph, producer, bn, *a);
        ctx.count("into-matmul");
      }
    }
  }

 private:
  static bool foldableConv(const Node& conv, size_t channels) {
    const Shape& w = conv.input(1)->shape();
    bool biasOk = !conv.input(2) || floatConstant(conv.input(2));
    return w.size() >= 3 && w[0] == int64_t(channels) && biasOk;
  }
  static int64_t gemmChannels(const Node& gemm) {
    const Shape& b = gemm.input(1)->shape();
    if (b.size() != 2 || (gemm.input(2) && !floatConstant(gemm.input(2)))) return -1;
    return b[gemm.attrInt("transB", 0) ? 0 : 1];
  }
  static int64_t matmulChannels(const Node& mm) {
    const Shape& b = mm.input(1)->shape();
    if (b.size() != 2 || mm.output(0)->shape().size() != 2) return -1;
    return b[1];
  }

  // W'[oc] = W[oc] s[oc], b'[oc] = b[oc] s[oc] + t[oc]
  static void intoConv(Graph& g, Node* conv, const Affine& a) {
    Tensor w = *materializeConstant(conv->input(1));
    std::optional<Tensor> b = materializeConstant(conv->input(2));
    std::vector<double> bias(a.t);
    for (size_t c = 0; c < bias.size(); ++c) bias[c] += (b ? b->getDouble(int64_t(c)) : 0.0) * a.s[c];
    g.setNodeInput(conv, 1, addConstant(g, conv->id() + ".weight_bn", scaleAlong(w, 0, a.s)));
    g.setNodeInput(conv, 2, addConstant(g, conv->id() + ".bias_bn",
                                        Tensor::fromDoubles(w.dtype(), {int64_t(bias.size())}, bias)));
  }

  // alpha A (B s) + beta C' with beta C' = beta C s + t.
  static void intoGemm(Graph& g, Node* gemm, const Affine& a) {
    Tensor b = *materializeConstant(gemm->input(1));
    std::optional<Tensor> c = materializeConstant(gemm->input(2));
    double beta = gemm->attrFloat("beta", 1.0);
    if (!c || beta == 0.0) {
      c.reset();
      beta = 1.0;
    }
    int64_t n = int64_t(a.s.size());
    Shape cShape = c ? *broadcastShapes({c->shape(), {n}}) : Shape{n};
    std::vector<int64_t> map = c ? broadcastIndexMap(c->shape(), cShape) : std::vector<int64_t>{};
    std::vector<double> cv(size_t(numElements(cShape)));
    for (size_t i = 0; i < cv.size(); ++i) {
      size_t ch = i % size_t(n);
      cv[i] = (c ? c->getDouble(map[i]) * a.s[ch] : 0.0) + a.t[ch] / beta;
    }
    g.setNodeInput(gemm, 1, addConstant(g, gemm->id() + ".weight_bn",
                                        scaleAlong(b, gemm->attrInt("transB", 0) ? 0 : 1, a.s)));
    g.setNodeInput(gemm, 2, addConstant(g, gemm->id() + ".bias_bn", Tensor::fromDoubles(b.dtype(), cShape, cv)));
    gemm->attrs()["beta"] = beta;
  }

  // MatMul has no bias: the batch norm becomes an Add of t after a MatMul with scaled columns.
  static void intoMatMul(Graph& g, Node* mm, Node* bn, const Affine& a) {
    Tensor b = *materializeConstant(mm->input(1));
    g.setNodeInput(mm, 1, addConstant(g, mm->id() + ".weight_bn", scaleAlong(b, 1, a.s)));
    Value* shift = addConstant(g, bn->id() + ".shift",
                               Tensor::fromDoubles(b.dtype(), {int64_t(a.t.size())}, a.t));
    replaceNode(g, bn, "Add", {mm->output(0), shift});
  }
};

}  // namespace

std::unique_ptr<Pass> createFoldBatchNormPass() { return std::make_unique<FoldBatchNormPass>(); }

}  // namespace tessera
