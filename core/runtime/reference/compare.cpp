#include "runtime/reference/compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/op_support.h"

namespace tessera {

Tolerance toleranceFor(DType t) {
  switch (t) {
    case DType::F64: return {1e-9, 1e-9};
    case DType::F32: return {1e-5, 1e-4};
    case DType::F16: return {1e-3, 1e-2};
    case DType::BF16: return {1e-2, 2e-2};
    default: return {0, 0};
  }
}

// tf32 keeps 10 of f32's 23 mantissa bits: each operand is off by up to 2^-11 of itself, so each product by
// ~3e-4 of itself (RMS), and a K-term sum by ~3e-4 of the root-sum-square of its terms, which is about the RMS
// of the results, whatever K is. Against compareTensors' floor of a tenth of the RMS (halved by a relu), that is
// ~4e-3 relative per standard deviation: 3e-2 covers the largest of millions of elements (measured on the H200:
// docs/codegen.md, Tensor cores).
// An output of another float dtype (an epilogue's cast) keeps the looser of the two.
Tolerance toleranceFor(DType t, const std::string& precision) {
  Tolerance own = toleranceFor(t);
  if (precision != "tf32" || !isFloat(t)) return own;
  return {std::max(own.abs, 1e-3), std::max(own.rel, 3e-2)};
}

namespace {

// Tensors are compared in chunks on every hardware thread (parallelFor): the tuner compares a 32x16x2048x2048
// attention score matrix per candidate, 2e9 elements, which took over a minute on one thread. Per-chunk results
// are merged in chunk order, so the outcome (and the first bad element named) does not depend on the threads.
constexpr int64_t kChunk = int64_t(1) << 16;

int64_t chunksOf(int64_t n) { return (n + kChunk - 1) / kChunk; }

// Readers of a tensor's elements as doubles: straight from the floats for f32 (most tensors, where getDouble's
// per-element switch cost more than the comparison itself), else through getDouble.
struct FloatReader {
  const float* p;
  double operator()(int64_t i) const { return double(p[i]); }
};
struct AnyReader {
  const Tensor* t;
  double operator()(int64_t i) const { return t->getDouble(i); }
};

// Calls f with readers of a and b, of one type: floats when both are f32.
template <class F>
void withReaders(const Tensor& a, const Tensor& b, F&& f) {
  if (a.dtype() == DType::F32 && b.dtype() == DType::F32) f(FloatReader{a.data<float>()}, FloatReader{b.data<float>()});
  else f(AnyReader{&a}, AnyReader{&b});
}

// The root mean square of the finite expected values: the size of the tensor's entries.
double rmsOf(const Tensor& t) {
  int64_t n = t.numElements();
  std::vector<double> sums(size_t(chunksOf(n)), 0.0);
  std::vector<int64_t> counts(sums.size(), 0);
  withReaders(t, t, [&](auto get, auto) {
    ops::parallelFor(chunksOf(n), kChunk, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
          double v = get(i);
          if (!std::isfinite(v)) continue;
          sums[size_t(c)] += v * v;
          ++counts[size_t(c)];
        }
    });
  });
  double sum = 0;
  int64_t finite = 0;
  for (size_t c = 0; c < sums.size(); ++c) {
    sum += sums[c];
    finite += counts[c];
  }
  return finite ? std::sqrt(sum / double(finite)) : 0.0;
}

