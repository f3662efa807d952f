// MatMul and Gemm (numpy matrix products, accumulated in double); Conv and the pools live in conv.cpp and
// pool.cpp.
#include <algorithm>

#include <cmath>

#include "ops/broadcast.h"
#include "ops/families.h"
#include "ops/linalg_parts.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace ops {

KernelOperand::KernelOperand(const Tensor& t, bool forceDouble) {
  if (t.dtype() == DType::F32 && !forceDouble) {
    ptr_ = t.data<float>();
  } else if (t.dtype() == DType::F64) {
    ptr_ = t.data<double>();
  } else {
    converted_ = t.toDoubles();
    ptr_ = static_cast<const double*>(converted_.data());
  }
}

namespace {

// c[M,N] += a[M,K] · b, rows [i0, i1) of one product; b is [K,N], or [N,K] when bTransposed. Each output sums
// its products in k order from 0, whatever the path, so both give the same bits.
template <class T>
void productRows(const T* a, const T* b, double* c, int64_t K, int64_t N, bool bTransposed, int64_t i0,
                 int64_t i1) {
  if (bTransposed) {  // each output is a dot product of two contiguous rows
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < N; ++j) {
        const T* ar = a + i * K;
        const T* br = b + j * K;
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += double(ar[k]) * double(br[k]);
        c[i * N + j] += sum;
      }
    return;
  }
  // Blocks of B rows stay in cache while every output row of the range accumulates from them; the loop along a
  // row of c is a vector loop.
  constexpr int64_t kBlock = 128;
  for (int64_t k0 = 0; k0 < K; k0 += kBlock)
    for (int64_t i = i0; i < i1; ++i) {
      double* cr = c + i * N;
      for (int64_t k = k0; k < std::min(K, k0 + kBlock); ++k) {
        double aik = double(a[i * K + k]);
        const T* br = b + k * N;
        for (int64_t j = 0; j < N; ++j) cr[j] += aik * double(br[j]);
      }
    }
}

// A batch of products c[b] += a[aBatch[b]] · b[bBatch[b]], parallel over all output rows.
struct ProductBatch {
  int64_t M = 0, K = 0, N = 0;
  bool bTransposed = false;
  std::vector<int64_t> aBatch{0}, bBatch{0};
};

// Each [N,K] matrix of `b` as [K,N]: a transposed B (Gemm's transB, a Linear layer's weight) read by rows of k,
// so that the product's inner loop runs along N in vectors, where dot products of rows run one add at a time.
// Worth its copy of B from kTransposeRows rows of A on (a single row reads B once either way).
constexpr int64_t kTransposeRows = 8;

template <class T>
std::vector<T> transposed(const T* b, int64_t matrices, int64_t N, int64_t K) {
  std::vector<T> t(size_t(matrices * N * K));
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) t[size_t((m * K + k) * N + n)] = b[(m * N + n) * K + k];
  return t;
}

template <class T>
void runBatch(const ProductBatch& p, const T* a, const T* b, double* c) {
  if (p.bTransposed && !p.bBatch.empty() && int64_t(p.aBatch.size()) * p.M >= kTransposeRows) {
    int64_t matrices = 1 + *std::max_element(p.bBatch.begin(), p.bBatch.end());
    std::vector<T> bt = transposed(b, matrices, p.N, p.K);
    ProductBatch plain = p;
    plain.bTransposed = false;
    return runBatch(plain, a, bt.data(), c);
  }
  int64_t batches = int64_t(p.aBatch.size()), rows = batches * p.M;
  parallelFor(rows, p.K * p.N, [&](int64_t begin, int64_t end) {
    for (int64_t bi = begin / std::max<int64_t>(p.M, 1); bi < batches && bi * p.M < end; ++bi) {
      int64_t i0 = std::max(begin - bi * p.M, int64_t(0)), i1 = std::min(end - bi * p.M, p.M);
      productRows(a + p.aBatch[size_t(bi)] * p.M * p.K, b + p.bBatch[size_t(bi)] * p.K * p.N, c + bi * p.M * p.N,
                  p.K, p.N, p.bTransposed, i0, i1);
    }
  });
}

