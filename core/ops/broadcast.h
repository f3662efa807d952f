#pragma once
// Numpy-style (multidirectional) broadcasting, shared by every op family.
#include <algorithm>
#include <optional>
#include <vector>

#include "ir/shape.h"

namespace tessera {

// The broadcast of several shapes, or nullopt if they are incompatible.
std::optional<Shape> broadcastShapes(const std::vector<Shape>& shapes);

// For each flat index of `out`, the flat index into an input of shape `in` broadcast to `out`.
// Precomputed once; cheap enough for the reference interpreter.
std::vector<int64_t> broadcastIndexMap(const Shape& in, const Shape& out);

// The stride of each of `out`'s axes in an input of shape `in` broadcast to it: 0 where `in` has 1 or no axis.
std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out);

// Calls f(k, ia, ib) for the flat indices k in [begin, end) of `out`, in order, with ia and ib the flat indices
// of the elements of inputs shaped `a` and `b` that broadcast to k: what two broadcastIndexMaps give, walked a
// row at a time instead of stored (the maps, 16 bytes an element zeroed and then written, were a sixth of a
// densenet121 run's check against the reference).
template <class F>
void forEachBroadcast(const Shape& a, const Shape& b, const Shape& out, int64_t begin, int64_t end, const F& f) {
  if (begin >= end) return;
  if (out.empty()) return f(begin, int64_t(0), int64_t(0));  // a scalar: its one element
  const std::vector<int64_t> sa = broadcastStrides(a, out), sb = broadcastStrides(b, out);
  const size_t last = out.size() - 1;
  std::vector<int64_t> idx(out.size(), 0);
  int64_t ia = 0, ib = 0;
  for (size_t d = out.size(), rest = size_t(begin); d-- > 0; rest /= size_t(out[d])) {
    idx[d] = int64_t(rest % size_t(out[d]));
    ia += idx[d] * sa[d];
    ib += idx[d] * sb[d];
  }
  for (int64_t k = begin; k < end;) {
    const int64_t run = std::min(out[last] - idx[last], end - k);  // the rest of this row
    for (int64_t j = 0; j < run; ++j) f(k + j, ia + j * sa[last], ib + j * sb[last]);
    k += run;
    idx[last] += run;
    ia += run * sa[last];
    ib += run * sb[last];
    for (size_t d = last; d > 0 && idx[d] == out[d]; --d) {  // carry into the axes before
      ia += sa[d - 1] - sa[d] * out[d];
      ib += sb[d - 1] - sb[d] * out[d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

// Normalizes an axis in [-rank, rank) to [0, rank); nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank);

}  // namespace tessera