// Elements [begin, end) into `c` (which keeps its first failure), read by `actual` and `expected`.
template <class Get>
void compareRange(Get actual, Get expected, Tolerance tol, double floor, int64_t begin, int64_t end, Comparison& c) {
  for (int64_t i = begin; i < end; ++i) {
    double a = actual(i), e = expected(i);
    if (std::isnan(a) || std::isnan(e)) {
      if (std::isnan(a) != std::isnan(e) && c.ok) {
        c.ok = false;
        c.message = "element " + std::to_string(i) + " is " + std::to_string(a) + ", expected " + std::to_string(e);
      }
      continue;
    }
    if (std::isinf(a) || std::isinf(e)) {
      if (a != e && c.ok) {
        c.ok = false;
        c.message = "element " + std::to_string(i) + " is " + std::to_string(a) + ", expected " + std::to_string(e);
      }
      continue;
    }
    double err = std::fabs(a - e);
    double rel = err / std::max(std::fabs(e), 1e-30);
    c.maxAbsError = std::max(c.maxAbsError, err);
    if (err > 0) c.maxRelError = std::max(c.maxRelError, rel);
    if (err > tol.abs + tol.rel * std::max(std::fabs(e), floor) && c.ok) {
      c.ok = false;
      c.message = "element " + std::to_string(i) + " is " + std::to_string(a) + ", expected " + std::to_string(e);
    }
  }
}

}  // namespace

namespace {
// A container's elements one by one (a sequence's in order, an optional's one or none).
Comparison compareContainers(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  Comparison c;
  const auto &a = actual.elements(), &e = expected.elements();
  if (a.size() != e.size()) {
    c.ok = false;
    c.message = "holds " + std::to_string(a.size()) + " elements; expected " + std::to_string(e.size());
    return c;
  }
  for (size_t i = 0; i < e.size(); ++i) {
    Comparison part = compareTensors(a[i], e[i], tol);
    c.maxAbsError = std::max(c.maxAbsError, part.maxAbsError);
    c.maxRelError = std::max(c.maxRelError, part.maxRelError);
    if (!part.ok && c.ok) c.ok = false, c.message = "element " + std::to_string(i) + ": " + part.message;
  }
  return c;
}

// Strings compare exactly, the first difference named with its flat index.
Comparison compareStrings(const Tensor& actual, const Tensor& expected) {
  Comparison c;
  const auto &a = actual.strings(), &e = expected.strings();
  for (size_t i = 0; i < e.size() && c.ok; ++i)
    if (a[i] != e[i]) c.ok = false, c.message = "element " + std::to_string(i) + " is \"" + a[i] + "\"; expected \"" + e[i] + "\"";
  return c;
}
}  // namespace

Comparison compareTensors(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  Comparison c;
  if (actual.type() != expected.type()) {
    c.ok = false;
    c.message = "type " + actual.type().toString() + " differs from expected " + expected.type().toString();
    return c;
  }
  if (expected.isContainer()) return compareContainers(actual, expected, tol);
  if (expected.holdsStrings()) return compareStrings(actual, expected);
  // The same bytes are the same values (NaN for NaN): a fill or a copy, or constants a kernel made, compared at
  // memory speed (vgg19-light's 548 MB of them each run took most of a repeat's check).
  const auto ab = actual.bytes(), eb = expected.bytes();
  if (ab.size() == eb.size() && (ab.empty() || std::memcmp(ab.data(), eb.data(), ab.size()) == 0)) return c;
  int64_t n = expected.numElements();
  // A sum's rounding error scales with its terms, not with its result: an element that cancels toward zero
  // (a 4096-term dot product that lands near 0) keeps the error of its neighbours. So the relative tolerance
  // is applied to max(|e|, a tenth of the tensor's RMS) rather than to |e| alone.
  double floor = 0.1 * rmsOf(expected);
  std::vector<Comparison> parts(size_t(chunksOf(n)));
  withReaders(actual, expected, [&](auto a, auto e) {
    ops::parallelFor(chunksOf(n), kChunk, [&](int64_t c0, int64_t c1) {
      for (int64_t k = c0; k < c1; ++k)
        compareRange(a, e, tol, floor, k * kChunk, std::min(n, (k + 1) * kChunk), parts[size_t(k)]);
    });
  });
  for (const Comparison& p : parts) {
    c.maxAbsError = std::max(c.maxAbsError, p.maxAbsError);
    c.maxRelError = std::max(c.maxRelError, p.maxRelError);
    if (!p.ok && c.ok) {
      c.ok = false;
      c.message = p.message;
    }
  }
  return c;
}

}  // namespace tessera
