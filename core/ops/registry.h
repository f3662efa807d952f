#pragma once
// The op registry: every op is declared once, with its arity, category, shape/type inference and reference
// semantics (ONNX semantics, numpy broadcasting). Ops use the latest ONNX form: operands that older opsets
// passed as attributes (axes, split sizes, Slice bounds, Clip bounds, Reshape/Expand/Tile shapes) are inputs;
// the ONNX importer upgrades older forms. Inputs listed in `shapeInputs` decide the output shape, so they
// must be known constants for static inference.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"

namespace tessera {

// Coarse op classes: node colours in the window and the starting point of fusion.
enum class OpCategory { Pointwise, Reduction, Matmul, Conv, DataMovement, Constant, Other };
std::string_view opCategoryName(OpCategory c);  // "pointwise", "reduction", ...

// Thrown by InferContext::requireConstant: the node's output types depend on the values of an input that
// inference does not know (NonZero's count, a Reshape by a computed shape). ops/specialize.h turns it into
// types measured on sample inputs; everything else reports it as the error it is.
class NeedsValuesError : public Error {
 public:
  NeedsValuesError(const std::string& message, std::string nodeId) : Error(message), nodeId_(std::move(nodeId)) {}
  const std::string& nodeId() const { return nodeId_; }

 private:
  std::string nodeId_;
};

// What inference sees of one node: input types, known constant inputs, attributes; it fills `outputs`.
class InferContext {
 public:
  using ConstantLookup = std::function<const Tensor*(const Value*)>;
  // `valuesTyped`: the known inputs are a run's values, whose types are the inputs' (not the graph's).
  InferContext(const Node& node, ConstantLookup constants, bool valuesTyped = false);

  const Node& node() const { return node_; }
  size_t numInputs() const { return node_.numInputs(); }
  bool hasInput(size_t i) const { return node_.input(i) != nullptr; }
  const TensorType& input(size_t i) const;  // throws if absent
  // Data of input i when it is statically known (initializer, Constant output, folded shape arithmetic).
  const Tensor* constantInput(size_t i) const;
  // As constantInput, but throws NeedsValuesError "node 'id' (Op): input i (what) must be a constant" when unknown.
  const Tensor& requireConstant(size_t i, const std::string& what) const;
  // "node 'id' (Op): message" as an Error.
  [[noreturn]] void error(const std::string& message) const;

  std::vector<TensorType> outputs;  // filled by InferFn; size = node.numOutputs()

