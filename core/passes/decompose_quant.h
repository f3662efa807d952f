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

}  // namespace tessera
