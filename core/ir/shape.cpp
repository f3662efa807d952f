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

std::optional<TensorType> TensorType::fromString(std::string_view text) {
  size_t open = text.find('[');
  if (open == std::string_view::npos || text.back() != ']') return std::nullopt;
  std::optional<DType> dtype = parseDType(text.substr(0, open));
  if (!dtype) return std::nullopt;
  TensorType t{*dtype, {}};
  std::string_view dims = text.substr(open + 1, text.size() - open - 2);
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string_view d = dims.substr(0, comma);
    if (d.empty() || d.size() > 18 || d.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    t.shape.push_back(std::stoll(std::string(d)));
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
    if (dims.empty()) return std::nullopt;  // a trailing comma
  }
  return t;
}

}  // namespace tessera
