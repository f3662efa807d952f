// Normalizations by statistics over groups of elements: InstanceNormalization (per sample and channel, over the
// spatial dims), GroupNormalization (per sample and group of channels), MeanVarianceNormalization (over `axes`,
// default [0, 2, 3]) and LpNormalization (x / ||x||_p along one axis). Computed in double, rounded once.
#include <cmath>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

// Mean and biased variance of each group; group[i] names element i's group in [0, count).
struct GroupStats {
  std::vector<double> mean, var;
};

GroupStats groupStats(const std::vector<double>& v, const std::vector<int64_t>& group, int64_t count) {
  GroupStats s{std::vector<double>(size_t(count), 0.0), std::vector<double>(size_t(count), 0.0)};
  std::vector<double> n(size_t(count), 0.0);
  for (size_t i = 0; i < v.size(); ++i) {
    s.mean[size_t(group[i])] += v[i];
    n[size_t(group[i])] += 1;
  }
  for (size_t g = 0; g < s.mean.size(); ++g) s.mean[g] /= n[g];
  for (size_t i = 0; i < v.size(); ++i) {
    double d = v[i] - s.mean[size_t(group[i])];
    s.var[size_t(group[i])] += d * d;
  }
  for (size_t g = 0; g < s.var.size(); ++g) s.var[g] /= n[g];
  return s;
}

// Channel (dim 1) of each element of an [N, C, ...] tensor, and its (sample, channel / per) group.
std::vector<int64_t> channelOf(const Shape& x) {
  AxisSplit sp = splitAtAxis(x, 1);
  std::vector<int64_t> c(size_t(numElements(x)));
  for (size_t i = 0; i < c.size(); ++i) c[i] = int64_t(i) / sp.inner % sp.extent;
  return c;
}
std::vector<int64_t> sampleGroupOf(const Shape& x, int64_t channelsPerGroup) {
  AxisSplit sp = splitAtAxis(x, 1);
  int64_t groups = sp.extent / channelsPerGroup;
  std::vector<int64_t> g(size_t(numElements(x)));
  for (size_t i = 0; i < g.size(); ++i) {
    int64_t n = int64_t(i) / (sp.extent * sp.inner), c = int64_t(i) / sp.inner % sp.extent;
    g[i] = n * groups + c / channelsPerGroup;
  }
  return g;
}

// --- InstanceNormalization(input, scale, B) and GroupNormalization(X, scale, bias): ---
// y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c]; GroupNormalization's opset-18 form has one scale and
// bias per group instead of per channel (told apart by their length).

int64_t groupsOf(const Node& node, int64_t channels) {
  if (node.op() == "InstanceNormalization") return channels;
  int64_t g = node.attrInt("num_groups", 0);
  if (g <= 0 || channels % g) failNode(node, "num_groups " + std::to_string(g) + " must divide the " +
                                                 std::to_string(channels) + " channels");
  return g;
}

void inferChannelNorm(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) ctx.error("input 0 must be [N, C, ...], not " + ctx.input(0).toString());
  int64_t groups = groupsOf(ctx.node(), x[1]);
  for (size_t i : {1, 2}) {
    requireSameDType(ctx, 0, i);
    const Shape& s = ctx.input(i).shape;
    if (s != Shape{x[1]} && s != Shape{groups})
      ctx.error("input " + std::to_string(i) + " " + ctx.input(i).toString() + " must be [C] = [" +
                std::to_string(x[1]) + "]");
  }
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalChannelNorm(const Node& node, const std::vector<const Tensor*>& in,
                                    const std::vector<TensorType>& types) {
  const Shape& x = in[0]->shape();
  int64_t channels = x[1], groups = groupsOf(node, channels), perGroup = channels / groups;
  std::vector<double> v = in[0]->toDoubles(), scale = in[1]->toDoubles(), bias = in[2]->toDoubles();
  std::vector<int64_t> group = sampleGroupOf(x, perGroup), channel = channelOf(x);
  GroupStats st = groupStats(v, group, numElements({x[0]}) * groups);
  double eps = node.attrFloat("epsilon", 1e-5);
  bool perChannel = int64_t(scale.size()) == channels;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t g = group[i];
    size_t p = size_t(perChannel ? channel[i] : channel[i] / perGroup);
    v[i] = (v[i] - st.mean[size_t(g)]) / std::sqrt(st.var[size_t(g)] + eps) * scale[p] + bias[p];
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, v)};
}

