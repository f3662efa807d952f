// ConvTranspose and CausalConvWithState (opset 27).
//
// ConvTranspose: the gradient of Conv with respect to its input. X [N, C, spatial...] and W [C, M / group,
// kernel...] give Y [N, M, out...], where each input element scatters x * w into output position
// i * stride + k * dilation - pad_begin. The output size is output_shape when given (the pads then follow from
// it, split by auto_pad), else stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads; auto_pad
// SAME_* makes it in * stride. Accumulated in double.
#include <cmath>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"
#include "ops/window.h"

namespace tessera {
namespace {
using namespace ops;

struct ConvTransposeShapes {
  int64_t N = 0, C = 0, M = 0, groups = 1;
  Shape in, kernel, out;  // spatial
  std::vector<int64_t> strides, dilations, padsBegin;
};

std::vector<int64_t> perAxis(const Node& node, const char* name, size_t rank, int64_t fallback) {
  std::vector<int64_t> v = node.attrInts(name, std::vector<int64_t>(rank, fallback));
  if (v.size() != rank)
    failNode(node, std::string("attribute '") + name + "' has " + std::to_string(v.size()) + " values for " +
                       std::to_string(rank) + " spatial axes");
  return v;
}

// The begin pads and output sizes, per spatial axis.
void transposeGeometry(const Node& node, ConvTransposeShapes& s) {
  size_t rank = s.in.size();
  std::vector<int64_t> outPad = perAxis(node, "output_padding", rank, 0), given = node.attrInts("output_shape");
  std::vector<int64_t> pads = node.attrInts("pads", std::vector<int64_t>(2 * rank, 0));
  std::string autoPad = node.attrString("auto_pad", "NOTSET");
  if (pads.size() != 2 * rank) failNode(node, "attribute 'pads' must have 2 values per spatial axis");
  if (!given.empty() && given.size() != rank) {
    if (given.size() != rank + 2) failNode(node, "attribute 'output_shape' must have one value per spatial axis");
    given.erase(given.begin(), given.begin() + 2);  // an [N, C, spatial...] form
  }
  for (size_t i = 0; i < rank; ++i) {
    int64_t full = s.strides[i] * (s.in[i] - 1) + outPad[i] + (s.kernel[i] - 1) * s.dilations[i] + 1;
    bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    if (given.empty() && !same) {
      s.padsBegin.push_back(pads[i]);
      s.out.push_back(full - pads[i] - pads[rank + i]);
    } else {
      int64_t out = given.empty() ? s.in[i] * s.strides[i] : given[i], total = full - out;
      // Floor division, as ONNX's reference: an output_shape past the full size makes `total` negative and
      // the begin pad 0 (the extra positions at the end get only the bias).
      int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      s.padsBegin.push_back(autoPad == "SAME_UPPER" ? half : total - half);
      s.out.push_back(out);
    }
    if (s.out.back() < 0) failNode(node, "output size " + std::to_string(s.out.back()) + " is negative on axis " +
                                              std::to_string(i));
  }
}

ConvTransposeShapes convTransposeShapes(const Node& node, const Shape& x, const Shape& w, const Shape* bias) {
  if (x.size() < 3 || w.size() != x.size())
    failNode(node, "X " + shapeToString(x) + " must be [N, C, spatial...] and W " + shapeToString(w) + " of its rank");
  ConvTransposeShapes s;
  s.N = x[0], s.C = x[1], s.groups = node.attrInt("group", 1);
  if (s.groups < 1 || s.C % s.groups || w[0] != s.C)
    failNode(node, "W " + shapeToString(w) + " must have X's " + std::to_string(s.C) +
                       " channels first, and group must divide them");
  s.M = w[1] * s.groups;
  s.in.assign(x.begin() + 2, x.end());
  s.kernel.assign(w.begin() + 2, w.end());
  s.strides = perAxis(node, "strides", s.in.size(), 1);
  s.dilations = perAxis(node, "dilations", s.in.size(), 1);
  for (size_t d = 0; d < s.in.size(); ++d)
    if (s.strides[d] < 1 || s.dilations[d] < 1) failNode(node, "strides and dilations must be positive");
  transposeGeometry(node, s);
  if (bias && *bias != Shape{s.M})
    failNode(node, "B " + shapeToString(*bias) + " must be [" + std::to_string(s.M) + "]");
  return s;
}

}  // namespace

WindowGeometry ops::convTransposeGeometry(const Node& node, const Shape& x, const Shape& w) {
  ConvTransposeShapes s = convTransposeShapes(node, x, w, nullptr);
  WindowGeometry g;
  g.input = s.in;
  g.kernel = s.kernel;
  g.output = s.out;
  g.strides = s.strides;
  g.dilations = s.dilations;
  g.padsBegin = s.padsBegin;
  return g;
}

namespace {

void inferConvTranspose(InferContext& ctx) {
  const Shape* bias = requireWeightOperands(ctx, DTypeClass::Float);
  ConvTransposeShapes s = convTransposeShapes(ctx.node(), ctx.input(0).shape, ctx.input(1).shape, bias);
  Shape out{s.N, s.M};
  out.insert(out.end(), s.out.begin(), s.out.end());
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalConvTranspose(const Node& node, const std::vector<const Tensor*>& in,
                                      const std::vector<TensorType>& types) {
  const Tensor* biasT = in.size() > 2 ? in[2] : nullptr;
  ConvTransposeShapes s = convTransposeShapes(node, in[0]->shape(), in[1]->shape(), biasT ? &biasT->shape() : nullptr);
  std::vector<double> x = in[0]->toDoubles(), w = in[1]->toDoubles(), y(size_t(numElements(types[0].shape)), 0.0);
  int64_t inPlane = numElements(s.in), outPlane = numElements(s.out), kPlane = numElements(s.kernel);
  int64_t cPer = s.C / s.groups, mPer = s.M / s.groups;
  size_t rank = s.in.size();
  std::vector<int64_t> inStr = stridesOf(s.in), kStr = stridesOf(s.kernel), outStr = stridesOf(s.out);
  // For every (input position, kernel position) pair: the output offset it lands on, or -1 when outside.
  std::vector<int64_t> target(size_t(inPlane * kPlane));
  for (int64_t ip = 0; ip < inPlane; ++ip)
    for (int64_t kp = 0; kp < kPlane; ++kp) {
      int64_t off = 0;
      for (size_t d = 0; d < rank && off >= 0; ++d) {
        int64_t o = (ip / inStr[d] % s.in[d]) * s.strides[d] + (kp / kStr[d] % s.kernel[d]) * s.dilations[d] -
                    s.padsBegin[d];
        off = o < 0 || o >= s.out[d] ? -1 : off + o * outStr[d];
      }
      target[size_t(ip * kPlane + kp)] = off;
    }
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t mi = 0; mi < mPer; ++mi) {
        int64_t m = c / cPer * mPer + mi;
        double* out = y.data() + (n * s.M + m) * outPlane;
        const double* wk = w.data() + (c * mPer + mi) * kPlane;
        const double* xs = x.data() + (n * s.C + c) * inPlane;
        for (int64_t ip = 0; ip < inPlane; ++ip)
          for (int64_t kp = 0; kp < kPlane; ++kp)
            if (int64_t t = target[size_t(ip * kPlane + kp)]; t >= 0) out[t] += xs[ip] * wk[kp];
      }
  if (biasT) {
    std::vector<double> b = biasT->toDoubles();
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t m = 0; m < s.M; ++m)
        for (int64_t p = 0; p < outPlane; ++p) y[size_t((n * s.M + m) * outPlane + p)] += b[size_t(m)];
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

// --- CausalConvWithState(input [B, C, L], weight [C, 1, K], bias? [C], past_state? [B, C, K-1]) -> output
// [B, C, L], present_state [B, C, K-1]: per channel, seq = past_state (zeros when absent) then input;
// output[t] = act(bias + sum_k weight[k] * seq[t + k]); present_state = the last K-1 of seq ---

void inferCausalConv(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  const Shape& w = ctx.input(1).shape;
  if (x.size() != 3 || w.size() != 3 || w[0] != x[1] || w[1] != 1 || w[2] < 1)
    ctx.error("input " + ctx.input(0).toString() + " must be [B, C, L] and weight " + ctx.input(1).toString() +
              " [C, 1, K]");
  Shape state{x[0], x[1], w[2] - 1};
  if (ctx.hasInput(2) && ctx.input(2).shape != Shape{x[1]}) ctx.error("bias must be [C]");
  if (ctx.hasInput(3) && ctx.input(3).shape != state) ctx.error("past_state must be " + shapeToString(state));
  std::string act = ctx.node().attrString("activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    ctx.error("activation '" + act + "' is not none, silu or swish");
  ctx.outputs[0] = ctx.input(0);
  if (ctx.outputs.size() > 1) ctx.outputs[1] = {ctx.input(0).dtype, state};
}

std::vector<Tensor> evalCausalConv(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i && in[i] ? in[i] : nullptr; };
  const Shape& xs = in[0]->shape();
  int64_t B = xs[0], C = xs[1], L = xs[2], K = in[1]->shape()[2];
  bool silu = node.attrString("activation", "none") != "none";
  std::vector<double> x = in[0]->toDoubles(), w = in[1]->toDoubles();
  std::vector<double> bias = input(2) ? input(2)->toDoubles() : std::vector<double>(size_t(C), 0.0);
  std::vector<double> past = input(3) ? input(3)->toDoubles() : std::vector<double>(size_t(B * C * (K - 1)), 0.0);
  std::vector<double> y(x.size()), present(past.size());
  for (int64_t bc = 0; bc < B * C; ++bc) {
    int64_t c = bc % C;
    std::vector<double> seq(past.begin() + bc * (K - 1), past.begin() + (bc + 1) * (K - 1));
    seq.insert(seq.end(), x.begin() + bc * L, x.begin() + (bc + 1) * L);
    for (int64_t t = 0; t < L; ++t) {
      double v = bias[size_t(c)];
      for (int64_t k = 0; k < K; ++k) v += w[size_t(c * K + k)] * seq[size_t(t + k)];
      y[size_t(bc * L + t)] = silu ? v / (1 + std::exp(-v)) : v;
    }
    std::copy(seq.end() - (K - 1), seq.end(), present.begin() + bc * (K - 1));
  }
  std::vector<Tensor> out{fromDoublesRounded(types[0].dtype, types[0].shape, y)};
  if (types.size() > 1) out.push_back(fromDoublesRounded(types[1].dtype, types[1].shape, present));
  return out;
}

}  // namespace

void registerConvTransposeOps(OpRegistry& r) {
  addOp(r, {"CausalConvWithState", OpCategory::Other, "causal depthwise 1-D convolution continuing from past_state "
            "(activation none or silu)", 2, 4, 1, 2, {}, inferCausalConv, evalCausalConv});
  addOp(r, {"ConvTranspose", OpCategory::Other, "transposed (fractionally strided) convolution: each input element "
            "scatters x * W over the output", 2, 3, 1, 1, {}, inferConvTranspose, evalConvTranspose});
}

}  // namespace tessera
