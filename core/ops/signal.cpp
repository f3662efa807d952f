// Signal ops: DFT (opset-20 form: input [..., n, 1 or 2] real or complex in the last dim, dft_length and axis as
// inputs; opset 17's axis attribute is read too; inverse + onesided takes the n = length / 2 + 1 half spectrum
// and returns the real signal, as ONNX's reference), STFT (the DFT of windowed frames) and the HannWindow,
// HammingWindow and BlackmanWindow generators, and MelWeightMatrix. Sums are direct (O(n^2) per line) in double.
#include <cmath>
#include <numbers>
#include <optional>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

struct DftPlan {
  int64_t axis, length, outLength;
  bool inverse, onesided;
  bool realOut() const { return inverse && onesided; }
};

// The scalar integer operand i when given (a 0-D or one-element tensor), else `fallback`.
int64_t optionalScalar(const Node& node, const Tensor* t, size_t i, int64_t fallback) {
  if (!t) return fallback;
  if (!isInteger(t->dtype()) || t->numElements() != 1)
    failNode(node, "input " + std::to_string(i) + " must be one integer, not " + t->type().toString());
  return t->getInt(0);
}

DftPlan dftPlan(const Node& node, const Shape& x, const Tensor* length, const Tensor* axisT) {
  int64_t rank = int64_t(x.size());
  if (rank < 2 || (x.back() != 1 && x.back() != 2))
    failNode(node, "input 0 " + shapeToString(x) + " must end in a dim of 1 (real) or 2 (complex)");
  int64_t axis = node.hasAttr("axis") ? node.attrInt("axis", 1) : optionalScalar(node, axisT, 2, -2);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1) failNode(node, "axis " + std::to_string(axis) + " must name a signal dim");
  DftPlan p{axis, 0, 0, node.attrInt("inverse", 0) != 0, node.attrInt("onesided", 0) != 0};
  p.length = optionalScalar(node, length, 1, p.realOut() ? 2 * (x[size_t(axis)] - 1) : x[size_t(axis)]);
  if (p.length < 1) failNode(node, "dft_length " + std::to_string(p.length) + " must be positive");
  p.outLength = p.onesided && !p.inverse ? p.length / 2 + 1 : p.length;
  return p;
}

void inferDft(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Tensor* length = ctx.hasInput(1) ? &ctx.requireConstant(1, "dft_length") : nullptr;
  const Tensor* axis = ctx.hasInput(2) ? &ctx.requireConstant(2, "axis") : nullptr;
  DftPlan p = dftPlan(ctx.node(), ctx.input(0).shape, length, axis);
  Shape out = ctx.input(0).shape;
  out[size_t(p.axis)] = p.outLength;
  out.back() = p.realOut() ? 1 : 2;
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalDft(const Node& node, const std::vector<const Tensor*>& in,
                            const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i ? in[i] : nullptr; };
  const Shape& x = in[0]->shape();
  DftPlan p = dftPlan(node, x, input(1), input(2));
  bool complexIn = x.back() == 2;
  // Lines along the axis: outer dims before it, inner dims between it and the complex dim.
  int64_t outer = numElements(Shape(x.begin(), x.begin() + p.axis));
  int64_t inner = numElements(Shape(x.begin() + p.axis + 1, x.end() - 1)), n = x[size_t(p.axis)];
  std::vector<double> v = in[0]->toDoubles(), y(size_t(numElements(types[0].shape)), 0.0);
  double sign = p.inverse ? 1.0 : -1.0, twoPi = 2 * std::numbers::pi;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t k = 0; k < p.outLength; ++k) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < p.length; ++t) {
          // Past n: zero padding, or for a half spectrum the conjugate of element length - t.
          int64_t from = t < n ? t : p.realOut() ? p.length - t : -1;
          if (from < 0 || from >= n) continue;
          size_t at = size_t(((o * n + from) * inner + i) * x.back());
          double xr = v[at], xi = complexIn ? (t < n ? v[at + 1] : -v[at + 1]) : 0.0;
          double angle = sign * twoPi * double((k * t) % p.length) / double(p.length);
          re += xr * std::cos(angle) - xi * std::sin(angle);
          im += xr * std::sin(angle) + xi * std::cos(angle);
        }
        if (p.inverse) re /= double(p.length), im /= double(p.length);
        size_t to = size_t(((o * p.outLength + k) * inner + i) * (p.realOut() ? 1 : 2));
        y[to] = re;
        if (!p.realOut()) y[to + 1] = im;
      }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

