#include "ops/window.h"

#include <algorithm>

#include "ops/op_support.h"

namespace tessera::ops {

namespace {
// Bound on kernel sizes, strides, dilations and pads: far above any real model, small enough that
// the window arithmetic below cannot overflow int64.
constexpr int64_t kMaxWindowValue = int64_t(1) << 30;

std::vector<int64_t> readPerAxis(const Node& node, const std::string& name, size_t count, int64_t fallback,
                                 int64_t minValue) {
  std::vector<int64_t> v = node.attrInts(name);
  if (v.empty()) v.assign(count, fallback);  // absent, or written as an empty list by some exporters
  if (v.size() != count)
    failNode(node, "attribute " + name + " " + intsToString(v) + " must have " + std::to_string(count) + " values");
  for (int64_t x : v)
    if (x < minValue || x > kMaxWindowValue)
      failNode(node, "attribute " + name + " " + intsToString(v) + " has a value outside [" +
                         std::to_string(minValue) + ", 2^30]");
  return v;
}

int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
}  // namespace

WindowGeometry windowGeometry(const Node& node, const Shape& inputSpatial, const Shape& kernel, bool ceilMode) {
  size_t r = inputSpatial.size();
  WindowGeometry g;
  g.input = inputSpatial;
  g.kernel = kernel;
  for (int64_t k : kernel)
    if (k < 1 || k > kMaxWindowValue) failNode(node, "kernel shape " + intsToString(kernel) + " must be positive");
  g.strides = readPerAxis(node, "strides", r, 1, 1);
  g.dilations = readPerAxis(node, "dilations", r, 1, 1);
  std::vector<int64_t> pads = readPerAxis(node, "pads", 2 * r, 0, 0);
  std::string autoPad = node.attrString("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    failNode(node, "attribute auto_pad '" + autoPad + "' must be NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  g.padsBegin.assign(pads.begin(), pads.begin() + int64_t(r));
  g.padsEnd.assign(pads.begin() + int64_t(r), pads.end());
  g.output.resize(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t span = g.dilations[i] * (kernel[i] - 1) + 1, s = g.strides[i], d = inputSpatial[i];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      g.output[i] = ceilDiv(d, s);
      int64_t total = std::max<int64_t>(0, (g.output[i] - 1) * s + span - d);
      int64_t small = total / 2, large = total - small;
      g.padsBegin[i] = autoPad == "SAME_UPPER" ? small : large;
      g.padsEnd[i] = total - g.padsBegin[i];
      continue;
    }
    if (autoPad == "VALID") g.padsBegin[i] = g.padsEnd[i] = 0;
    int64_t room = d + g.padsBegin[i] + g.padsEnd[i] - span;
    if (room < 0)
      failNode(node, "window of extent " + std::to_string(span) + " on spatial axis " + std::to_string(i) +
                         " is larger than the padded input (" + std::to_string(room + span) + ")");
    g.output[i] = (ceilMode ? ceilDiv(room, s) : floorDiv(room, s)) + 1;
    // A window that would start inside the end padding is dropped (ONNX and PyTorch agree).
    if (ceilMode && (g.output[i] - 1) * s >= d + g.padsBegin[i]) --g.output[i];
  }
  return g;
}

std::vector<AxisTaps> windowTaps(const WindowGeometry& g) {
  std::vector<AxisTaps> taps(g.rank());
  for (size_t i = 0; i < g.rank(); ++i) {
    AxisTaps& t = taps[i];
    t.inside.resize(size_t(g.output[i]));
    t.paddedCount.resize(size_t(g.output[i]));
    int64_t paddedEnd = g.input[i] + g.padsEnd[i];
    int64_t dil = g.dilations[i];
    for (int64_t o = 0; o < g.output[i]; ++o) {
      // Taps k sit at x0 + k * dil; count them arithmetically so a huge kernel costs nothing extra.
      int64_t x0 = o * g.strides[i] - g.padsBegin[i];
      t.paddedCount[size_t(o)] = x0 >= paddedEnd ? 0 : std::min(g.kernel[i], (paddedEnd - x0 + dil - 1) / dil);
      int64_t first = x0 >= 0 ? 0 : (-x0 + dil - 1) / dil;
      int64_t end = x0 >= g.input[i] ? 0 : std::min(g.kernel[i], (g.input[i] - x0 + dil - 1) / dil);
      for (int64_t k = first; k < end; ++k) t.inside[size_t(o)].push_back(x0 + k * dil);
    }
  }
  return taps;
}

}  // namespace tessera::ops