// --- MeanVarianceNormalization(X): (x - mean) / (sqrt(var) + 1e-9) over `axes`, as ONNX's function body ---

std::vector<int64_t> mvnGroups(const Node& node, const Shape& x, int64_t& count) {
  std::vector<int64_t> axes = node.attrInts("axes", {0, 2, 3});
  std::vector<bool> reduced(x.size(), false);
  for (int64_t a : axes) reduced[size_t(evalAxis(node, a, int64_t(x.size())))] = true;
  std::vector<int64_t> strides = stridesOf(x), group(size_t(numElements(x)));
  count = 1;
  for (size_t d = 0; d < x.size(); ++d)
    if (!reduced[d]) count *= x[d];
  for (size_t i = 0; i < group.size(); ++i) {
    int64_t g = 0;
    for (size_t d = 0; d < x.size(); ++d)
      if (!reduced[d]) g = g * x[d] + int64_t(i) / strides[d] % x[d];
    group[i] = g;
  }
  return group;
}

void inferMvn(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  int64_t count = 0;
  mvnGroups(ctx.node(), ctx.input(0).shape, count);
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalMvn(const Node& node, const std::vector<const Tensor*>& in,
                            const std::vector<TensorType>& types) {
  int64_t count = 0;
  std::vector<int64_t> group = mvnGroups(node, in[0]->shape(), count);
  std::vector<double> v = in[0]->toDoubles();
  GroupStats st = groupStats(v, group, count);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = (v[i] - st.mean[size_t(group[i])]) / (std::sqrt(st.var[size_t(group[i])]) + 1e-9);
  return {fromDoublesRounded(types[0].dtype, types[0].shape, v)};
}

// --- LpNormalization(input): x / (sum |x|^p)^(1/p) along axis, p = 1 or 2 ---

void inferLpNorm(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  normalizedAxis(ctx, ctx.node().attrInt("axis", -1), int64_t(ctx.input(0).shape.size()));
  int64_t p = ctx.node().attrInt("p", 2);
  if (p != 1 && p != 2) ctx.error("attribute 'p' = " + std::to_string(p) + "; LpNormalization takes 1 or 2");
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalLpNorm(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  AxisSplit sp = splitAtAxis(x.shape(), evalAxis(node, node.attrInt("axis", -1), int64_t(x.shape().size())));
  bool l1 = node.attrInt("p", 2) == 1;
  std::vector<double> v = x.toDoubles();
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      auto at = [&](int64_t a) -> double& { return v[size_t((o * sp.extent + a) * sp.inner + i)]; };
      double norm = 0;
      for (int64_t a = 0; a < sp.extent; ++a) norm += l1 ? std::fabs(at(a)) : at(a) * at(a);
      if (!l1) norm = std::sqrt(norm);
      for (int64_t a = 0; a < sp.extent; ++a) at(a) = norm == 0 ? 0.0 : at(a) / norm;  // a zero line stays 0
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, v)};
}

}  // namespace

void registerNormalizationStatsOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template (see README)
  addOp(r, {"InstanceNormalization", other, "y = (x - mean) / sqrt(var + epsilon) * scale + B per sample and channel",
            3, 3, 1, 1, {}, inferChannelNorm, evalChannelNorm});
  addOp(r, {"GroupNormalization", other, "y = (x - mean) / sqrt(var + epsilon) * scale + bias per sample and group of "
            "channels", 3, 3, 1, 1, {}, inferChannelNorm, evalChannelNorm});
  addOp(r, {"MeanVarianceNormalization", other, "y = (x - mean) / sqrt(var) over axes (default [0, 2, 3])", 1, 1, 1, 1,
            {}, inferMvn, evalMvn});
  addOp(r, {"LpNormalization", other, "y = x / ||x||_p along axis (p = 1 or 2)", 1, 1, 1, 1, {}, inferLpNorm,
            evalLpNorm});
}

}  // namespace tessera
