#include "ops/broadcast.h"

namespace tessera {

std::optional<Shape> broadcastShapes(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[offset + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      return std::nullopt;
    }
  }
  return out;
}

std::vector<int64_t> broadcastStrides(const Shape& in, const Shape& out) {
  const size_t rank = out.size(), offset = rank - in.size();
  std::vector<int64_t> strides(rank, 0);
  std::vector<int64_t> s = stridesOf(in);
  for (size_t i = 0; i < in.size(); ++i) strides[offset + i] = in[i] == 1 ? 0 : s[i];
  return strides;
}

std::vector<int64_t> broadcastIndexMap(const Shape& in, const Shape& out) {
  int64_t n = numElements(out);
  std::vector<int64_t> map(size_t(n), 0);
  if (n == 0) return map;
  size_t rank = out.size();
  std::vector<int64_t> inStride = broadcastStrides(in, out);
  std::vector<int64_t> idx(rank, 0);
  int64_t pos = 0;
  for (int64_t k = 0; k < n; ++k) {
    map[size_t(k)] = pos;
    for (size_t d = rank; d-- > 0;) {  // odometer increment
      idx[d]++;
      pos += inStride[d];
      if (idx[d] < out[d]) break;
      pos -= inStride[d] * idx[d];
      idx[d] = 0;
    }
  }
  return map;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace tessera