// --- STFT(signal [B, L, 1 or 2], frame_step, window? [n], frame_length?) -> [B, frames, bins, 2]: the DFT of
// each frame of n samples, frame_step apart, times the window; bins = n / 2 + 1 when onesided (default) ---

struct StftPlan {
  int64_t step, length, frames, bins;
};

StftPlan stftPlan(const Node& node, const Shape& x, const Tensor& step, const Shape* window, const Tensor* length) {
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2))
    failNode(node, "signal " + shapeToString(x) + " must be [B, L, 1 or 2]");
  StftPlan p{optionalScalar(node, &step, 1, 0), 0, 0, 0};
  p.length = length ? optionalScalar(node, length, 3, 0) : window && window->size() == 1 ? (*window)[0] : 0;
  if (p.step < 1 || p.length < 1 || p.length > x[1])
    failNode(node, "frame_step " + std::to_string(p.step) + " and frame length " + std::to_string(p.length) +
                       " must be positive, the length at most the signal's " + std::to_string(x[1]));
  if (window && *window != Shape{p.length})
    failNode(node, "window " + shapeToString(*window) + " must be [frame_length]");
  p.frames = (x[1] - p.length) / p.step + 1;
  p.bins = node.attrInt("onesided", 1) ? p.length / 2 + 1 : p.length;
  return p;
}

void inferStft(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Tensor* length = ctx.hasInput(3) ? &ctx.requireConstant(3, "frame_length") : nullptr;
  const Shape* window = ctx.hasInput(2) ? &ctx.input(2).shape : nullptr;
  const Shape& x = ctx.input(0).shape;
  StftPlan p = stftPlan(ctx.node(), x, ctx.requireConstant(1, "frame_step"), window, length);
  ctx.outputs[0] = {ctx.input(0).dtype, {x[0], p.frames, p.bins, 2}};
}

