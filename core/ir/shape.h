#pragma once
// Static shapes: a list of non-negative extents. Rank 0 is a scalar; a zero extent is an empty tensor.
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tessera {

using Shape = std::vector<int64_t>;

// Number of elements; throws Error when the product would overflow int64.
int64_t numElements(const Shape& shape);
std::string shapeToString(const Shape& shape);  // "[2,3]"; "[]" for a scalar
// Row-major strides in elements.
std::vector<int64_t> stridesOf(const Shape& shape);

// The type carried by every value edge.
struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  friend bool operator==(const TensorType&, const TensorType&) = default;
  int64_t numElements() const { return tessera::numElements(shape); }
  int64_t bytes() const { return numElements() * int64_t(dtypeSize(dtype)); }
  std::string toString() const;  // "f32[2,3]"
  // The inverse of toString ("i64[2,37]"); nullopt for anything else (no spaces, no negative extents).
  static std::optional<TensorType> fromString(std::string_view text);
};

}  // namespace tessera
