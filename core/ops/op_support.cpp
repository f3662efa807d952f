#include "ops/op_support.h"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <thread>

#include "ir/error.h"

namespace tessera::ops {

void failNode(const Node& node, const std::string& message) { fail(nodeMessage(node.id(), node.op(), message)); }

std::string nodeMessage(const std::string& id, const std::string& op, const std::string& message) {
  return "node '" + id + "' (" + op + "): " + message;
}

std::string indexOutOfRange(size_t input, const std::string& value, const Shape& indexShape, int64_t position,
                            int64_t index, int64_t axis, int64_t extent) {
  std::string at;
  for (size_t d = indexShape.size(); d-- > 0;) {  // the flat position as one index per dimension
    int64_t n = std::max<int64_t>(indexShape[d], 1);
    at = std::to_string(position % n) + (at.empty() ? "" : ", ") + at;
    position /= n;
  }
  std::string where = indexShape.empty() ? "" : " at [" + at + "]";
  return "input " + std::to_string(input) + " ('" + value + "') holds " + std::to_string(index) + where +
         ", out of range for axis " + std::to_string(axis) + " of extent " + std::to_string(extent) + " (" +
         std::to_string(-extent) + ".." + std::to_string(extent - 1) + " are valid)";
}

std::string intsToString(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  s += ']';
  return s;
}

std::vector<int64_t> tensorInts(const Node& node, const Tensor& t, size_t i, const std::string& what) {
  if (!isInteger(t.dtype()))
    failNode(node, "input " + std::to_string(i) + " (" + what + ") must be an integer tensor, not " +
                       t.type().toString());
  if (t.shape().size() > 1)
    failNode(node, "input " + std::to_string(i) + " (" + what + ") must be 1-D, not " + t.type().toString());
  return t.toInts();
}

std::vector<int64_t> constantInts(const InferContext& ctx, size_t i, const std::string& what) {
  return tensorInts(ctx.node(), ctx.requireConstant(i, what), i, what);
}

void requireDType(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed) {
  DType t = ctx.input(i).dtype;
  for (DType a : allowed)
    if (a == t) return;
  std::string names;
  for (DType a : allowed) {
    if (!names.empty()) names += ' ';
    names += dtypeName(a);
  }
  ctx.error("input " + std::to_string(i) + " is " + std::string(dtypeName(t)) + "; " + ctx.node().op() +
            " accepts one of: " + names);
}

void requireWorkBuffer(const Node& node, int64_t elements) {
  if (elements > Tensor::kMaxTensorBytes / int64_t(sizeof(double)))
    failNode(node, "needs a work buffer of " + std::to_string(elements) + " doubles, over the 16 GiB limit");
}

void parallelFor(int64_t n, int64_t costPerItem, const std::function<void(int64_t, int64_t)>& body) {
  // Below about a million multiply-adds per thread a thread costs more than it saves.
  constexpr double kMinWorkPerThread = double(int64_t(1) << 20);
  double work = double(n) * double(std::max<int64_t>(costPerItem, 1));
  int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  int64_t parts = std::min({n, cores, int64_t(std::min(work / kMinWorkPerThread, double(cores)))});
  if (parts < 2) {
    body(0, n);
    return;
  }
  std::vector<std::thread> others;
  for (int64_t t = 1; t < parts; ++t) others.emplace_back([&body, n, parts, t] { body(n * t / parts, n * (t + 1) / parts); });
  body(0, n / parts);
  for (std::thread& t : others) t.join();
}

namespace {
bool namesNode(const Error& e) { return std::string_view(e.what()).starts_with("node '"); }
}  // namespace

void addOp(OpRegistry& r, OpSchema schema, const OpTraits& traits) {
  schema.traits = traits;
  addOp(r, std::move(schema));
}

namespace {
void requireTensorInputs(const InferContext& ctx) {
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i) && !ctx.input(i).isTensor())
      ctx.error("input " + std::to_string(i) + " is a " + ctx.input(i).toString() + "; " + ctx.node().op() +
                " takes tensors, not sequences or optionals");
}
void requireNoStrings(const InferContext& ctx) {
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (ctx.hasInput(i) && ctx.input(i).dtype == DType::String)
      ctx.error("input " + std::to_string(i) + " is a " + ctx.input(i).toString() + "; " + ctx.node().op() +
                " takes numbers, not strings");
}
}  // namespace

