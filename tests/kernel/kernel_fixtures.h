#pragma once
// Small graphs for the kernel tests, built with GraphBuilder; each returns the graph and the group spec.
#include <QtTest>

#include "kernel/lower/lower.h"
#include "kernel/printer.h"
#include "ops/builder.h"

namespace tessera::kernel::fixtures {

struct Case {
  Graph graph;
  KernelSpec spec;
};

inline Tensor filled(DType t, Shape s, double v) {
  std::vector<double> values(size_t(numElements(s)), v);
  return Tensor::fromDoubles(t, s, values);
}

// y = relu(x * s + b) with b broadcast over rows.
inline Case pointwise() {
  GraphBuilder b("pw");
  Value* x = b.input("x", {DType::F32, {4, 8}});
  Value* bias = b.input("bias", {DType::F32, {8}});
  Value* m = b.op("Mul", {x, x}, {}, "mul");
  Value* a = b.op("Add", {m, bias}, {}, "add");
  b.output(b.op("Relu", {a}, {}, "relu"));
  return {b.finish(), {"g0", "pointwise", {"mul", "add", "relu"}}};
}

inline Case softmax(int64_t rows = 4, int64_t cols = 64, DType t = DType::F32) {
  GraphBuilder b("sm");
  Value* x = b.input("x", {t, {rows, cols}});
  b.output(b.op("Softmax", {x}, {{"axis", int64_t(-1)}}, "softmax"));
  return {b.finish(), {"g0", "reduction", {"softmax"}}};
}

inline Case layernorm() {
  GraphBuilder b("ln");
  Value* x = b.input("x", {DType::F32, {2, 3, 16}});
  Value* s = b.constant("scale", filled(DType::F32, {16}, 1.0));
  Value* bias = b.constant("bias", filled(DType::F32, {16}, 0.0));
  b.output(b.op("LayerNormalization", {x, s, bias}, {{"axis", int64_t(-1)}, {"epsilon", 1e-5}}, "ln"));
  return {b.finish(), {"g0", "reduction", {"ln"}}};
}

// mean over the last axis, then a pointwise epilogue per row.
inline Case reduceMean() {
  GraphBuilder b("rm");
  Value* x = b.input("x", {DType::F32, {8, 32}});
  Value* m = b.op("ReduceMean", {x, b.ints("axes", {1})}, {{"keepdims", int64_t(1)}}, "mean");
  Value* d = b.op("Sub", {x, m}, {}, "sub");
  b.output(b.op("Exp", {d}, {}, "exp"));
  return {b.finish(), {"g0", "reduction", {"mean", "sub", "exp"}}};
}

inline Case gemm(int64_t M = 64, int64_t N = 64, int64_t K = 32) {
  GraphBuilder b("mm");
  Value* x = b.input("x", {DType::F32, {M, K}});
  Value* w = b.constant("w", filled(DType::F32, {K, N}, 0.5));
  Value* bias = b.constant("bias", filled(DType::F32, {N}, 1.0));
  Value* y = b.op("MatMul", {x, w}, {}, "matmul");
  Value* a = b.op("Add", {y, bias}, {}, "add");
  b.output(b.op("Relu", {a}, {}, "relu"));
  return {b.finish(), {"g0", "gemm+epilogue", {"matmul", "add", "relu"}}};
}

// x [M, K] · w [K, N], both inputs, no epilogue.
inline Case gemmWithoutEpilogue(int64_t M, int64_t N, int64_t K, DType t = DType::F32) {
  GraphBuilder b("mm");
  Value* x = b.input("x", {t, {M, K}});
  Value* w = b.input("w", {t, {K, N}});
  b.output(b.op("MatMul", {x, w}, {}, "matmul"));
  return {b.finish(), {"g0", "gemm", {"matmul"}}};
}

inline Case conv() {
  GraphBuilder b("cv");
  Value* x = b.input("x", {DType::F32, {1, 3, 8, 8}});
  Value* w = b.constant("w", filled(DType::F32, {4, 3, 3, 3}, 0.1));
  Value* bias = b.constant("bias", filled(DType::F32, {4}, 0.0));
  Value* y = b.op("Conv", {x, w, bias}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  b.output(b.op("Relu", {y}, {}, "relu"));
  return {b.finish(), {"g0", "conv+epilogue", {"conv", "relu"}}};
}

inline Case transpose(int64_t M = 64, int64_t N = 96) {
  GraphBuilder b("tr");
  Value* x = b.input("x", {DType::F32, {M, N}});
  b.output(b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}}, "transpose"));
  return {b.finish(), {"g0", "data-movement", {"transpose"}}};
}

inline Case maxpool() {
  GraphBuilder b("mp");
  Value* x = b.input("x", {DType::F32, {1, 2, 8, 8}});
  b.output(b.op("MaxPool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}, "pool"));
  return {b.finish(), {"g0", "pooling", {"pool"}}};
}

inline Kernel lower(const Case& c) { return lowerToLoops(c.graph, c.spec); }

// The case's group scheduled for the cpu backend.
inline Case onCpu(Case c) {
  c.spec.machine = Machine::Cpu;
  return c;
}

}  // namespace tessera::kernel::fixtures
