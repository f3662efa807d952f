#include "passes/decompose.h"

#include <cmath>
#include <numbers>
#include <type_traits>

#include "ops/broadcast.h"
#include "ops/window.h"
#include "ops/registry.h"
#include "ops/scatter.h"
#include "passes/decompose_attention.h"
#include "passes/decompose_einsum.h"
#include "passes/decompose_quant.h"
#include "passes/decompose_scatter.h"
#include "passes/decompose_topk.h"
#include "passes/decompose_rotary.h"
#include "passes/decompose_emitter.h"
#include "passes/rewrite.h"

namespace tessera {
namespace {
using decompose::Emitter;
using decompose::onlyFirstOutputUsed;

bool registered(std::initializer_list<const char*> ops) {
  for (const char* op : ops)
    if (!OpRegistry::instance().find(op)) return false;
  return true;
}


int64_t axisOf(const Node& n, int64_t fallback) {
  int64_t rank = int64_t(n.input(0)->shape().size());
  return normalizeAxis(n.attrInt("axis", fallback), rank).value_or(rank - 1);
}

Value* softmax(Graph& g, const Node& n, bool log) {
  Emitter e(g, n);
  Value* x = n.input(0);
  Value* axes = e.axes({axisOf(n, -1)});
  Value* max = e.op("max", "ReduceMax", {x, axes}, {{"keepdims", 1}});
  Value* shifted = e.op("sub", "Sub", {x, max});
  Value* exp = e.op("exp", "Exp", {shifted});
  Value* sum = e.op("sum", "ReduceSum", {exp, axes}, {{"keepdims", 1}});
  if (!log) return e.op("div", "Div", {exp, sum});
  return e.op("out", "Sub", {shifted, e.op("log", "Log", {sum})});
}

// The axes a normalization reduces over: from its `axis` (default -1) to the last.
std::vector<int64_t> axesFromAxisOn(const Node& n) {
  std::vector<int64_t> axes;
  for (int64_t a = axisOf(n, -1); a < int64_t(n.input(0)->shape().size()); ++a) axes.push_back(a);
  return axes;
}

Value* layerNorm(Graph& g, const Node& n) {
  Emitter e(g, n);
  Value* x = n.input(0);
  Value* ax = e.axes(axesFromAxisOn(n));
  Value* mean = e.op("mean", "ReduceMean", {x, ax}, {{"keepdims", 1}});
  Value* d = e.op("sub", "Sub", {x, mean});
  Value* var = e.op("var", "ReduceMean", {e.op("sq", "Mul", {d, d}), ax}, {{"keepdims", 1}});
  Value* std = e.op("std", "Sqrt", {e.op("addeps", "Add", {var, e.scalar("eps", n.attrFloat("epsilon", 1e-5))})});
  Value* y = e.op("scale", "Mul", {e.op("norm", "Div", {d, std}), n.input(1)});
  return n.input(2) ? e.op("bias", "Add", {y, n.input(2)}) : y;
}

// x / sqrt(mean(x², over [axis, rank)) + eps) · scale: the row kernel's reduction, as layer normalization's.
Value* rmsNorm(Graph& g, const Node& n) {
  Emitter e(g, n);
  Value* x = n.input(0);
  Value* ms = e.op("ms", "ReduceMean", {e.op("sq", "Mul", {x, x}), e.axes(axesFromAxisOn(n))}, {{"keepdims", 1}});
  Value* rms = e.op("rms", "Sqrt", {e.op("addeps", "Add", {ms, e.scalar("eps", n.attrFloat("epsilon", 1e-5))})});
  return e.op("scale", "Mul", {e.op("norm", "Div", {x, rms}), n.input(1)});
}

Value* gelu(Graph& g, const Node& n) {
  Emitter e(g, n);
  Value* x = n.input(0);
  Value* inner;
  if (n.attrString("approximate", "none") == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value* cube = e.op("cube", "Mul", {e.op("sq", "Mul", {x, x}), x});
    Value* poly = e.op("poly", "Add", {x, e.op("cubek", "Mul", {cube, e.scalar("k", 0.044715)})});
    Value* arg = e.op("arg", "Mul", {poly, e.scalar("c", std::sqrt(2.0 / std::numbers::pi))});
    inner = e.op("tanh", "Tanh", {arg});
  } else {
    // 0.5 x (1 + erf(x / sqrt 2))
    inner = e.op("erf", "Erf", {e.op("scaled", "Mul", {x, e.scalar("rsqrt2", 1.0 / std::numbers::sqrt2)})});
  }
  Value* onePlus = e.op("add1", "Add", {inner, e.scalar("one", 1.0)});
  return e.op("out", "Mul", {e.op("half", "Mul", {x, e.scalar("half_k", 0.5)}), onePlus});
}

// clip(alpha x + beta, 0, 1)
Value* hardSigmoid(Emitter& e, Value* x, double alpha, double beta) {
  Value* lin = e.op("lin", "Add", {e.op("mul", "Mul", {x, e.scalar("alpha", alpha)}), e.scalar("beta", beta)});
  return e.op("clip", "Clip", {lin, e.scalar("lo", 0.0), e.scalar("hi", 1.0)});
}

// y = x * s + t with s = scale / sqrt(var + eps), t = B - mean * s, per channel (axis 1).
Value* batchNorm(Graph& g, const Node& n) {
  const Tensor *scale = constantValue(n.input(1)), *bias = constantValue(n.input(2)),
               *mean = constantValue(n.input(3)), *var = constantValue(n.input(4));
  if (!scale || !bias || !mean || !var) return nullptr;
  int64_t channels = scale->numElements();
  if (n.input(0)->shape().size() < 2 || n.input(0)->shape()[1] != channels) return nullptr;
  double eps = n.attrFloat("epsilon", 1e-5);
  std::vector<double> s(static_cast<size_t>(channels)), t(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    s[size_t(c)] = scale->getDouble(c) / std::sqrt(var->getDouble(c) + eps);
    t[size_t(c)] = bias->getDouble(c) - mean->getDouble(c) * s[size_t(c)];
  }
  Shape perChannel(n.input(0)->shape().size() - 1, 1);  // [C,1,1] broadcasts over N and the spatial axes
  perChannel[0] = channels;
  Emitter e(g, n);
  Value* scaled = e.op("mul", "Mul", {n.input(0), e.tensor("scale", perChannel, s)});
  return e.op("add", "Add", {scaled, e.tensor("shift", perChannel, t)});
}

// A 2-D conv whose stride equals its window, unpadded and undilated (a ViT's patch embedding, a ConvNeXt stem)
// reads each input pixel once: it is a matmul of the patches [N·oh·ow, C·kh·kw] by the flattened weights. As a
// MatMul it takes the gemm's tiles and tensor cores; as a conv the implicit-GEMM forms need the input channels
// in steps of 8 (ViT's 3 ran on CUDA cores: 7.7 ms of its 99.6 at batch 32 on the H200). Windows of one pixel
// (1 x 1 convs) stay convs, which need no transposes; so does a window that leaves input pixels over.
bool isPatchConv(const Node& n) {
  const Value* x = n.input(0);
  const Value* w = n.input(1);
  if (!x || !w || x->shape().size() != 4 || w->shape().size() != 4 || n.attrInt("group", 1) != 1 || n.numOutputs() != 1)
    return false;
  if (!registered({"Reshape", "Transpose", "MatMul", "Add"})) return false;
  Shape spatial(x->shape().begin() + 2, x->shape().end()), kernel(w->shape().begin() + 2, w->shape().end());
  if (kernel[0] * kernel[1] <= 1) return false;
  ops::WindowGeometry geo = ops::windowGeometry(n, spatial, kernel, false);
  for (size_t a = 0; a < 2; ++a)
    if (geo.strides[a] != kernel[a] || geo.dilations[a] != 1 || geo.padsBegin[a] != 0 || geo.padsEnd[a] != 0 ||
        spatial[a] % kernel[a] != 0)
      return false;
  return true;
}

Value* patchConv(Graph& g, const Node& n) {
  const Value* x = n.input(0);
  const Value* w = n.input(1);
  Shape spatial(x->shape().begin() + 2, x->shape().end()), kernel(w->shape().begin() + 2, w->shape().end());
  int64_t N = x->shape()[0], C = x->shape()[1], M = w->shape()[0], kh = kernel[0], kw = kernel[1];
  int64_t oh = spatial[0] / kh, ow = spatial[1] / kw;
  Emitter e(g, n);
  Value* patches = e.transpose("patches", e.reshape("windows", n.input(0), {N, C, oh, kh, ow, kw}), {0, 2, 4, 1, 3, 5});
  Value* rows = e.reshape("rows", patches, {N * oh * ow, C * kh * kw});
  Value* weights = e.transpose("weights", e.reshape("filters", n.input(1), {M, C * kh * kw}), {1, 0});
  Value* y = e.op("matmul", "MatMul", {rows, weights});
  if (n.input(2)) y = e.op("bias", "Add", {y, n.input(2)});
  return e.transpose("out", e.reshape("pixels", y, {N, oh, ow, M}), {0, 3, 1, 2});
}

// The element types an Einsum is decomposed in: those MatMul and ReduceSum lower for every backend.
bool einsumDecomposes(const Node& n) {
  DType t = n.output(0)->dtype();
  bool typed = t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16 || t == DType::I32 || t == DType::I64;
  return typed && registered({"Transpose", "Reshape", "ReduceSum", "MatMul"});
}

class DecomposePass : public Pass {
 public:
  std::string name() const override { return "decompose"; }
  std::string summary() const override { return "split composite ops into primitive ops"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"decomposed", "composite nodes replaced"},
            {"added-nodes", "primitive nodes added"},
            {"skipped", "composite nodes kept (non-float type, extra outputs used, non-constant parameters)"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    for (Node* n : graph.topoOrder()) {
      if (n->op() == "Conv") {
        if (isPatchConv(*n) && ctx.tryRewrite()) replace(graph, ctx, n, [&] { return patchConv(graph, *n); });
        continue;
      }
      if (n->op() == "Attention") {  // in its own type: the attention pattern's kernel rounds as the graph does
        if (!attentionDecomposes(*n) || !ctx.tryRewrite() ||
            !replace(graph, ctx, n, [&] { return attentionAsPrimitives(graph, *n); }))
          ctx.count("skipped");
        continue;
      }
      if (ops::isScatterOp(n->op())) {
        if (!ctx.tryRewrite() || !replace(graph, ctx, n, [&] { return scatterAsGather(graph, *n); })) ctx.count("skipped");
        continue;
      }
      if (n->op() == "TopK") {
        if (!ctx.tryRewrite() || !replace(graph, ctx, n, [&] { return topkAsRanks(graph, *n); })) ctx.count("skipped");
        continue;
      }
      if (n->op() == "DynamicQuantizeLinear") {
        if (!ctx.tryRewrite() || !replace(graph, ctx, n, [&] { return dynamicQuantizeAsPrimitives(graph, *n); }))
          ctx.count("skipped");
        continue;
      }
      if (isQuantizedProduct(n->op())) {
        if (!ctx.tryRewrite() || !replace(graph, ctx, n, [&] { return quantizedProductAsPrimitives(graph, *n); }))
          ctx.count("skipped");
        continue;
      }
      if (n->op() == "Einsum") {
        if (!einsumDecomposes(*n) || !ctx.tryRewrite() || !replace(graph, ctx, n, [&] { return einsumAsMatMul(graph, *n); }))
          ctx.count("skipped");
        continue;
      }
      if (!isComposite(n->op())) continue;
      DType t = n->output(0)->dtype();
      bool half = (t == DType::F16 || t == DType::BF16) && !hasOwnLowering(n->op());
      // Other float types round differently once split into several ops; they stay whole, but for the 16-bit
      // ops nothing lowers whole, which are computed in f32 and rounded once.
      if ((t != DType::F32 && t != DType::F64 && !half) || !onlyFirstOutputUsed(*n) || !ctx.tryRewrite() ||
          !replace(graph, ctx, n, [&] { return half ? expandInF32(graph, *n) : expand(graph, *n); }))
        ctx.count("skipped");
    }
  }

