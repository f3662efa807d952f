#pragma once
// Internal to the decompose pass (decompose.cpp, decompose_einsum.cpp): the one way its rewrites add nodes.
#include <optional>
#include <string>
#include <vector>

#include "passes/rewrite.h"

namespace tessera::decompose {

// Only the first output may be used (LayerNormalization's Mean/InvStdDev, BatchNormalization's running stats,
// Attention's present key and value): the decompositions compute that one.
inline bool onlyFirstOutputUsed(const Node& n) {
  for (size_t i = 1; i < n.numOutputs(); ++i)
    if (n.output(i) && (!n.output(i)->uses().empty() || n.output(i)->isGraphOutput())) return false;
  return true;
}

// Adds the primitive nodes of one decomposition; ids and names extend the original node's id ("sm.max").
class Emitter {
 public:
  Emitter(Graph& graph, const Node& node) : g_(graph), base_(node.id()), dtype_(node.output(0)->dtype()) {}
  Value* op(const std::string& suffix, const std::string& op, const std::vector<Value*>& inputs,
            Attributes attrs = {}) {
    return addInferredNode(g_, op, inputs, std::move(attrs), base_ + "." + suffix);
  }
  // A scalar constant in the node's output type, or in `dtype`.
  Value* scalar(const std::string& suffix, double v, std::optional<DType> dtype = std::nullopt) {
    return addConstant(g_, base_ + "." + suffix, Tensor::scalar(dtype.value_or(dtype_), v));
  }
  // A 1-D i64 constant named base.suffix (axes, shapes, starts).
  Value* ints(const std::string& suffix, const std::vector<int64_t>& v) {
    return addConstant(g_, base_ + "." + suffix, Tensor::fromInts(DType::I64, {int64_t(v.size())}, v));
  }
  Value* axes(const std::vector<int64_t>& axes) { return ints("axes", axes); }
  // 0 .. extent-1 of type t named base.suffix, along the first axis of a tensor whose `ones` trailing axes are 1
  // (so it broadcasts over the axis it stands for and those after it).
  Value* iota(const std::string& suffix, DType t, int64_t extent, size_t ones = 0) {
    std::vector<int64_t> v(static_cast<size_t>(extent));
    for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i);
    Shape s(ones + 1, 1);
    s[0] = extent;
    return addConstant(g_, base_ + "." + suffix, Tensor::fromInts(t, s, v));
  }
  Value* tensor(const std::string& suffix, const Shape& shape, const std::vector<double>& v) {
    return addConstant(g_, base_ + "." + suffix, Tensor::fromDoubles(dtype_, shape, v));
  }
  Value* reshape(const std::string& suffix, Value* x, const Shape& shape) {
    return op(suffix, "Reshape", {x, ints(suffix + "_shape", shape)});
  }
  Value* transpose(const std::string& suffix, Value* x, const std::vector<int64_t>& perm) {
    return op(suffix, "Transpose", {x}, {{"perm", perm}});
  }

 private:
  Graph& g_;
  std::string base_;
  DType dtype_;
};

}  // namespace tessera::decompose
