#pragma once
// Internal to the linalg family: linalg.cpp registers MatMul and Gemm and calls these for the rest.
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace tessera {
class OpRegistry;
}

namespace tessera::ops {

void registerConvOps(OpRegistry& r);  // Conv
void registerPoolOps(OpRegistry& r);  // MaxPool AveragePool LpPool GlobalAveragePool GlobalMaxPool

// A tensor's elements as a contiguous array the kernels read directly: f32 and f64 tensors are used in place,
// other dtypes are converted to double once. Kernels are templated on the element type and accumulate in double.
class KernelOperand {
 public:
  // `forceDouble` converts f32 too, so that two operands share an element type.
  KernelOperand(const Tensor& t, bool forceDouble);
  bool isFloat() const { return std::holds_alternative<const float*>(ptr_); }
  const float* f32() const { return std::get<const float*>(ptr_); }
  const double* f64() const { return std::get<const double*>(ptr_); }

 private:
  std::vector<double> converted_;
  std::variant<const float*, const double*> ptr_;
};

}  // namespace tessera::ops
