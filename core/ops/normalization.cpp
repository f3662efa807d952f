// Normalizations: Softmax, LogSoftmax, Hardmax (opset-13 form: along one axis), LayerNormalization,
// RMSNormalization, BatchNormalization (inference form) and LRN. All computed in double and rounded once to the
// output dtype.
#include <cmath>

#include "ops/broadcast.h"
#include "ops/op_support.h"
#include "ops/families.h"

namespace tessera {
namespace {
using namespace ops;  // the shared helpers of op_support.h

// Softmax along `axis`, shifted by the maximum so that large inputs do not overflow.
std::vector<double> softmax(std::vector<double> v, const AxisSplit& sp, bool logForm) {
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      auto at = [&](int64_t a) -> double& { return v[size_t((o * sp.extent + a) * sp.inner + i)]; };
      double peak = -INFINITY, sum = 0;
      for (int64_t a = 0; a < sp.extent; ++a) peak = std::max(peak, at(a));
      if (std::isinf(peak)) peak = 0;  // all -inf, or +inf present: no shift keeps inf/NaN semantics
      for (int64_t a = 0; a < sp.extent; ++a) sum += std::exp(at(a) - peak);
      for (int64_t a = 0; a < sp.extent; ++a)
        at(a) = logForm ? at(a) - peak - std::log(sum) : std::exp(at(a) - peak) / sum;
    }
  return v;
}

OpSchema softmaxSchema(const char* name, bool logForm) {
  OpSchema s;
  s.name = name;
  s.category = OpCategory::Reduction;
  s.summary = logForm ? "y = log(softmax(x)) along axis (default -1)"
                      : "y = exp(x) / sum(exp(x)) along axis (default -1)";
  s.infer = [](InferContext& ctx) {
    requireDType(ctx, 0, DTypeClass::Float);
    normalizedAxis(ctx, ctx.node().attrInt("axis", -1), int64_t(ctx.input(0).shape.size()));
    ctx.outputs[0] = ctx.input(0);
  };
  s.eval = [logForm](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    const Tensor& x = *in[0];
    int64_t rank = int64_t(x.shape().size());
    int64_t axis = evalAxis(node, node.attrInt("axis", -1), rank);
    std::vector<double> y = softmax(x.toDoubles(), splitAtAxis(x.shape(), axis), logForm);
    return std::vector<Tensor>{fromDoublesRounded(types[0].dtype, types[0].shape, y)};
  };
  return s;
}

// --- Hardmax: 1 at the first maximum along axis, 0 elsewhere (opset-13 form; the importer rewrites older ones) ---

std::vector<Tensor> evalHardmax(const Node& node, const std::vector<const Tensor*>& in,
                                const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  AxisSplit sp = splitAtAxis(x.shape(), evalAxis(node, node.attrInt("axis", -1), int64_t(x.shape().size())));
  std::vector<double> v = x.toDoubles(), y(v.size(), 0.0);
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t i = 0; i < sp.inner; ++i) {
      auto at = [&](int64_t a) { return size_t((o * sp.extent + a) * sp.inner + i); };
      int64_t best = 0;
      for (int64_t a = 1; a < sp.extent; ++a)
        if (v[at(a)] > v[at(best)]) best = a;
      if (sp.extent) y[at(best)] = 1;
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

OpSchema hardmaxSchema() {
  OpSchema s = softmaxSchema("Hardmax", false);
  s.category = OpCategory::Other;  // no kernel template (see README)
  s.summary = "y = 1 at the first maximum along axis (default -1), 0 elsewhere";
  s.eval = evalHardmax;
  return s;
}

// --- LayerNormalization(X, Scale, B?) -> Y, Mean?, InvStdDev? over dims [axis, rank) ---

struct LayerNormShapes {
  int64_t axis;
  Shape normalized;  // X's dims [axis, rank)
  Shape stats;       // X's dims [0, axis) then ones: the shape of Mean and InvStdDev
};

LayerNormShapes layerNormShapes(const Shape& x, int64_t axis) {
  LayerNormShapes s{axis, Shape(x.begin() + axis, x.end()), x};
  for (size_t d = size_t(axis); d < x.size(); ++d) s.stats[d] = 1;
  return s;
}

DType stashDType(const InferContext& ctx) {
  int64_t code = ctx.node().attrInt("stash_type", 1);
  std::optional<DType> t = dtypeFromOnnxCode(code);
  if (!t || !isFloat(*t)) ctx.error("attribute 'stash_type' = " + std::to_string(code) + " is not a float dtype code");
  return *t;
}

void inferLayerNorm(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  if (x.empty()) ctx.error("input 0 (X) must have rank >= 1");
  LayerNormShapes ls = layerNormShapes(x, normalizedAxis(ctx, ctx.node().attrInt("axis", -1), int64_t(x.size())));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.hasInput(i)) continue;
    requireSameDType(ctx, 0, i);
    std::optional<Shape> b = broadcastShapes({ls.normalized, ctx.input(i).shape});
    if (!b || *b != ls.normalized)
      ctx.error("input " + std::to_string(i) + (i == 1 ? " (Scale) " : " (B) ") + ctx.input(i).toString() +
                " does not broadcast to the normalized dims " + shapeToString(ls.normalized));
  }
  DType stash = stashDType(ctx);
  ctx.outputs[0] = ctx.input(0);
  for (size_t o = 1; o < ctx.outputs.size(); ++o) ctx.outputs[o] = {stash, ls.stats};
}

