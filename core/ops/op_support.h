#pragma once
// Internal helpers shared by every op family: dtype, rank, axis and broadcast checks for inference (errors name
// the node through InferContext), node-named errors at evaluation time, integer operands of shape inputs,
// rounding of double results to an output dtype, a two-thread parallel loop, dtype-agnostic element copies,
// and addOp, through which every family registers its schemas.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ops/registry.h"

namespace tessera::ops {

// --- inference checks ---

// Classes of dtypes an op input may accept.
enum class DTypeClass {
  Float,          // f32 f16 bf16 f64
  SignedNumeric,  // floats and i64 i32 i16 i8
  Numeric,        // every dtype but bool
  Integer,        // i64 i32 i16 i8 u8 u16 u32 u64
  Bool,           // bool only
  Any,            // every dtype
};
bool inDTypeClass(DType t, DTypeClass c);
std::string_view dtypeClassName(DTypeClass c);  // "float types (f32 f16 bf16 f64)", ...

// Throws "node 'id' (Op): input i is <dtype>; Op accepts <class>" unless input i's dtype is in `c`.
void requireDType(const InferContext& ctx, size_t input, DTypeClass c);
// The same for an explicit list: "input i is <dtype>; Op accepts one of: <list>".
void requireDType(const InferContext& ctx, size_t input, std::initializer_list<DType> allowed);
// Throws unless inputs a and b have the same dtype.
void requireSameDType(const InferContext& ctx, size_t a, size_t b);
// The operands of a weighted op (Gemm, Conv, ConvTranspose): input 0 of class `c`, the weight (input 1) and the
// optional bias (input 2) of input 0's dtype. Returns the bias's shape, or nullptr when there is none.
const Shape* requireWeightOperands(const InferContext& ctx, DTypeClass c);
// Throws unless input i has the given rank.
void requireRank(const InferContext& ctx, size_t input, size_t rank);
// Broadcast shape of the given present inputs; throws naming both shapes when they do not broadcast.
Shape broadcastInputs(const InferContext& ctx, const std::vector<size_t>& inputs);
// `axis` normalized into [0, rank); throws "attribute 'name' = a is out of range for rank r" otherwise.
int64_t normalizedAxis(const InferContext& ctx, int64_t axis, int64_t rank, const std::string& name = "axis");

// The values of constant input i as int64, rejecting non-integer dtypes and ranks above 1.
std::vector<int64_t> constantInts(const InferContext& ctx, size_t i, const std::string& what);

// ONNX TensorProto element type code (1 float, 10 float16, 16 bfloat16, 11 double, 7 int64, 6 int32, 5 int16,
// 3 int8, 2 uint8, 4 uint16, 12 uint32, 13 uint64, 9 bool) to our dtype; nullopt for codes we do not support.
std::optional<DType> dtypeFromOnnxCode(int64_t code);

// --- evaluation ---

// "node 'id' (Op): message" as an Error, the same form InferContext::error produces.
[[noreturn]] void failNode(const Node& node, const std::string& message);
// That text without the throw, for code that knows a node by its id and op (a kernel's index checks).
std::string nodeMessage(const std::string& id, const std::string& op, const std::string& message);
// An index read from a tensor outside ONNX's range -extent..extent-1: "input 1 ('idx') holds 5 at [0, 2], out of
// range for axis 0 of extent 4 (-4..3 are valid)"; `position` is the element's flat offset in the index tensor.
// The reference, the kernel interpreter and a generated kernel's error record all say it through this function.
std::string indexOutOfRange(size_t input, const std::string& value, const Shape& indexShape, int64_t position,
                            int64_t index, int64_t axis, int64_t extent);
// As normalizedAxis, for the reference semantics (inference has checked it; this guards against edited graphs).
int64_t evalAxis(const Node& node, int64_t axis, int64_t rank);
// Throws naming the node unless `t` has type `want` (eval results must match the inferred types).
void requireType(const Node& node, const Tensor& t, const TensorType& want, size_t output = 0);
// constantInts' check at evaluation time on a runtime tensor.
std::vector<int64_t> tensorInts(const Node& node, const Tensor& t, size_t i, const std::string& what);
// Rejects a double work buffer of `elements` above Tensor's size limit, naming the node.
void requireWorkBuffer(const Node& node, int64_t elements);

// Stores v into element i rounding once: f16 and bf16 go through a round-to-odd float so that the result is
// the correctly rounded double (no double rounding); integers truncate toward zero; bool is v != 0.
void setRounded(Tensor& t, int64_t i, double v);
// A tensor of `dtype` from doubles, each rounded once with setRounded.
Tensor fromDoublesRounded(DType dtype, Shape shape, std::span<const double> values);

// Row-major iteration helpers: the shape split around `axis` into outer * axis * inner elements.
struct AxisSplit {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisSplit splitAtAxis(const Shape& shape, int64_t axis);

// Runs body(begin, end) over [0, n), split into equal ranges on up to one thread per hardware thread, as many
// as n * costPerItem pays for (about a million multiply-adds each). The body must not throw.
void parallelFor(int64_t n, int64_t costPerItem, const std::function<void(int64_t, int64_t)>& body);
// parallelFor's cost of one element of an elementwise op (an indirect call, a conversion or a transcendental):
// a tensor splits over the cores from about 64 K elements a thread.
inline constexpr int64_t kElementCost = 16;

// Copies elements into a new tensor of `outType`: output element at coordinates o comes from
// src element srcOffset + sum(o[d] * srcStrides[d]) (strides in elements; 0 broadcasts, negative walks back).
Tensor stridedCopy(const Tensor& src, const TensorType& outType, const std::vector<int64_t>& srcStrides,
                   int64_t srcOffset);

// --- registration and messages ---
// The arity bound of a variadic op (Concat's inputs, Split's outputs, SequenceConstruct's inputs, and a node with
// subgraphs, whose captures follow its formal inputs).
inline constexpr int kMaxVariadic = 1 << 20;

// Registers `schema` with its inference and evaluation wrapped so that an Error they raise without naming the
// node (an element-count overflow, a tensor over the size limit) is re-raised as "node 'id' (Op): ...".
void addOp(OpRegistry& r, OpSchema schema);
// As addOp, with the op's traits (OpSchema's last member, awkward to give in an aggregate).
void addOp(OpRegistry& r, OpSchema schema, const OpTraits& traits);

// "[1,2,3]" for messages.
std::string intsToString(const std::vector<int64_t>& v);

}  // namespace tessera::ops
