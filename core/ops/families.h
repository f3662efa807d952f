#pragma once
// Internal: each op family registers its schemas here (called once by OpRegistry::instance()).
namespace tessera {
class OpRegistry;
// Unary and binary math, comparisons, logic, Where, Cast/CastLike, Clip, variadic Max/Min/Sum/Mean, Gelu,
// activations, Identity, Dropout, Constant, ConstantOfShape, Shape, Size, Range.
void registerElementwiseOps(OpRegistry& r);
// ReduceSum ReduceMean ReduceMax (and other reductions as needed).
void registerReductionOps(OpRegistry& r);
// Softmax LogSoftmax LayerNormalization BatchNormalization.
void registerNormalizationOps(OpRegistry& r);
// MatMul Gemm Conv MaxPool AveragePool GlobalAveragePool.
void registerLinalgOps(OpRegistry& r);
// Reshape Transpose Flatten Concat Split Slice Gather Squeeze Unsqueeze Expand Tile.
void registerShapeOps(OpRegistry& r);
}  // namespace tessera
