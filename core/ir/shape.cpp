#include "ir/shape.h"

#include "ir/error.h"

namespace tessera {

int64_t numElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) fail("negative dimension " + std::to_string(d) + " in shape " + shapeToString(shape));
    if (d != 0 && n > INT64_MAX / d) fail("shape " + shapeToString(shape) + " has too many elements");
    n *= d;
  }
  return n;
}

std::string shapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<int64_t> stridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::string TensorType::toString() const { return std::string(dtypeName(dtype)) + shapeToString(shape); }

}  // namespace tessera
