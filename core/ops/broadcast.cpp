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
  std::vector<int64_t> map(size_t(numElements(out)), 0);
  forEachBroadcast(in, in, out, 0, int64_t(map.size()), [&](int64_t k, int64_t at, int64_t) { map[size_t(k)] = at; });
  return map;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace tessera