 private:
  // Forwards n's outputs to what `build` adds, one Value* (the first output) or one per output (stray new
  // nodes, if any, are left for dce); false when it added nothing or an output could not be forwarded.
  template <typename Build>
  static bool replace(Graph& graph, PassContext& ctx, Node* n, Build build) {
    size_t before = graph.numNodes();
    std::vector<Value*> results;
    if constexpr (std::is_same_v<decltype(build()), Value*>)
      results = {build()};
    else
      results = build();
    if (results.empty() || !results[0] || results.size() > n->numOutputs()) return false;
    std::vector<std::string> names;
    for (size_t i = 0; i < results.size(); ++i) names.push_back(n->output(i) ? n->output(i)->name() : "");
    if (!(results.size() == 1 ? forwardOutput(graph, n, 0, results[0]) : forwardOutputs(graph, n, results))) return false;
    for (size_t i = 0; i < results.size(); ++i)  // consumers keep reading the same names
      if (results[i] && !names[i].empty() && !graph.findValue(names[i])) graph.renameValue(results[i], names[i]);
    ctx.count("decomposed");
    ctx.count("added-nodes", int64_t(graph.numNodes() - before + 1));
    return true;
  }

  // Composites the row or pointwise lowerings take whole (docs/kernel-ir.md), in any float type: all but
  // RMSNormalization and RotaryEmbedding.
  static bool hasOwnLowering(const std::string& op) { return op != "RMSNormalization" && op != "RotaryEmbedding"; }