std::vector<Tensor> evalStft(const Node& node, const std::vector<const Tensor*>& in,
                             const std::vector<TensorType>& types) {
  auto input = [&](size_t i) { return in.size() > i ? in[i] : nullptr; };
  const Shape& x = in[0]->shape();
  StftPlan p = stftPlan(node, x, *in[1], input(2) ? &input(2)->shape() : nullptr, input(3));
  std::vector<double> v = in[0]->toDoubles(),
                      w = input(2) ? input(2)->toDoubles() : std::vector<double>(size_t(p.length), 1.0);
  std::vector<double> y(size_t(numElements(types[0].shape)));
  int64_t c = x[2];
  for (int64_t b = 0; b < x[0]; ++b)
    for (int64_t f = 0; f < p.frames; ++f)
      for (int64_t k = 0; k < p.bins; ++k) {
        double re = 0, im = 0;
        for (int64_t t = 0; t < p.length; ++t) {
          size_t at = size_t((b * x[1] + f * p.step + t) * c);
          double xr = v[at] * w[size_t(t)], xi = c == 2 ? v[at + 1] * w[size_t(t)] : 0.0;
          double angle = -2 * std::numbers::pi * double((k * t) % p.length) / double(p.length);
          re += xr * std::cos(angle) - xi * std::sin(angle);
          im += xr * std::sin(angle) + xi * std::cos(angle);
        }
        size_t to = size_t(((b * p.frames + f) * p.bins + k) * 2);
        y[to] = re;
        y[to + 1] = im;
      }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

// --- HannWindow, HammingWindow, BlackmanWindow(size): periodic (N = size) or symmetric (N = size - 1) ---

int64_t windowSize(const InferContext& ctx) {
  const Tensor& s = ctx.requireConstant(0, "size");
  if (!isInteger(s.dtype()) || s.numElements() != 1) ctx.error("input 0 (size) must be one integer");
  if (s.getInt(0) < 0) ctx.error("size " + std::to_string(s.getInt(0)) + " is negative");
  return s.getInt(0);
}

void inferWindow(InferContext& ctx) {
  int64_t code = ctx.node().attrInt("output_datatype", 1);
  std::optional<DType> t = dtypeFromOnnxCode(code);
  if (!t) ctx.error("output_datatype " + std::to_string(code) + " is not a dtype Tessera holds");
  ctx.outputs[0] = {*t, {windowSize(ctx)}};
}

std::vector<Tensor> evalWindow(const Node& node, const std::vector<const Tensor*>&,
                               const std::vector<TensorType>& types) {
  int64_t size = types[0].shape[0];
  double N = double(node.attrInt("periodic", 1) ? size : size - 1), w = 2 * std::numbers::pi / N;
  std::vector<double> y(static_cast<size_t>(size));
  for (int64_t k = 0; k < size; ++k) {
    double c1 = std::cos(w * double(k)), c2 = std::cos(2 * w * double(k));
    if (node.op() == "HannWindow") y[size_t(k)] = 0.5 - 0.5 * c1;
    else if (node.op() == "HammingWindow") y[size_t(k)] = 25.0 / 46 - 21.0 / 46 * c1;
    else y[size_t(k)] = 0.42 - 0.5 * c1 + 0.08 * c2;
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

// --- MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz) ->
// [dft_length / 2 + 1, num_mel_bins]: triangular filters between mel-spaced frequency bins, as ONNX's reference
// (the edge frequencies' mel values in f32, as it computes them from f32 inputs) ---

void inferMelWeights(InferContext& ctx) {
  int64_t mels = ctx.requireConstant(0, "num_mel_bins").getInt(0), dft = ctx.requireConstant(1, "dft_length").getInt(0);
  if (mels < 1 || dft < 1) ctx.error("num_mel_bins and dft_length must be positive");
  std::optional<DType> t = dtypeFromOnnxCode(ctx.node().attrInt("output_datatype", 1));
  if (!t) ctx.error("output_datatype is not a dtype Tessera holds");
  ctx.outputs[0] = {*t, {dft / 2 + 1, mels}};
}

std::vector<Tensor> evalMelWeights(const Node& node, const std::vector<const Tensor*>& in,
                                   const std::vector<TensorType>& types) {
  int64_t mels = in[0]->getInt(0), dft = in[1]->getInt(0), rate = in[2]->getInt(0);
  if (rate < 1) failNode(node, "sample_rate " + std::to_string(rate) + " must be positive");
  auto mel = [](double hz) { return double(2595.0f * std::log10(1.0f + float(hz) / 700.0f)); };
  // The step divides by the number of bins, mels + 2, as the reference does (not the mels + 1 gaps).
  double lo = mel(in[3]->getDouble(0)), hi = mel(in[4]->getDouble(0)), step = (hi - lo) / double(mels + 2);
  std::vector<int64_t> bins;
  for (int64_t i = 0; i < mels + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (double(i) * step + lo) / 2595) - 1);
    bins.push_back(int64_t(std::floor(double(dft + 1) * hz / double(rate))));
  }
  int64_t rows = dft / 2 + 1;
  std::vector<double> y(size_t(rows * mels), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j >= 0 && j < rows) y[size_t(j * mels + i)] = v;
  };
  for (int64_t i = 0; i < mels; ++i) {
    int64_t left = bins[size_t(i)], centre = bins[size_t(i + 1)], right = bins[size_t(i + 2)];
    if (centre == left) set(centre, i, 1);
    for (int64_t j = left; centre > left && j <= centre; ++j) set(j, i, double(j - left) / double(centre - left));
    for (int64_t j = centre; right > centre && j < right; ++j) set(j, i, double(right - j) / double(right - centre));
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerSignalOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template (see README)
  addOp(r, {"MelWeightMatrix", other, "triangular mel filter bank weights over DFT bins", 5, 5, 1, 1, {0, 1},
            inferMelWeights, evalMelWeights});
  addOp(r, {"DFT", other, "discrete Fourier transform along axis (inverse, onesided, dft_length)", 1, 3, 1, 1, {1, 2},
            inferDft, evalDft});
  addOp(r, {"STFT", other, "short-time Fourier transform of windowed frames (onesided)", 2, 4, 1, 1, {1, 3}, inferStft,
            evalStft});
  for (const char* name : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    addOp(r, {name, other, "window function of length size (periodic or symmetric)", 1, 1, 1, 1, {0}, inferWindow,
              evalWindow});
}

}  // namespace tessera
