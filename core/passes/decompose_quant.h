#pragma once
// Internal to the decompose pass: the quantized products (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv) as Cast, Sub, MatMul or Conv, Mul, Round, Add, Clip and Cast, which lower to a gemm or conv kernel
// with its epilogue (before: a host group each).
#include "ir/graph.h"

namespace tessera {

// The node's output computed from primitives, equal to its reference semantics (ops/quant_linalg.cpp) element for
// element: the zero-shifted product exact in i32 (a matrix product) or in f32 or f64 (a convolution, whichever
// holds every partial sum exactly), rescaled in f64 by a factor formed in the scales' own type, rounded half to
// even, shifted by y_zero and saturated. Nullptr when the node is not one of the four or has an unexpected form.
Value* quantizedProductAsPrimitives(Graph& graph, const Node& product);

bool isQuantizedProduct(const std::string& op);

// DynamicQuantizeLinear's outputs (y, y_scale, y_zero_point) from ReduceMin/ReduceMax over all of x (two row
// kernels) and f32 pointwise ops, as ONNX's function body and the reference compute them: the range widened to
// include 0, scale = range / 255, zero = saturate(round(-min / scale)), y = saturate(round(x / scale) + zero); a
// zero range (x all zeros) divides by 1 instead, giving y = 0 and zero = 0 as the reference does. Empty when x is
// not f32.
std::vector<Value*> dynamicQuantizeAsPrimitives(Graph& graph, const Node& quantize);

}  // namespace tessera