void addOp(OpRegistry& r, OpSchema schema) {
  InferFn infer = std::move(schema.infer);
  schema.infer = [infer, containers = schema.traits.containers, strings = schema.traits.strings](InferContext& ctx) {
    try {
      if (!containers) requireTensorInputs(ctx);
      if (!strings) requireNoStrings(ctx);
      infer(ctx);
      for (const TensorType& t : ctx.outputs) numElements(t.shape);
    } catch (const Error& e) {
      if (namesNode(e)) throw;
      ctx.error(e.what());
    }
  };
  EvalFn eval = std::move(schema.eval);
  schema.eval = [eval](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    try {
      return eval(node, in, types);
    } catch (const Error& e) {
      if (namesNode(e)) throw;
      failNode(node, e.what());
    }
  };
  r.add(std::move(schema));
}

namespace {
// The copy loop for one element size; the innermost output dimension is a strided run.
template <size_t E>
void copyRuns(const std::byte* src, std::byte* dst, const Shape& shape, const std::vector<int64_t>& strides,
              int64_t offset) {
  size_t rank = shape.size();
  int64_t inner = rank ? shape[rank - 1] : 1, innerStride = rank ? strides[rank - 1] : 0;
  int64_t rows = inner ? numElements(shape) / inner : 0;
  std::vector<int64_t> idx(rank ? rank - 1 : 0, 0);
  int64_t pos = offset;
  for (int64_t r = 0; r < rows; ++r) {
    const std::byte* s = src + pos * int64_t(E);
    for (int64_t k = 0; k < inner; ++k, dst += E, s += innerStride * int64_t(E)) std::memcpy(dst, s, E);
    for (size_t d = idx.size(); d-- > 0;) {  // odometer over the outer dimensions
      pos += strides[d];
      if (++idx[d] < shape[d]) break;
      pos -= strides[d] * idx[d];
      idx[d] = 0;
    }
  }
}
}  // namespace

namespace {
// Strings move element by element: the output's coordinates walked like an odometer.
Tensor stridedStrings(const Tensor& src, const TensorType& outType, const std::vector<int64_t>& srcStrides,
                      int64_t srcOffset) {
  const Shape& shape = outType.shape;
  std::vector<std::string> out(size_t(numElements(shape)));
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t from = srcOffset;
  for (std::string& e : out) {
    e = src.strings()[size_t(from)];
    for (size_t d = shape.size(); d-- > 0;) {
      from += srcStrides[d];
      if (++idx[d] < shape[d]) break;
      from -= srcStrides[d] * shape[d];
      idx[d] = 0;
    }
  }
  return Tensor::strings(shape, std::move(out));
}
}  // namespace

Tensor stridedCopy(const Tensor& src, const TensorType& outType, const std::vector<int64_t>& srcStrides,
                   int64_t srcOffset) {
  if (src.holdsStrings()) return stridedStrings(src, outType, srcStrides, srcOffset);
  Tensor out(outType.dtype, outType.shape);
  if (out.numElements() == 0) return out;
  const std::byte* s = src.bytes().data();
  std::byte* d = out.mutableBytes().data();
  switch (dtypeSize(outType.dtype)) {
    case 1: copyRuns<1>(s, d, outType.shape, srcStrides, srcOffset); break;
    case 2: copyRuns<2>(s, d, outType.shape, srcStrides, srcOffset); break;
    case 4: copyRuns<4>(s, d, outType.shape, srcStrides, srcOffset); break;
    default: copyRuns<8>(s, d, outType.shape, srcStrides, srcOffset); break;
  }
  return out;
}

}  // namespace tessera::ops