std::vector<Tensor> evalLayerNorm(const Node& node, const std::vector<const Tensor*>& in,
                                  const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  int64_t rank = int64_t(x.shape().size());
  LayerNormShapes ls = layerNormShapes(x.shape(), evalAxis(node, node.attrInt("axis", -1), rank));
  double eps = node.attrFloat("epsilon", 1e-5);
  AxisSplit sp{numElements(ls.stats), numElements(ls.normalized), 1};
  std::vector<double> v = x.toDoubles(), scale = in[1]->toDoubles(), bias;
  std::vector<int64_t> scaleAt = broadcastIndexMap(in[1]->shape(), ls.normalized), biasAt;
  if (in.size() > 2 && in[2]) {
    bias = in[2]->toDoubles();
    biasAt = broadcastIndexMap(in[2]->shape(), ls.normalized);
  }
  std::vector<double> means(size_t(sp.outer)), invStd(size_t(sp.outer));
  for (int64_t o = 0; o < sp.outer; ++o) {
    double* row = v.data() + o * sp.extent;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < sp.extent; ++j) mean += row[j];
    mean /= double(sp.extent);
    for (int64_t j = 0; j < sp.extent; ++j) var += (row[j] - mean) * (row[j] - mean);
    double inv = 1.0 / std::sqrt(var / double(sp.extent) + eps);
    for (int64_t j = 0; j < sp.extent; ++j) {
      row[j] = (row[j] - mean) * inv * scale[size_t(scaleAt[size_t(j)])];
      if (!bias.empty()) row[j] += bias[size_t(biasAt[size_t(j)])];
    }
    means[size_t(o)] = mean;
    invStd[size_t(o)] = inv;
  }
  std::vector<Tensor> out{fromDoublesRounded(types[0].dtype, types[0].shape, v)};
  if (types.size() > 1) out.push_back(fromDoublesRounded(types[1].dtype, types[1].shape, means));
  if (types.size() > 2) out.push_back(fromDoublesRounded(types[2].dtype, types[2].shape, invStd));
  return out;
}

OpSchema layerNormSchema() {
  OpSchema s;
  s.name = "LayerNormalization";
  s.category = OpCategory::Reduction;
  s.summary = "y = (x - mean) / sqrt(var + epsilon) * scale + bias over dims [axis, rank)";
  s.traits = {.rowNormalization = true};
  s.minInputs = 2;
  s.maxInputs = 3;
  s.maxOutputs = 3;
  s.infer = inferLayerNorm;
  s.eval = evalLayerNorm;
  return s;
}

// --- RMSNormalization(X, scale) -> Y = X / sqrt(mean(X^2) + epsilon) * scale over dims [axis, rank) ---

void inferRmsNorm(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  if (x.empty()) ctx.error("input 0 (X) must have rank >= 1");
  LayerNormShapes ls = layerNormShapes(x, normalizedAxis(ctx, ctx.node().attrInt("axis", -1), int64_t(x.size())));
  requireSameDType(ctx, 0, 1);
  std::optional<Shape> b = broadcastShapes({ls.normalized, ctx.input(1).shape});
  if (!b || *b != ls.normalized)
    ctx.error("input 1 (scale) " + ctx.input(1).toString() + " does not broadcast to the normalized dims " +
              shapeToString(ls.normalized));
  stashDType(ctx);
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalRmsNorm(const Node& node, const std::vector<const Tensor*>& in,
                                const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  LayerNormShapes ls =
      layerNormShapes(x.shape(), evalAxis(node, node.attrInt("axis", -1), int64_t(x.shape().size())));
  double eps = node.attrFloat("epsilon", 1e-5);
  int64_t rows = numElements(ls.stats), n = numElements(ls.normalized);
  std::vector<double> v = x.toDoubles(), scale = in[1]->toDoubles();
  std::vector<int64_t> scaleAt = broadcastIndexMap(in[1]->shape(), ls.normalized);
  for (int64_t o = 0; o < rows; ++o) {
    double* row = v.data() + o * n;
    double squares = 0;
    for (int64_t j = 0; j < n; ++j) squares += row[j] * row[j];
    double inv = 1.0 / std::sqrt(squares / double(n) + eps);
    for (int64_t j = 0; j < n; ++j) row[j] *= inv * scale[size_t(scaleAt[size_t(j)])];
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, v)};
}