std::vector<double> product(const Node& node, const ProductBatch& p, const Tensor& a, const Tensor& b) {
  requireWorkBuffer(node, int64_t(p.aBatch.size()) * p.M * p.N);
  std::vector<double> c(size_t(int64_t(p.aBatch.size()) * p.M * p.N), 0.0);
  if (c.empty() || p.K == 0) return c;
  bool bothF32 = a.dtype() == DType::F32 && b.dtype() == DType::F32;
  KernelOperand ka(a, !bothF32), kb(b, !bothF32);
  if (bothF32)
    runBatch(p, ka.f32(), kb.f32(), c.data());
  else
    runBatch(p, ka.f64(), kb.f64(), c.data());
  return c;
}

// --- MatMul ---

struct MatMulShapes {
  Shape aBatch, bBatch, batch, out;
  int64_t M = 0, K = 0, N = 0;
};

// numpy matmul: a 1-D first operand gains a leading 1, a 1-D second operand a trailing 1, both removed after.
MatMulShapes matMulShapes(const Node& node, const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    failNode(node, "operands must have rank >= 1, got " + shapeToString(a) + " and " + shapeToString(b));
  MatMulShapes s;
  Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a, b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  s.M = a2[a2.size() - 2];
  s.K = a2.back();
  s.N = b2.back();
  if (b2[b2.size() - 2] != s.K)
    failNode(node, "inner dimensions differ: " + shapeToString(a) + " x " + shapeToString(b));
  s.aBatch.assign(a2.begin(), a2.end() - 2);
  s.bBatch.assign(b2.begin(), b2.end() - 2);
  auto batch = broadcastShapes({s.aBatch, s.bBatch});
  if (!batch)
    failNode(node, "batch dimensions do not broadcast: " + shapeToString(a) + " x " + shapeToString(b));
  s.batch = *batch;
  s.out = s.batch;
  if (a.size() > 1) s.out.push_back(s.M);
  if (b.size() > 1) s.out.push_back(s.N);
  return s;
}

void inferMatMul(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Numeric);
  requireSameDType(ctx, 0, 1);
  ctx.outputs[0] = {ctx.input(0).dtype, matMulShapes(ctx.node(), ctx.input(0).shape, ctx.input(1).shape).out};
}

std::vector<Tensor> evalMatMul(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  MatMulShapes s = matMulShapes(node, in[0]->shape(), in[1]->shape());
  ProductBatch p;
  p.M = s.M;
  p.K = s.K;
  p.N = s.N;
  p.aBatch = broadcastIndexMap(s.aBatch, s.batch);
  p.bBatch = broadcastIndexMap(s.bBatch, s.batch);
  std::vector<double> c = product(node, p, *in[0], *in[1]);
  return {Tensor::fromDoubles(types[0].dtype, types[0].shape, c)};
}

// --- Gemm ---

struct GemmShapes {
  int64_t M = 0, K = 0, N = 0;
};

GemmShapes gemmShapes(const Node& node, const Shape& a, const Shape& b, const Shape* c) {
  if (a.size() != 2 || b.size() != 2)
    failNode(node, "A and B must be 2-D, got " + shapeToString(a) + " and " + shapeToString(b));
  bool ta = node.attrInt("transA", 0) != 0, tb = node.attrInt("transB", 0) != 0;
  GemmShapes s{ta ? a[1] : a[0], ta ? a[0] : a[1], tb ? b[0] : b[1]};
  int64_t kb = tb ? b[1] : b[0];
  if (kb != s.K)
    failNode(node, "inner dimensions differ: A " + shapeToString(a) + (ta ? " (transposed)" : "") + " x B " +
                       shapeToString(b) + (tb ? " (transposed)" : ""));
  Shape mn{s.M, s.N};
  if (c && broadcastShapes({*c, mn}) != mn)
    failNode(node, "input 2 (C) " + shapeToString(*c) + " does not broadcast to " + shapeToString(mn));
  return s;
}

