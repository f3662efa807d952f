#include "passes/canonicalize.h"

#include <numeric>

#include "ops/registry.h"
#include "ops/specialize.h"
#include "ops/window.h"
#include "passes/rewrite.h"

namespace tessera {
namespace {

std::vector<int64_t> permOf(const Node& transpose) {
  size_t rank = transpose.output(0)->shape().size();
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  return transpose.attrInts("perm", reversed);
}

bool isIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return false;
  return true;
}

// A Reshape target written out in full: no 0 ("copy this extent") or -1, so it does not depend on the input.
Value* shapeConstant(Graph& graph, const Node& node) {
  const Shape& s = node.output(0)->shape();
  return addConstant(graph, node.id() + ".shape", Tensor::fromInts(DType::I64, {int64_t(s.size())}, s));
}

// True when `target` is a constant equal to `shape`, so it means the same with any input.
bool spelledOut(const Value* target, const Shape& shape) {
  const Tensor* t = constantValue(target);
  return t && t->dtype() == DType::I64 && t->toInts() == shape;
}

bool hasZeroExtent(const Shape& s) {
  for (int64_t d : s)
    if (d == 0) return true;
  return false;
}

class Canonicalizer {
 public:
  Canonicalizer(Graph& graph, PassContext& ctx) : g_(graph), ctx_(ctx) {}

  // One sweep in topological order; true when something changed.
  bool sweep() {
    bool changed = false;
    for (Node* n : g_.topoOrder()) changed |= visit(n);
    return changed;
  }

 private:
  bool visit(Node* n) {
    const std::string& op = n->op();
    // A specialized node's output types hold for the sample inputs only (ops/specialize.h): rewritten into a
    // static op (an Unsqueeze by runtime axes into a Reshape to the sample's shape) it would keep them on a run
    // whose values give others.
    if (isSpecialized(*n)) return false;
    if (op == "Identity") return forward(n, n->input(0), "identity-ops");
    if (op == "Dropout") return dropout(n);
    if (opTraits(op).neutral && neutralOperand(n)) return true;
    if (op == "Transpose") return transpose(n);
    if (op == "Mul" || op == "Div" || op == "Add" || op == "Sub") return sinkTranspose(n);
    if (op == "Reshape") return reshape(n);
    if (op == "Conv") return deadConvTaps(n) || stridedPointwiseConv(n);
    if (opTraits(op).movement == MovementKind::View) return toReshape(n);  // Flatten, Squeeze, Unsqueeze
    if (isNoOp(*n)) return forward(n, n->input(0), "identity-ops");
    return false;
  }

  // Ops that copy their first input when their output type equals its type (and, for Pad, all pads are 0:
  // pads of -1 and +1 keep the shape but shift the data).
  static bool isNoOp(const Node& n) {
    const OpTraits& t = opTraits(n.op());
    if (n.numOutputs() != 1 || !n.input(0) || n.input(0)->type() != n.output(0)->type()) return false;
    if (t.identityWhenTypeKept) return true;
    if (t.identityWhenUnary) return n.numInputs() == 1;
    if (n.op() == "Pad") return isConstantSplat(n.input(1), 0);
    return false;
  }

  bool forward(Node* n, Value* to, const char* stat) {
    if (!to || n->output(0)->type() != to->type() || !ctx_.tryRewrite()) return false;
    if (!forwardOutput(g_, n, 0, to)) return false;  // spent one unit of fuel: rare (graph output names)
    ctx_.count(stat);
    return true;
  }

  // Inference-mode Dropout (no training_mode, or a constant false one) passes its input through.
  bool dropout(Node* n) {
    Value* training = n->input(2);
    if (training && !isConstantSplat(training, 0)) return false;
    if (Value* mask = n->output(1); mask && (!mask->uses().empty() || mask->isGraphOutput())) return false;
    return forward(n, n->input(0), "identity-ops");
  }

  // x+0, 0+x, x-0, x*1, 1*x, x/1, x^1: the constant must not broadcast x to a larger shape (forward checks
  // that the output type equals x's).
  bool neutralOperand(Node* n) {
    const OpTraits& t = opTraits(n->op());
    double neutral = *t.neutral;
    bool commutes = t.commutative;
    if (isConstantSplat(n->input(1), neutral)) return forward(n, n->input(0), "neutral-operands");
    if (commutes && isConstantSplat(n->input(0), neutral)) return forward(n, n->input(1), "neutral-operands");
    return false;
  }

  bool transpose(Node* n) {
    std::vector<int64_t> perm = permOf(*n);
    if (isIdentityPerm(perm)) return forward(n, n->input(0), "identity-ops");
    Node* inner = n->input(0)->producer();
    if (!inner || inner->op() != "Transpose" || !ctx_.tryRewrite()) return false;
    // out[i] = mid[perm[i]] = in[innerPerm[perm[i]]]
    std::vector<int64_t> innerPerm = permOf(*inner), combined(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) combined[i] = innerPerm[size_t(perm[i])];
    g_.setNodeInput(n, 0, inner->input(0));
    n->attrs()["perm"] = combined;
    removeIfDead(g_, inner);
    ctx_.count("merged-transposes");
    if (isIdentityPerm(combined)) forward(n, n->input(0), "identity-ops");
    return true;
  }

