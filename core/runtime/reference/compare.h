#pragma once
// Comparing a result with the oracle: tolerances by dtype, and the errors to report.
#include <string>

#include "ir/tensor.h"

namespace tessera {

struct Tolerance {
  double abs = 0, rel = 0;
};
// f64 1e-9, f32 1e-4 relative (1e-5 absolute), f16 and bf16 looser, integers and bool exact.
Tolerance toleranceFor(DType t);
// The tolerance for values of dtype t computed at `precision` (codegen's GeneratedKernel::precision): "" is t's
// own; "tf32" (f32 products of operands rounded to a 10-bit mantissa) is looser than f16's, since the rounding
// error of a K-deep sum grows with its terms, not its result (compare.cpp says how much).
Tolerance toleranceFor(DType t, const std::string& precision);

struct Comparison {
  bool ok = true;
  double maxAbsError = 0, maxRelError = 0;
  std::string message;  // why it failed: type mismatch, first bad index, NaN mismatch
};

// Element-wise |a-b| <= abs + rel*max(|b|, rms(expected)/10) (b is the expected value; the RMS floor keeps
// elements that cancel toward zero from failing on rounding alone); NaN equals NaN.
Comparison compareTensors(const Tensor& actual, const Tensor& expected, Tolerance tol);
inline Comparison compareTensors(const Tensor& actual, const Tensor& expected) {
  return compareTensors(actual, expected, toleranceFor(expected.dtype()));
}

}  // namespace tessera