OpSchema rmsNormSchema() {
  OpSchema s;
  s.name = "RMSNormalization";
  s.category = OpCategory::Other;  // no kernel template yet (see README)
  s.summary = "y = x / sqrt(mean(x^2) + epsilon) * scale over dims [axis, rank)";
  s.minInputs = s.maxInputs = 2;
  s.infer = inferRmsNorm;
  s.eval = evalRmsNorm;
  return s;
}

// --- BatchNormalization(X, scale, B, mean, var): per channel (dim 1) ---
// Inference form: Y uses the given mean and variance. Training form (training_mode = 1, opset 14+): Y uses the
// batch mean and the biased batch variance over every dim but 1, and the optional outputs 1 and 2 are
// running_mean = mean * momentum + batch_mean * (1 - momentum), running_var likewise with the batch variance.

void inferBatchNorm(InferContext& ctx) {
  bool training = ctx.node().attrInt("training_mode", 0) != 0;
  if (!training && ctx.outputs.size() > 1)
    ctx.error("has " + std::to_string(ctx.outputs.size()) +
              " outputs; running mean and variance outputs exist only with training_mode = 1");
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2) ctx.error("input 0 (X) must have rank >= 2 (N, C, ...) but is " + ctx.input(0).toString());
  const char* names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    requireDType(ctx, i, DTypeClass::Float);
    if (ctx.input(i).shape != Shape{x[1]})
      ctx.error("input " + std::to_string(i) + " (" + names[i] + ") must have shape [" + std::to_string(x[1]) +
                "] (the channels of X) but is " + ctx.input(i).toString());
  }
  if (training && numElements(x) == 0) ctx.error("training_mode = 1 needs a non-empty X (batch statistics)");
  ctx.outputs[0] = ctx.input(0);
  for (size_t o = 1; o < ctx.outputs.size(); ++o) ctx.outputs[o] = ctx.input(2 + o);
}

// Per-channel mean and biased variance of x (split at dim 1).
void batchStatistics(const std::vector<double>& v, const AxisSplit& sp, std::vector<double>& mean,
                     std::vector<double>& var) {
  double count = double(sp.outer * sp.inner);
  mean.assign(size_t(sp.extent), 0.0);
  var.assign(size_t(sp.extent), 0.0);
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t c = 0; c < sp.extent; ++c)
      for (int64_t i = 0; i < sp.inner; ++i) mean[size_t(c)] += v[size_t((o * sp.extent + c) * sp.inner + i)];
  for (double& m : mean) m /= count;
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t c = 0; c < sp.extent; ++c)
      for (int64_t i = 0; i < sp.inner; ++i) {
        double d = v[size_t((o * sp.extent + c) * sp.inner + i)] - mean[size_t(c)];
        var[size_t(c)] += d * d;
      }
  for (double& s : var) s /= count;
}

// input * momentum + batch * (1 - momentum), as the running statistic outputs.
Tensor runningStatistic(const Tensor& input, const std::vector<double>& batch, double momentum,
                        const TensorType& type) {
  std::vector<double> r = input.toDoubles();
  for (size_t c = 0; c < r.size(); ++c) r[c] = r[c] * momentum + batch[c] * (1 - momentum);
  return fromDoublesRounded(type.dtype, type.shape, r);
}

// Inference on f32: read and written in place, each value computed in double and rounded once as below (a
// ResNet's batch norms, unfolded in the graph the reference runs, spent more time converting their activations
// to doubles and back, on one core, than normalizing them).
Tensor batchNormF32(const Tensor& x, const AxisSplit& sp, const std::vector<double>& scale,
                    const std::vector<double>& bias, const std::vector<double>& mean, const std::vector<double>& var,
                    double eps, const Shape& shape) {
  Tensor y = Tensor::uninitialized(DType::F32, shape);
  const float* in = x.data<float>();
  float* out = y.mutableData<float>();
  parallelFor(sp.outer * sp.extent, sp.inner, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const size_t c = size_t(plane % sp.extent);
      const double k = scale[c] / std::sqrt(var[c] + eps);
      const float* p = in + plane * sp.inner;
      float* q = out + plane * sp.inner;
      for (int64_t i = 0; i < sp.inner; ++i) q[i] = float((double(p[i]) - mean[c]) * k + bias[c]);
    }
  });
  return y;
}