void inferGemm(InferContext& ctx) {
  const Shape* c = requireWeightOperands(ctx, DTypeClass::Numeric);
  GemmShapes s = gemmShapes(ctx.node(), ctx.input(0).shape, ctx.input(1).shape, c);
  ctx.outputs[0] = {ctx.input(0).dtype, {s.M, s.N}};
}

// [R,C] → [C,R], keeping the dtype.
Tensor transposed2d(const Tensor& t) {
  int64_t r = t.shape()[0], c = t.shape()[1];
  return stridedCopy(t, {t.dtype(), {c, r}}, {1, c}, 0);
}

std::vector<Tensor> evalGemm(const Node& node, const std::vector<const Tensor*>& in,
                             const std::vector<TensorType>& types) {
  const Tensor* c = in.size() > 2 ? in[2] : nullptr;
  GemmShapes s = gemmShapes(node, in[0]->shape(), in[1]->shape(), c ? &c->shape() : nullptr);
  Tensor a = node.attrInt("transA", 0) ? transposed2d(*in[0]) : *in[0];
  ProductBatch p;
  p.M = s.M;
  p.K = s.K;
  p.N = s.N;
  p.bTransposed = node.attrInt("transB", 0) != 0;
  std::vector<double> y = product(node, p, a, *in[1]);
  double alpha = node.attrFloat("alpha", 1.0), beta = node.attrFloat("beta", 1.0);
  for (double& v : y) v *= alpha;
  if (c) {
    std::vector<double> cv = c->toDoubles();
    std::vector<int64_t> map = broadcastIndexMap(c->shape(), {s.M, s.N});
    for (size_t i = 0; i < y.size(); ++i) y[i] += beta * cv[size_t(map[i])];
  }
  return {Tensor::fromDoubles(types[0].dtype, types[0].shape, y)};
}

// --- Det: the determinant of each [M, M] matrix of [..., M, M], by LU with partial pivoting in double ---

void inferDet(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  const Shape& x = ctx.input(0).shape;
  if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
    ctx.error("input 0 must be [..., M, M], not " + ctx.input(0).toString());
  ctx.outputs[0] = {ctx.input(0).dtype, Shape(x.begin(), x.end() - 2)};
}

double determinant(std::vector<double> a, int64_t m) {
  double det = 1;
  for (int64_t c = 0; c < m; ++c) {
    int64_t pivot = c;
    for (int64_t r = c + 1; r < m; ++r)
      if (std::fabs(a[size_t(r * m + c)]) > std::fabs(a[size_t(pivot * m + c)])) pivot = r;
    if (a[size_t(pivot * m + c)] == 0) return 0;
    if (pivot != c) {
      for (int64_t k = 0; k < m; ++k) std::swap(a[size_t(c * m + k)], a[size_t(pivot * m + k)]);
      det = -det;
    }
    double d = a[size_t(c * m + c)];
    det *= d;
    for (int64_t r = c + 1; r < m; ++r) {
      double f = a[size_t(r * m + c)] / d;
      for (int64_t k = c; k < m; ++k) a[size_t(r * m + k)] -= f * a[size_t(c * m + k)];
    }
  }
  return det;
}

std::vector<Tensor> evalDet(const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  int64_t m = in[0]->shape().back(), count = numElements(types[0].shape);
  std::vector<double> x = in[0]->toDoubles(), y(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    y[size_t(i)] = determinant(std::vector<double>(x.begin() + i * m * m, x.begin() + (i + 1) * m * m), m);
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

}  // namespace
}  // namespace ops

void registerLinalgOps(OpRegistry& r) {
  using namespace ops;
  addOp(r, {"MatMul", OpCategory::Matmul, "matrix product with numpy broadcasting of batch dimensions", 2, 2, 1, 1,
            {}, inferMatMul, evalMatMul});
  addOp(r, {"Gemm", OpCategory::Matmul, "alpha * op(A) * op(B) + beta * C, op = optional transpose", 2, 3, 1, 1, {},
            inferGemm, evalGemm});
  addOp(r, {"Det", OpCategory::Other, "determinant of each trailing square matrix (no kernel template)", 1, 1, 1, 1, {},
            inferDet, evalDet});
  registerConvOps(r);
  registerPoolOps(r);
}

}  // namespace tessera
