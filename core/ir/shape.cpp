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

std::string TensorType::toString() const {
  std::string element(dtypeName(dtype));
  switch (kind) {
    case ValueKind::Tensor: return element + shapeToString(shape);
    case ValueKind::Sequence: return "seq<" + element + ">";
    case ValueKind::Optional: return "opt<" + element + ">";
    case ValueKind::OptionalSequence: return "opt<seq<" + element + ">>";
  }
  return element;
}

namespace {
// "seq<f32>", "opt<f32>", "opt<seq<f32>>": a container's kind and element dtype.
std::optional<TensorType> containerFromString(std::string_view text) {
  ValueKind kind;
  std::string_view inner;
  auto wrapped = [&](std::string_view prefix) {
    if (!text.starts_with(prefix) || !text.ends_with(">")) return false;
    inner = text.substr(prefix.size(), text.size() - prefix.size() - 1);
    return true;
  };
  if (wrapped("opt<seq<") && inner.ends_with(">")) kind = ValueKind::OptionalSequence, inner.remove_suffix(1);
  else if (wrapped("seq<")) kind = ValueKind::Sequence;
  else if (wrapped("opt<")) kind = ValueKind::Optional;
  else return std::nullopt;
  std::optional<DType> dtype = parseDType(inner);
  if (!dtype) return std::nullopt;
  return TensorType::container(kind, *dtype);
}
}  // namespace

std::optional<TensorType> TensorType::fromString(std::string_view text) {
  if (text.ends_with(">")) return containerFromString(text);
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