std::vector<Tensor> evalBatchNorm(const Node& node, const std::vector<const Tensor*>& in,
                                  const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  double eps = node.attrFloat("epsilon", 1e-5);
  bool training = node.attrInt("training_mode", 0) != 0;
  AxisSplit sp = splitAtAxis(x.shape(), 1);
  std::vector<double> scale = in[1]->toDoubles(), bias = in[2]->toDoubles();
  std::vector<double> mean = in[3]->toDoubles(), var = in[4]->toDoubles();
  if (!training && x.dtype() == DType::F32 && types[0].dtype == DType::F32)
    return {batchNormF32(x, sp, scale, bias, mean, var, eps, types[0].shape)};
  std::vector<double> v = x.toDoubles();
  if (training) batchStatistics(v, sp, mean, var);
  parallelFor(sp.outer * sp.extent, sp.inner, [&](int64_t begin, int64_t end) {  // planes over the cores
    for (int64_t plane = begin; plane < end; ++plane) {
      const size_t c = size_t(plane % sp.extent);
      double k = scale[c] / std::sqrt(var[c] + eps);
      double* p = v.data() + plane * sp.inner;
      for (int64_t i = 0; i < sp.inner; ++i) p[i] = (p[i] - mean[c]) * k + bias[c];
    }
  });
  std::vector<Tensor> out{fromDoublesRounded(types[0].dtype, types[0].shape, v)};
  double momentum = node.attrFloat("momentum", 0.9);
  if (types.size() > 1) out.push_back(runningStatistic(*in[3], mean, momentum, types[1]));
  if (types.size() > 2) out.push_back(runningStatistic(*in[4], var, momentum, types[2]));
  return out;
}

OpSchema batchNormSchema() {
  OpSchema s;
  s.name = "BatchNormalization";
  s.category = OpCategory::Pointwise;
  s.summary = "y = (x - mean) / sqrt(var + epsilon) * scale + B per channel (training_mode = 1: batch "
              "statistics, outputs running mean and variance)";
  s.minInputs = s.maxInputs = 5;
  s.maxOutputs = 3;
  s.infer = inferBatchNorm;
  s.eval = evalBatchNorm;
  return s;
}

// --- LRN(X): local response normalization across channels (dim 1), as in AlexNet ---

void inferLrn(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  if (ctx.input(0).shape.size() < 2)
    ctx.error("input 0 (X) must have rank >= 2 (N, C, ...) but is " + ctx.input(0).toString());
  const Attribute* size = ctx.node().attr("size");
  if (!size || size->kind() != AttrKind::Int || size->i() <= 0)
    ctx.error("attribute 'size' (the channel window) must be a positive int");
  ctx.outputs[0] = ctx.input(0);
}

// y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta; the window around channel c spans
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)], clipped to the channels.
std::vector<Tensor> evalLrn(const Node& node, const std::vector<const Tensor*>& in,
                            const std::vector<TensorType>& types) {
  double alpha = node.attrFloat("alpha", 1e-4), beta = node.attrFloat("beta", 0.75);
  double bias = node.attrFloat("bias", 1.0);
  int64_t size = node.attrInt("size", 1);
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  AxisSplit sp = splitAtAxis(in[0]->shape(), 1);
  std::vector<double> x = in[0]->toDoubles(), y(x.size());
  for (int64_t o = 0; o < sp.outer; ++o)
    for (int64_t c = 0; c < sp.extent; ++c)
      for (int64_t i = 0; i < sp.inner; ++i) {
        double sum = 0;
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(sp.extent - 1, c + after); ++k) {
          double v = x[size_t((o * sp.extent + k) * sp.inner + i)];
          sum += v * v;
        }
        size_t at = size_t((o * sp.extent + c) * sp.inner + i);
        y[at] = x[at] / std::pow(bias + alpha / double(size) * sum, beta);
      }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

OpSchema lrnSchema() {
  OpSchema s;
  s.name = "LRN";
  s.category = OpCategory::Other;
  s.summary = "local response normalization across a window of `size` channels";
  s.infer = inferLrn;
  s.eval = evalLrn;
  return s;
}

}  // namespace

void registerNormalizationOps(OpRegistry& r) {
  ops::addOp(r, softmaxSchema("Softmax", false), {.rowNormalization = true});  // not Hardmax: one pass
  ops::addOp(r, softmaxSchema("LogSoftmax", true), {.rowNormalization = true});
  ops::addOp(r, hardmaxSchema());
  ops::addOp(r, layerNormSchema());
  ops::addOp(r, rmsNormSchema());
  ops::addOp(r, batchNormSchema());
  ops::addOp(r, lrnSchema());
}

}  // namespace tessera
