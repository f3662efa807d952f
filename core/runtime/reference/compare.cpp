#include "runtime/reference/compare.h"

#include <cmath>

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

namespace {

// The root mean square of the finite expected values: the size of the tensor's entries.
double rmsOf(const Tensor& t) {
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < t.numElements(); ++i) {
    double v = t.getDouble(i);
    if (!std::isfinite(v)) continue;
    sum += v * v;
    ++n;
  }
  return n ? std::sqrt(sum / double(n)) : 0.0;
}

}  // namespace

Comparison compareTensors(const Tensor& actual, const Tensor& expected, Tolerance tol) {
  Comparison c;
  if (actual.type() != expected.type()) {
    c.ok = false;
    c.message = "type " + actual.type().toString() + " differs from expected " + expected.type().toString();
    return c;
  }
  int64_t n = expected.numElements();
  // A sum's rounding error scales with its terms, not with its result: an element that cancels toward zero
  // (a 4096-term dot product that lands near 0) keeps the error of its neighbours. So the relative tolerance
  // is applied to max(|e|, a tenth of the tensor's RMS) rather than to |e| alone.
  double floor = 0.1 * rmsOf(expected);
  for (int64_t i = 0; i < n; ++i) {
    double a = actual.getDouble(i), e = expected.getDouble(i);
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
  return c;
}

}  // namespace tessera