  // A 16-bit composite no lowering takes whole (RMSNormalization of a bf16 model):
  // its 16-bit inputs cast to f32, the same op in f32 split as above, the result cast back once, as the reference
  // computes in double and rounds once. Fusion puts the casts into the kernel the primitives make.
  static Value* expandInF32(Graph& g, const Node& n) {
    std::vector<Value*> inputs;
    for (size_t i = 0; i < n.numInputs(); ++i) {
      Value* v = n.input(i);
      if (v && (v->dtype() == DType::F16 || v->dtype() == DType::BF16))
        v = addInferredNode(g, "Cast", {v}, {{"to", int64_t(1)}}, n.id() + ".f32_in" + std::to_string(i));  // 1: float
      inputs.push_back(v);
    }
    Value* wide = addInferredNode(g, n.op(), inputs, n.attrs(), n.id() + ".f32");
    Node* wideNode = wide->producer();
    Value* result = expand(g, *wideNode);
    if (!result || !forwardOutput(g, wideNode, 0, result)) return nullptr;
    return addInferredNode(g, "Cast", {result}, {{"to", int64_t(n.output(0)->dtype() == DType::F16 ? 10 : 16)}}, n.id() + ".round");
  }

  static bool isComposite(const std::string& op) {
    return op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization" || op == "RMSNormalization" || op == "Gelu" ||
           op == "BatchNormalization" || op == "HardSigmoid" || op == "HardSwish" || op == "RotaryEmbedding";
  }

