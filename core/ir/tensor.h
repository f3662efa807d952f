#pragma once
// A dense row-major tensor with shared, immutable-by-convention storage. Copies share the bytes, so a
// graph snapshot or a folded constant does not duplicate weights; call mutableBytes() only on a tensor
// you just created.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace tessera {

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor. Throws Error if the size exceeds kMaxTensorBytes.
  Tensor(DType dtype, Shape shape);
  // The same, its elements left unwritten (not zeroed): for code that writes every one next, so that a large
  // result is not written twice (the reference interpreter's outputs). Not for strings.
  static Tensor uninitialized(DType dtype, Shape shape);

  static constexpr int64_t kMaxTensorBytes = int64_t(16) << 30;  // 16 GiB: bound on any allocation

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int64_t numElements() const { return type_.numElements(); }
  size_t byteSize() const { return size_; }
  bool empty() const { return !owner_; }
  // Bytes that live in a read-only file mapping kept alive by `owner` (large external weights, mapped instead of
  // read; frontend/onnx/external_data.cpp). The mapping is private: mutableBytes() writes copy the pages touched.
  static Tensor fromMapping(TensorType type, std::span<std::byte> bytes, std::shared_ptr<void> owner);
  bool mapped() const { return mapped_; }

  std::span<const std::byte> bytes() const;
  std::span<std::byte> mutableBytes();
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes().data()); }
  template <class T> T* mutableData() { return reinterpret_cast<T*>(mutableBytes().data()); }

  // Element i (flat, row-major) converted to/from double or int64, whatever the dtype.
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);

  // All elements as doubles / int64 (conversion of the whole tensor).
  std::vector<double> toDoubles() const;
  std::vector<int64_t> toInts() const;
  static Tensor fromDoubles(DType dtype, Shape shape, std::span<const double> values);
  static Tensor fromInts(DType dtype, Shape shape, std::span<const int64_t> values);
  static Tensor scalar(DType dtype, double v);

  // Containers (shape.h, ValueKind): a sequence of tensors of `element` dtype (any shapes), and an optional
  // holding a tensor or a sequence (its type says which) or nothing. They have no bytes of their own.
  static Tensor sequence(DType element, std::vector<Tensor> elements);
  static Tensor optional(TensorType type, std::optional<Tensor> element);
  bool isContainer() const { return !type_.isTensor(); }
  // A sequence's tensors; an optional's one element, or none. Empty for a tensor.
  const std::vector<Tensor>& elements() const;

  // A tensor of strings (DType::String): its elements are std::strings, not bytes (bytes() is empty, and the
  // numeric accessors above throw).
  static Tensor strings(Shape shape, std::vector<std::string> values);
  bool holdsStrings() const { return type_.isTensor() && type_.dtype == DType::String; }
  const std::vector<std::string>& strings() const;  // empty unless holdsStrings()
  // Values with no bytes of their own, which only the host holds: containers and string tensors.
  bool holdsObjects() const { return isContainer() || holdsStrings(); }

  // Same bytes with another shape of equal element count.
  Tensor reshaped(Shape shape) const;
  // Byte-wise equality of type and contents.
  bool identical(const Tensor& other) const;
  // FNV-1a over type and bytes, for fingerprints and content hashes.
  uint64_t hash() const;

 private:
  TensorType type_;
  std::shared_ptr<void> owner_;  // keeps the bytes alive: a vector of them, or a file mapping
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  void allocate(bool zeroed);
  std::shared_ptr<const std::vector<Tensor>> elements_;  // a container's
  std::shared_ptr<const std::vector<std::string>> strings_;  // a string tensor's
};

}  // namespace tessera
