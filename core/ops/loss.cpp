// Losses: NegativeLogLikelihoodLoss(input, target, weight?) and SoftmaxCrossEntropyLoss(scores, labels,
// weights?) -> loss, log_prob?. Input is [N, C, d1...], target [N, d1...]; loss element (n, d...) is
// -input[n, target, d...] * weight[target], 0 where target == ignore_index. Reduction: none (the per-element
// losses), sum, or mean = sum / sum of the weights that applied (the count of non-ignored elements without
// weights), as ONNX's reference computes it. SoftmaxCrossEntropyLoss is the same loss over log_softmax along C.
#include <algorithm>
#include <cmath>
#include <optional>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

enum class LossReduction { None, Sum, Mean };

LossReduction lossReduction(const Node& node) {
  std::string r = node.attrString("reduction", "mean");
  if (r == "none") return LossReduction::None;
  if (r == "sum") return LossReduction::Sum;
  if (r == "mean") return LossReduction::Mean;
  failNode(node, "attribute 'reduction' = '" + r + "' is not one of none, sum, mean");
}

void inferLoss(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  requireDType(ctx, 1, {DType::I64, DType::I32});
  const Shape& x = ctx.input(0).shape;
  const Shape& t = ctx.input(1).shape;
  Shape want = x;
  if (x.size() >= 2) want.erase(want.begin() + 1);
  if (x.size() < 2 || t != want)
    ctx.error("input 0 " + ctx.input(0).toString() + " must be [N, C, d...] and input 1 (target) [N, d...], not " +
              ctx.input(1).toString());
  if (ctx.hasInput(2)) {
    requireSameDType(ctx, 0, 2);
    if (ctx.input(2).shape != Shape{x[1]})
      ctx.error("input 2 (weight) must be [C] = [" + std::to_string(x[1]) + "], not " + ctx.input(2).toString());
  }
  LossReduction r = lossReduction(ctx.node());
  ctx.outputs[0] = {ctx.input(0).dtype, r == LossReduction::None ? t : Shape{}};
  if (ctx.outputs.size() > 1) ctx.outputs[1] = ctx.input(0);
}

// The loss of log-probabilities `logp` (laid out as input 0) against the targets.
Tensor nllLoss(const Node& node, const std::vector<double>& logp, const Shape& xShape, const Tensor& target,
               const Tensor* weight, const TensorType& outType) {
  int64_t classes = xShape[1], inner = numElements(xShape) / std::max<int64_t>(xShape[0] * classes, 1);
  std::optional<int64_t> ignore;
  if (node.hasAttr("ignore_index")) ignore = node.attrInt("ignore_index", 0);
  std::vector<double> w = weight ? weight->toDoubles() : std::vector<double>{};
  std::vector<double> loss(size_t(target.numElements()));
  double total = 0, weights = 0;
  for (int64_t k = 0; k < target.numElements(); ++k) {
    int64_t c = target.getInt(k);
    if (ignore && c == *ignore) continue;  // loss 0, weight 0
    if (c < 0 || c >= classes)
      failNode(node, "target " + std::to_string(c) + " is outside the " + std::to_string(classes) + " classes");
    int64_t n = k / inner, d = k % inner;
    double wc = w.empty() ? 1.0 : w[size_t(c)];
    loss[size_t(k)] = -logp[size_t((n * classes + c) * inner + d)] * wc;
    total += loss[size_t(k)];
    weights += wc;
  }
  switch (lossReduction(node)) {
    case LossReduction::None: return fromDoublesRounded(outType.dtype, outType.shape, loss);
    case LossReduction::Sum: return Tensor::scalar(outType.dtype, total);
    case LossReduction::Mean: break;
  }
  return Tensor::scalar(outType.dtype, total / weights);
}

std::vector<Tensor> evalNll(const Node& node, const std::vector<const Tensor*>& in,
                            const std::vector<TensorType>& types) {
  const Tensor* weight = in.size() > 2 ? in[2] : nullptr;
  return {nllLoss(node, in[0]->toDoubles(), in[0]->shape(), *in[1], weight, types[0])};
}

// log_softmax along dim 1 of [N, C, d...].
std::vector<double> logSoftmaxOverClasses(const Tensor& x) {
  AxisSplit sp = splitAtAxis(x.shape(), 1);
  std::vector<double> v = x.toDoubles();
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      auto at = [&](int64_t c) -> double& { return v[size_t((o * sp.extent + c) * sp.inner + i)]; };
      double peak = -INFINITY, sum = 0;
      for (int64_t c = 0; c < sp.extent; ++c) peak = std::max(peak, at(c));
      if (std::isinf(peak)) peak = 0;
      for (int64_t c = 0; c < sp.extent; ++c) sum += std::exp(at(c) - peak);
      for (int64_t c = 0; c < sp.extent; ++c) at(c) = at(c) - peak - std::log(sum);
    }
  return v;
}

std::vector<Tensor> evalSoftmaxCrossEntropy(const Node& node, const std::vector<const Tensor*>& in,
                                            const std::vector<TensorType>& types) {
  std::vector<double> logp = logSoftmaxOverClasses(*in[0]);
  const Tensor* weight = in.size() > 2 ? in[2] : nullptr;
  std::vector<Tensor> out{nllLoss(node, logp, in[0]->shape(), *in[1], weight, types[0])};
  if (types.size() > 1) out.push_back(fromDoublesRounded(types[1].dtype, types[1].shape, logp));
  return out;
}

}  // namespace

void registerLossOps(OpRegistry& r) {
  addOp(r, {"NegativeLogLikelihoodLoss", OpCategory::Other, "-input[n, target, d...] * weight[target], reduced "
            "(none, sum, mean)", 2, 3, 1, 1, {}, inferLoss, evalNll});
  addOp(r, {"SoftmaxCrossEntropyLoss", OpCategory::Other, "negative log-likelihood of log_softmax(scores) along "
            "dim 1, reduced (none, sum, mean); output 1: the log-probabilities", 2, 3, 1, 2, {}, inferLoss,
            evalSoftmaxCrossEntropy});
}

}  // namespace tessera
