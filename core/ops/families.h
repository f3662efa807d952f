#pragma once
// Internal: each op family registers its schemas here (called once by OpRegistry::instance()).
namespace tessera {
class OpRegistry;
// Unary math and activations (Gelu, HardSwish, Selu, trigonometric and hyperbolic, ...), IsNaN/IsInf/Not,
// BitwiseNot, arithmetic, comparisons, logic, bitwise ops and BitShift,
// Where, Clip, PRelu, variadic Max/Min/Sum/Mean, Cast/CastLike/BitCast, Identity, Dropout, Constant, ConstantOfShape,
// Shape, Size, Range (elementwise_*.cpp).
void registerElementwiseOps(OpRegistry& r);
// ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceSumSquare ReduceLogSum
// ReduceLogSumExp, ArgMax ArgMin.
void registerReductionOps(OpRegistry& r);
// Softmax LogSoftmax Hardmax LayerNormalization RMSNormalization BatchNormalization (inference and training form)
// LRN.
void registerNormalizationOps(OpRegistry& r);
// MatMul Gemm Det; Conv (conv.cpp); MaxPool AveragePool LpPool GlobalAveragePool GlobalMaxPool (pool.cpp).
void registerLinalgOps(OpRegistry& r);
// Reshape Transpose Flatten Squeeze Unsqueeze Expand Tile; Slice Split Concat Pad (slice_ops.cpp); Gather
// GatherElements GatherND (gather.cpp).
void registerShapeOps(OpRegistry& r);
// Trilu CumSum CumProd (triangular.cpp).
void registerTriangularOps(OpRegistry& r);
// TopK (topk.cpp).
void registerTopKOps(OpRegistry& r);
// ScatterElements (and its opset-9 name Scatter) ScatterND TensorScatter (scatter.cpp).
void registerScatterOps(OpRegistry& r);
// RotaryEmbedding (rotary.cpp).
void registerRotaryOps(OpRegistry& r);
// Einsum (einsum.cpp).
void registerEinsumOps(OpRegistry& r);
// NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss (loss.cpp).
void registerLossOps(OpRegistry& r);
// Resize Upsample (resize.cpp).
void registerResizeOps(OpRegistry& r);
// Attention (attention.cpp).
void registerAttentionOps(OpRegistry& r);
// LinearAttention (linear_attention.cpp).
void registerLinearAttentionOps(OpRegistry& r);
// ConvTranspose CausalConvWithState (conv_transpose.cpp).
void registerConvTransposeOps(OpRegistry& r);
// QuantizeLinear DequantizeLinear (quantize.cpp).
void registerQuantizeOps(OpRegistry& r);
// InstanceNormalization GroupNormalization MeanVarianceNormalization LpNormalization (normalization_stats.cpp).
void registerNormalizationStatsOps(OpRegistry& r);
// DepthToSpace SpaceToDepth ReverseSequence CenterCropPad EyeLike OneHot (layout_ops.cpp).
void registerLayoutOps(OpRegistry& r);
// DFT STFT HannWindow HammingWindow BlackmanWindow MelWeightMatrix (signal.cpp).
void registerSignalOps(OpRegistry& r);
// GridSample AffineGrid (grid_sample.cpp).
void registerGridSampleOps(OpRegistry& r);
// MatMulInteger ConvInteger QLinearMatMul QLinearConv DynamicQuantizeLinear (quant_linalg.cpp).
void registerQuantLinalgOps(OpRegistry& r);
// NonZero Compress Unique NonMaxSuppression, whose shapes follow their data (data_dependent.cpp).
void registerDataDependentOps(OpRegistry& r);
// RNN GRU LSTM (recurrent.cpp).
void registerRecurrentOps(OpRegistry& r);
// Col2Im MaxUnpool (window_inverse.cpp).
void registerWindowInverseOps(OpRegistry& r);
// RoiAlign DeformConv (roi_align.cpp).
void registerRoiAlignOps(OpRegistry& r);
// TfIdfVectorizer (tfidf.cpp).
void registerTfIdfOps(OpRegistry& r);
// SequenceEmpty SequenceConstruct SequenceLength SequenceInsert SequenceErase SequenceAt SplitToSequence
// ConcatFromSequence (sequence.cpp), SequenceMap (sequence_map.cpp), Optional OptionalHasElement
// OptionalGetElement (optional.cpp): the ops of sequence and optional values.
void registerSequenceOps(OpRegistry& r);
// StringConcat StringSplit StringNormalizer RegexFullMatch (strings.cpp).
void registerStringOps(OpRegistry& r);
// ai.onnx.ml's LabelEncoder Binarizer ArrayFeatureExtractor TreeEnsemble (ml.cpp).
void registerMlOps(OpRegistry& r);
// ai.onnx.preview.training's Adagrad Adam Momentum (training.cpp).
void registerTrainingOps(OpRegistry& r);
// If Loop (control_flow.cpp), Scan (control_flow_scan.cpp): ops with subgraphs.
void registerControlFlowOps(OpRegistry& r);
}  // namespace tessera
