#pragma once
// Resize (and Upsample) as the kernel lowering generates it. Per axis, the input coordinate of output coordinate
// x is ((x + shift) * stretch / divisor + offset) + last: the reference's own arithmetic in double, operation for
// operation, so that a generated kernel picks the same taps as the reference (resize.cpp evaluates the same
// map). The taps are nearest (one) or linear (two, weighted by the distance), their indices clamped into the
// axis (the edge repeats).
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tessera::ops {

struct ResizeCoordinate {
  double shift = 0, stretch = 1, divisor = 1, offset = 0, last = 0;
  double at(double x) const { return ((x + shift) * stretch / divisor + offset) + last; }
};

struct ResizeAxis {
  int64_t inLen = 0, outLen = 0;
  bool identity = true;  // output coordinate x reads input coordinate x: the axis is not resampled
  ResizeCoordinate map;
};

enum class ResizeTaps { Nearest, Linear };

struct ResizeForm {
  ResizeTaps taps = ResizeTaps::Nearest;
  std::string nearestMode;       // round_prefer_floor, round_prefer_ceil, floor or ceil (taps Nearest)
  std::vector<ResizeAxis> axes;  // one per dimension of the input
  std::string unsupported;       // why the node has no generated form (empty when it has one)
};

// The form of a Resize or Upsample node whose scales or sizes are constants (inference requires them). Cubic
// filters, antialiasing a downscale, exclude_outside and tf_crop_and_resize have none: `unsupported` says which,
// and the node runs on the host.
ResizeForm resizeForm(const Node& node);

}  // namespace tessera::ops
