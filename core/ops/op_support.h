#pragma once
// Internal helpers shared by the linalg and data-movement op families: node-named errors at evaluation
// time, integer operands of shape inputs, a two-thread parallel loop, and dtype-agnostic element copies.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/registry.h"

namespace tessera::ops {

// "node 'id' (Op): message" as an Error, the same form InferContext::error produces.
[[noreturn]] void nodeFail(const Node& node, const std::string& message);

// The values of constant input i as int64, rejecting non-integer dtypes and ranks above 1.
std::vector<int64_t> constantInts(const InferContext& ctx, size_t i, const std::string& what);
// The same check at evaluation time on a runtime tensor.
std::vector<int64_t> tensorInts(const Node& node, const Tensor& t, size_t i, const std::string& what);

// Rejects dtypes outside `allowed` for input i with a message naming the node, input and dtype.
void requireDType(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed);
// Every dtype but bool / the float dtypes.
inline constexpr std::initializer_list<DType> kNumericDTypes = {DType::F32, DType::F16, DType::BF16, DType::F64,
                                                                  DType::I64, DType::I32, DType::I16, DType::I8,
                                                                  DType::U8,  DType::U16, DType::U32, DType::U64};
inline constexpr std::initializer_list<DType> kFloatDTypes = {DType::F32, DType::F16, DType::BF16, DType::F64};
// Input i must have the same dtype as input 0.
void requireSameDType(const InferContext& ctx, size_t i);

// Rejects a double work buffer of `elements` above Tensor's size limit, naming the node.
void requireWorkBuffer(const Node& node, int64_t elements);

// Runs body(begin, end) over [0, n), split in two halves on two threads when n * costPerItem is large
// enough to pay for a thread. The body must not throw.
void parallelFor(int64_t n, int64_t costPerItem, const std::function<void(int64_t, int64_t)>& body);

// Copies elements into a new tensor of `outType`: output element at coordinates o comes from
// src element srcOffset + sum(o[d] * srcStrides[d]) (strides in elements; 0 broadcasts, negative walks back).
Tensor stridedCopy(const Tensor& src, const TensorType& outType, const std::vector<int64_t>& srcStrides,
                   int64_t srcOffset);

// Registers `schema` with its inference and evaluation wrapped so that an Error they raise without naming the
// node (an element-count overflow, a tensor over the size limit) is re-raised as "node 'id' (Op): ...".
void addOp(OpRegistry& r, OpSchema schema);

// "[1,2,3]" for messages.
std::string intsToString(const std::vector<int64_t>& v);

}  // namespace tessera::ops
