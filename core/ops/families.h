#pragma once
// Internal: each op family registers its schemas here (called once by OpRegistry::instance()).
namespace tessera {
class OpRegistry;
// Unary math and activations (Gelu, HardSwish, Selu, ...), IsNaN/IsInf/Not, arithmetic, comparisons, logic,
// Where, Clip, PRelu, variadic Max/Min/Sum/Mean, Cast/CastLike, Identity, Dropout, Constant, ConstantOfShape,
// Shape, Size, Range (elementwise_*.cpp).
void registerElementwiseOps(OpRegistry& r);
// ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceSumSquare ReduceLogSum
// ReduceLogSumExp, ArgMax ArgMin.
void registerReductionOps(OpRegistry& r);
// Softmax LogSoftmax LayerNormalization BatchNormalization (inference and training form) LRN.
void registerNormalizationOps(OpRegistry& r);
// MatMul Gemm; Conv (conv.cpp); MaxPool AveragePool GlobalAveragePool GlobalMaxPool (pool.cpp).
void registerLinalgOps(OpRegistry& r);
// Reshape Transpose Flatten Squeeze Unsqueeze Expand Tile; Slice Split Concat Pad (slice_ops.cpp); Gather
// GatherElements (gather.cpp).
void registerShapeOps(OpRegistry& r);
}  // namespace tessera
