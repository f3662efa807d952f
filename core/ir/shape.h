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

// What a value holds: a tensor, or one of ONNX's containers of tensors. A sequence holds any number of tensors
// of one dtype whose shapes may differ; an optional holds one tensor or sequence, or nothing. How many elements a
// container holds, and their shapes, are data known when it runs, not part of its static type (a Loop may grow a
// sequence by a tensor a step), so a container's type is its kind and element dtype only, its shape always [].
// Containers live on the host: only the reference semantics (host groups) read or make them.
enum class ValueKind : uint8_t { Tensor, Sequence, Optional, OptionalSequence };

// The type carried by every value edge.
struct TensorType {
  DType dtype = DType::F32;
  Shape shape;
  ValueKind kind = ValueKind::Tensor;
  friend bool operator==(const TensorType&, const TensorType&) = default;
  bool isTensor() const { return kind == ValueKind::Tensor; }
  bool isSequence() const { return kind == ValueKind::Sequence || kind == ValueKind::OptionalSequence; }
  bool isOptional() const { return kind == ValueKind::Optional || kind == ValueKind::OptionalSequence; }
  // A container's bytes are not counted here (they are not in a buffer): 0.
  int64_t numElements() const { return isTensor() ? tessera::numElements(shape) : 0; }
  int64_t bytes() const { return numElements() * int64_t(dtypeSize(dtype)); }
  std::string toString() const;  // "f32[2,3]"; containers "seq<f32>", "opt<f32>", "opt<seq<f32>>"
  // The inverse of toString ("i64[2,37]"); nullopt for anything else (no spaces, no negative extents).
  static std::optional<TensorType> fromString(std::string_view text);
  static TensorType container(ValueKind kind, DType element) { return {element, {}, kind}; }
};

}  // namespace tessera