  // op(Transpose(x), c) with c a constant of one element → Transpose(op(x, c)): the same values, the Transpose
  // moved on to its consumer, where a MatMul reads it as a transposed operand (PyTorch's exporter scales kᵀ
  // after transposing k: scaled_dot_product_attention's Mul(Transpose(k), sqrt(scale)), which the attention
  // pattern then finds with its Transpose folded into the key loads).
  bool sinkTranspose(Node* n) {
    Value* x = n->input(0);
    Value* c = n->input(1);
    Node* t = x ? x->producer() : nullptr;
    if (!t || t->op() != "Transpose" || x->uses().size() != 1 || x->isGraphOutput() || !c || !constantValue(c) ||
        c->type().numElements() != 1 || c->shape().size() > x->shape().size() || n->output(0)->type() != x->type() ||
        !ctx_.tryRewrite())
      return false;
    // Each node keeps its id: the op's now names op(x, c), the Transpose's the Transpose after it.
    std::string opId = n->id(), transposeId = t->id();
    Value* moved = addInferredNode(g_, n->op(), {t->input(0), c}, n->attrs(), opId + ".moved");
    Node* after = replaceNode(g_, n, "Transpose", {moved}, {{"perm", permOf(*t)}});
    removeIfDead(g_, t);
    g_.renameNode(after, transposeId);
    g_.renameNode(moved->producer(), opId);
    ctx_.count("sunk-transposes");
    return true;
  }

  bool reshape(Node* n) {
    Value* in = n->input(0);
    if (in->shape() == n->output(0)->shape()) return forward(n, in, "identity-ops");
    Node* inner = in->producer();
    if (!inner || inner->op() != "Reshape" || hasZeroExtent(n->output(0)->shape()) || !ctx_.tryRewrite())
      return false;
    g_.setNodeInput(n, 0, inner->input(0));
    if (!spelledOut(n->input(1), n->output(0)->shape())) g_.setNodeInput(n, 1, shapeConstant(g_, *n));
    removeIfDead(g_, inner);
    ctx_.count("merged-reshapes");
    return true;
  }

  // Flatten, Squeeze and Unsqueeze of static shapes are all reshapes: one op for later passes to match.
  bool toReshape(Node* n) {
    if (hasZeroExtent(n->output(0)->shape()) || !ctx_.tryRewrite()) return false;
    Value* shape = shapeConstant(g_, *n);
    replaceNode(g_, n, "Reshape", {n->input(0), shape});
    ctx_.count("to-reshape");
    return true;
  }

  // The taps of a conv window that read only padding, for every output, add nothing. DeepLab's ASPP convs at
  // dilations 24 and 36 over a 14 x 14 map read the map with their centre tap only: they are 1 x 1 convs, and as
  // 3 x 3 ones their halo left the tensor-core form no room (7.8 and 4.9 ms at batch 8 on the H200). The weights
  // are sliced to the taps that read the input and the pads moved so that each output keeps its window. Along an
  // axis they are one run: tap k reads k·d − pad_begin + o·s for the outputs o, which grows with k.
  bool deadConvTaps(Node* n) {
    const Value* x = n->input(0);
    const Value* w = n->input(1);
    if (!x || !w || x->shape().size() < 3 || w->shape().size() != x->shape().size()) return false;
    Shape spatial(x->shape().begin() + 2, x->shape().end()), kernel(w->shape().begin() + 2, w->shape().end());
    ops::WindowGeometry geo = ops::windowGeometry(*n, spatial, kernel, false);
    size_t rank = spatial.size();
    std::vector<int64_t> starts, ends, axes, live(rank), padsBegin(rank), padsEnd(rank);
    for (size_t a = 0; a < rank; ++a) {
      int64_t d = geo.dilations[a], s = geo.strides[a], last = (geo.output[a] - 1) * s;
      int64_t lo = 0, hi = kernel[a] - 1;
      while (lo <= hi && lo * d - geo.padsBegin[a] + last < 0) ++lo;        // reads before the input for every o
      while (hi >= lo && hi * d - geo.padsBegin[a] > spatial[a] - 1) --hi;  // reads past it for every o
      if (lo > hi || geo.output[a] == 0) return false;  // no tap reads the input: left as it is
      live[a] = hi - lo + 1;
      padsBegin[a] = geo.padsBegin[a] - lo * d;
      padsEnd[a] = last + (live[a] - 1) * d + 1 - spatial[a] - padsBegin[a];
      if (padsBegin[a] < 0 || padsEnd[a] < 0) return false;  // ONNX pads are not negative
      if (live[a] == kernel[a]) continue;
      starts.push_back(lo);
      ends.push_back(hi + 1);
      axes.push_back(int64_t(a) + 2);
    }
    if (axes.empty() || !ctx_.tryRewrite()) return false;
    auto ints = [&](const std::string& suffix, const std::vector<int64_t>& v) {
      return addConstant(g_, n->id() + "." + suffix, Tensor::fromInts(DType::I64, {int64_t(v.size())}, v));
    };
    Value* taps = addInferredNode(g_, "Slice", {n->input(1), ints("tap_starts", starts), ints("tap_ends", ends), ints("tap_axes", axes)},
                                  {}, n->id() + ".live_taps");
    Attributes attrs = n->attrs();
    attrs.erase("auto_pad");
    attrs["kernel_shape"] = live;
    std::vector<int64_t> pads = padsBegin;
    pads.insert(pads.end(), padsEnd.begin(), padsEnd.end());
    attrs["pads"] = pads;
    std::vector<Value*> inputs = {n->input(0), taps};
    if (n->numInputs() > 2 && n->input(2)) inputs.push_back(n->input(2));
    replaceNode(g_, n, "Conv", inputs, std::move(attrs));
    ctx_.count("dead-conv-taps");
    return true;
  }