  static Value* expand(Graph& g, const Node& n) {
    const std::string& op = n.op();
    if (op == "Softmax" || op == "LogSoftmax") {
      if (!registered({"ReduceMax", "Sub", "Exp", "ReduceSum", "Div", "Log"})) return nullptr;
      return softmax(g, n, op == "LogSoftmax");
    }
    if (op == "LayerNormalization") {
      if (!registered({"ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div"})) return nullptr;
      return layerNorm(g, n);
    }
    if (op == "RMSNormalization") return registered({"ReduceMean", "Mul", "Add", "Sqrt", "Div"}) ? rmsNorm(g, n) : nullptr;
    if (op == "Gelu") return registered({"Mul", "Add", "Erf", "Tanh"}) ? gelu(g, n) : nullptr;
    if (op == "RotaryEmbedding")
      return registered({"Gather", "Slice", "Reshape", "Mul", "Sub", "Add", "Concat"}) ? rotaryAsPrimitives(g, n) : nullptr;
    if (op == "BatchNormalization") {
      if (n.attrInt("training_mode", 0) != 0) return nullptr;
      return batchNorm(g, n);
    }
    if (!registered({"Mul", "Add", "Clip"})) return nullptr;
    Emitter e(g, n);
    if (op == "HardSigmoid") return hardSigmoid(e, n.input(0), n.attrFloat("alpha", 0.2), n.attrFloat("beta", 0.5));
    return e.op("out", "Mul", {n.input(0), hardSigmoid(e, n.input(0), 1.0 / 6.0, 0.5)});  // HardSwish
  }
};

}  // namespace

std::unique_ptr<Pass> createDecomposePass() { return std::make_unique<DecomposePass>(); }

}  // namespace tessera