 private:
  const Node& node_;
  ConstantLookup constants_;
  bool valuesTyped_;
};

using InferFn = std::function<void(InferContext&)>;
// Reference semantics: inputs (null when an optional input is absent) to outputs. `outputTypes` are the
// statically inferred output types; the result must match them.
using EvalFn = std::function<std::vector<Tensor>(const Node& node, const std::vector<const Tensor*>& inputs,
                                                 const std::vector<TensorType>& outputTypes)>;

// What passes, fusion and kernel lowering ask of an op, set where the op is registered, so that they ask
// "is it commutative?" instead of comparing op names. Defaults say "no": an op gains a trait only when its
// ONNX definition has it and the consumers of the trait handle it (see core/ops/README.md).
enum class ReduceKind { None, Sum, Mean, Max, Min, Other };  // what a Reduce* op or pool accumulates
enum class PoolKind { None, Window, Global };                 // sliding windows, or all spatial positions
// View: the same elements in the same order under a new shape (Reshape, Flatten, Squeeze, Unsqueeze).
// Reindex: each output element is one input element at a computed position (Transpose, Slice, Gather, ...).
enum class MovementKind { None, View, Reindex };

struct OpTraits {
  bool commutative = false;           // any order of the inputs gives the same result (Add, Mul, Max, Sum, ...)
  std::optional<double> neutral = {};  // x op e == x for this e (Add/Sub 0, Mul/Div/Pow 1); e op x too when
                                       // commutative
  bool random = false;                // draws random numbers: never merged by CSE or folded
  bool randomInTraining = false;      // random only in training mode (Dropout): never folded
  bool shapeOnly = false;             // the output depends on the input's static type only (Shape, Size)
  bool hasNhwcForm = false;           // has a channels-last form layout-nhwc may switch it to (Conv, pools)
  bool rowNormalization = false;      // a statistic over a row, then a second pass over it (Softmax, LayerNorm)
  bool identityWhenTypeKept = false;  // copies input 0 when its output type equals input 0's (Cast, Expand)
  bool identityWhenUnary = false;     // copies its only input (Concat, Sum, Max, Min, Mean of one input)
  bool subgraphs = false;             // runs graph attributes (If, Loop, Scan): on the host, never in a kernel
  bool unboundedEval = false;         // evaluation cost not bounded by its operands (Loop: M iterations)
  bool containers = false;            // may read or make sequence and optional values (ir/shape.h ValueKind);
                                      // every other op's inference refuses them
  bool strings = false;               // may read string tensors (ir/dtype.h DType::String); every other op's
                                      // inference refuses them
  ReduceKind reduce = ReduceKind::None;
  PoolKind pool = PoolKind::None;
  MovementKind movement = MovementKind::None;
};

struct OpSchema {
  std::string name;
  OpCategory category = OpCategory::Other;
  std::string summary;  // one line for the inspector
  int minInputs = 1, maxInputs = 1;
  int minOutputs = 1, maxOutputs = 1;
  std::vector<int> shapeInputs;  // inputs whose values decide output shapes
  InferFn infer;
  EvalFn eval;
  OpTraits traits = {};  // last, so that aggregate registrations without traits keep working
};

// Ops of other domains (a custom op, ai.onnx.ml, ...) are named "domain::Op" in the graph, so that no lookup by
// name takes one for the default domain's op of the same name. Neither they nor a default-domain op missing
// from the registry have a schema: such a node is opaque. Its output types are the ones its model declares,
// it is drawn and compiled into a host group of its own, and nothing can run it (docs/operators.md).
std::string qualifiedOpName(const std::string& domain, const std::string& opType);  // "Relu", "com.acme::Foo"
// {"", "Relu"} or {"com.acme", "Foo"}: the inverse of qualifiedOpName.
std::pair<std::string, std::string> splitOpName(const std::string& op);
bool isKnownOp(const std::string& op);  // registered (and so of the default domain)
// The first node the reference interpreter cannot run: `node` itself when its op is unknown, else one in its
// subgraphs at any depth; null when every one has reference semantics.
const Node* firstWithoutSemantics(const Node& node);
// "node 'id' (Op): unknown op 'Op' (domain 'd'): Tessera has no reference semantics for it", for a node
// firstWithoutSemantics returned: what a run that reaches it says.
std::string noSemanticsMessage(const Node& node);

// The traits of a registered op; all defaults ("no") for an unknown name.
const OpTraits& opTraits(const std::string& op);
// Whether a reduction has a kernel nest: it accumulates a sum, mean, max or min (Reduce*, the max and average
// pools) or normalizes rows (Softmax, LayerNorm). The rest (ReduceProd, L1, L2, LogSum, LogSumExp, SumSquare,
// LpPool, ArgMax, ArgMin) run on the host: the lowering refuses them and fusion keeps them out of groups.
bool hasReductionKernel(const OpTraits& t);
// Whether evaluating `node` at compile time has a cost bounded by its operands: no node in it or in its
// subgraphs (at any depth) is unboundedEval. Constant propagation and folding evaluate only such nodes.
bool evalCostBounded(const Node& node);

class OpRegistry {
 public:
  static const OpRegistry& instance();
  const OpSchema* find(const std::string& op) const;
  const OpSchema& get(const Node& node) const;  // throws "node 'id': unknown op 'X'"
  std::vector<std::string> names() const;       // sorted
  void add(OpSchema schema);                     // throws on a duplicate name

 private:
  std::vector<OpSchema> schemas_;
};

}  // namespace tessera