  // A 1 x 1 conv with strides, unpadded, reads every stride-th pixel and nothing else: a Slice of those pixels
  // (steps = strides) and the unstrided conv compute it. The unstrided 1 x 1 conv is a gemm over the image
  // planes, which the GPU lowering runs on the tensor-core gemm; strided, its tiles were filled element by
  // element (ResNet-50's downsample convs: 0.9-1.0 ms each at batch 32 on the H200, 6-7 TFLOP/s).
  bool stridedPointwiseConv(Node* n) {
    const Value* x = n->input(0);
    const Value* w = n->input(1);
    if (!x || !w || x->shape().size() < 3 || w->shape().size() != x->shape().size()) return false;
    Shape spatial(x->shape().begin() + 2, x->shape().end()), kernel(w->shape().begin() + 2, w->shape().end());
    if (numElements(kernel) != 1) return false;
    ops::WindowGeometry geo = ops::windowGeometry(*n, spatial, kernel, false);
    std::vector<int64_t> starts, ends, axes, steps;
    for (size_t a = 0; a < spatial.size(); ++a) {
      if (geo.padsBegin[a] != 0 || geo.padsEnd[a] != 0) return false;
      if (geo.strides[a] == 1) continue;
      starts.push_back(0);
      ends.push_back(spatial[a]);
      axes.push_back(int64_t(a) + 2);
      steps.push_back(geo.strides[a]);
    }
    if (axes.empty() || !ctx_.tryRewrite()) return false;
    auto ints = [&](const std::string& suffix, const std::vector<int64_t>& v) {
      return addConstant(g_, n->id() + "." + suffix, Tensor::fromInts(DType::I64, {int64_t(v.size())}, v));
    };
    Value* pixels = addInferredNode(g_, "Slice", {n->input(0), ints("pixel_starts", starts), ints("pixel_ends", ends),
                                                  ints("pixel_axes", axes), ints("pixel_steps", steps)},
                                    {}, n->id() + ".strided_pixels");
    Attributes attrs = n->attrs();
    attrs.erase("auto_pad");
    attrs.erase("pads");
    attrs.erase("strides");
    std::vector<Value*> inputs = {pixels, n->input(1)};
    if (n->numInputs() > 2 && n->input(2)) inputs.push_back(n->input(2));
    replaceNode(g_, n, "Conv", inputs, std::move(attrs));
    ctx_.count("strided-pointwise-convs");
    return true;
  }

  Graph& g_;
  PassContext& ctx_;
};

class CanonicalizePass : public Pass {
 public:
  std::string name() const override { return "canonicalize"; }
  std::string summary() const override {
    return "local simplifications: neutral operands, transpose and reshape chains";
  }
  std::vector<PassStatistic> statistics() const override {
    return {{"identity-ops", "Identity, inference Dropout, no-op Reshape/Transpose/Cast/Expand/Tile/Pad/… removed"},
            {"neutral-operands", "x+0, x-0, x*1, x/1, x^1 removed"},
            {"merged-transposes", "Transpose of a Transpose made one"},
            {"sunk-transposes", "op(Transpose(x), scalar) made Transpose(op(x, scalar)), the Transpose next to its consumer"},
            {"merged-reshapes", "Reshape of a Reshape made one"},
            {"to-reshape", "Flatten, Squeeze, Unsqueeze turned into Reshape"},
            {"dead-conv-taps", "Conv windows cut to the taps that read the input, not only padding"},
            {"strided-pointwise-convs", "1 x 1 Convs with strides made a Slice of the pixels they read and an unstrided Conv"},
            {"sweeps", "passes over the graph until nothing changed"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    Canonicalizer c(graph, ctx);
    constexpr int kMaxSweeps = 16;  // every rewrite shrinks or normalizes the graph; this is a safety net
    for (int i = 0; i < kMaxSweeps; ++i) {
      ctx.count("sweeps");
      if (!c.sweep()) break;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> createCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

}  // namespace tessera
