#pragma once
// Internal: the sliding-window geometry shared by Conv and the pools (ONNX kernel_shape, strides, pads,
// dilations, auto_pad, ceil_mode), computed once by inference and again by evaluation.
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tessera::ops {

// All vectors have one entry per spatial axis.
struct WindowGeometry {
  Shape input, kernel, output;
  std::vector<int64_t> strides, dilations, padsBegin, padsEnd;
  size_t rank() const { return input.size(); }
};

// Reads the attributes of `node` for a window of `kernel` over `inputSpatial`. Throws an Error naming the node
// on bad attributes or a window larger than the padded input. `ceilMode` applies the pools' rounding up (a
// window that would start in the end padding is dropped).
WindowGeometry windowGeometry(const Node& node, const Shape& inputSpatial, const Shape& kernel, bool ceilMode);

// A ConvTranspose's geometry, X [N, C, spatial...] and W [C, M / group, kernel...]: input, kernel, output,
// strides, dilations and padsBegin resolved (output_shape, auto_pad, output_padding) as the reference resolves
// them; output element o on an axis gathers input i and tap k where i·stride + k·dilation − padBegin = o.
// padsEnd is left empty. Throws an Error naming the node on bad attributes.
WindowGeometry convTransposeGeometry(const Node& node, const Shape& x, const Shape& w);

// For pools: per spatial axis and output position, the input positions the window covers inside the input,
// and how many window taps lie inside the explicitly padded input (the count_include_pad divisor).
struct AxisTaps {
  std::vector<std::vector<int64_t>> inside;  // [output position] -> input positions
  std::vector<int64_t> paddedCount;          // [output position]
};
std::vector<AxisTaps> windowTaps(const WindowGeometry& g);

}  // namespace tessera::ops
