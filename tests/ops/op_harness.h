#pragma once
// Test harness for single ops: builds a one-node graph with GraphBuilder (so inference runs) and executes it
// with the reference interpreter. Used by test_elementwise, test_reduction and test_normalization.
#include <QtTest>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/builder.h"
#include "runtime/reference/interpreter.h"

namespace tessera::test {

inline Tensor T(DType t, Shape shape, std::vector<double> values) {
  return Tensor::fromDoubles(t, std::move(shape), values);
}
inline Tensor I64(Shape shape, std::vector<int64_t> values) {
  return Tensor::fromInts(DType::I64, std::move(shape), values);
}
inline Tensor F32(Shape shape, std::vector<double> values) { return T(DType::F32, std::move(shape), std::move(values)); }
// 0, 1, 2, ...: inputs whose every element differs, so a wrong index shows.
inline Tensor iota(Shape shape, DType dtype = DType::F32) {
  std::vector<double> v(size_t(numElements(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  return T(dtype, std::move(shape), v);
}

// The same values as `t` (f32) in f64: an op given these computes in double what it computes for `t`, before
// rounding to f32.
inline Tensor asF64(const Tensor& t) { return Tensor::fromDoubles(DType::F64, t.shape(), t.toDoubles()); }

// Every element of the f32 tensor `y32` is the f64 tensor `y64`'s rounded once to f32, bit for bit.
inline bool roundedOnce(const Tensor& y32, const Tensor& y64) {
  if (y32.dtype() != DType::F32 || y64.dtype() != DType::F64 || y32.numElements() != y64.numElements()) return false;
  for (int64_t i = 0; i < y32.numElements(); ++i)
    if (y32.data<float>()[i] != float(y64.data<double>()[i])) return false;
  return true;
}

struct OpRun {
  std::vector<Tensor> outputs;
  std::vector<TensorType> inferred;
};

// Runs `op` on `inputs` (a default Tensor = omitted optional input). Inputs whose index is in `constants`
// become initializers (known at compile time, as shape operands must be); the others are graph inputs.
inline OpRun runOp(const std::string& op, const std::vector<Tensor>& inputs, Attributes attrs = {},
                   std::set<size_t> constants = {}, size_t numOutputs = 1) {
  GraphBuilder b("t");
  std::vector<Value*> ins;
  std::vector<Tensor> fed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) {
      ins.push_back(nullptr);
      continue;
    }
    std::string name = "in" + std::to_string(i);
    if (constants.count(i)) {
      ins.push_back(b.constant(name, inputs[i]));
    } else {
      ins.push_back(b.input(name, inputs[i].type()));
      fed.push_back(inputs[i]);
    }
  }
  std::vector<Value*> outs = b.opN(op, ins, numOutputs, std::move(attrs), "node1");
  OpRun r;
  for (Value* v : outs) {
    b.output(v);
    r.inferred.push_back(v->type());
  }
  Graph g = b.finish();
  r.outputs = runReference(g, fed).outputs;
  return r;
}

// The single output of `op`.
inline Tensor run1(const std::string& op, const std::vector<Tensor>& inputs, Attributes attrs = {},
                   std::set<size_t> constants = {}) {
  return runOp(op, inputs, std::move(attrs), std::move(constants)).outputs.at(0);
}

// The message of the Error that `f` throws, or "" when it throws none.
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// "" when `t` has `type` and holds `expected` within `tol` (NaN matches NaN), else what differs.
inline std::string mismatch(const Tensor& t, const TensorType& type, const std::vector<double>& expected,
                            double tol) {
  if (t.type() != type) return "type " + t.type().toString() + ", expected " + type.toString();
  std::vector<double> got = t.toDoubles();
  if (got.size() != expected.size()) return "element count differs";
  for (size_t i = 0; i < got.size(); ++i) {
    bool same = std::isnan(expected[i]) ? std::isnan(got[i])
                                        : got[i] == expected[i] || std::fabs(got[i] - expected[i]) <= tol;
    if (!same)
      return "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
             std::to_string(expected[i]);
  }
  return "";
}

}  // namespace tessera::test

// Checks type and values of a tensor inside a Qt Test slot.
#define EXPECT_TENSOR(t, type, expected, tol)                                    \
  do {                                                                           \
    std::string m_ = tessera::test::mismatch((t), (type), (expected), (tol));   \
    QVERIFY2(m_.empty(), m_.c_str());                                            \
  } while (0)

// Checks that `stmt` throws an Error whose message contains every listed part.
#define EXPECT_ERROR(stmt, ...)                                                            \
  do {                                                                                     \
    std::string e_ = tessera::test::errorOf([&] { stmt; });                                \
    QVERIFY2(!e_.empty(), "no error thrown");                                              \
    for (const char* part_ : {__VA_ARGS__})                                                \
      QVERIFY2(e_.find(part_) != std::string::npos, ("message lacks '" + std::string(part_) + "': " + e_).c_str()); \
  } while (0)
