#pragma once
// Internal to the lowering: the group's inputs/outputs as buffers, and the Emitter that turns graph values
// into Compute statements at one point of a loop nest.
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ir/constant.h"
#include "ir/graph.h"
#include "kernel/kernel_ir.h"
#include "kernel/lower/lower.h"

namespace tessera::kernel {

class Emitter;
using SpecialFn = std::function<Expr(Emitter&)>;

struct LowerCtx {
  const Graph& g;
  Kernel& k;
  std::vector<const Node*> nodes;  // the group, in the spec's order
  std::set<const Node*> inGroup;
  std::map<const Value*, std::string> inputBuffer;
  std::vector<const Value*> outputs;  // group outputs, in order of production
  std::map<const Value*, std::string> outputBuffer;
  std::map<const Value*, SpecialFn> special;  // values of composite ops (softmax output, matmul result, ...)
  int computeCounter = 0;
  int accCounter = 0;

  LowerCtx(const Graph& graph, Kernel& kernel, const KernelSpec& spec);
  bool produced(const Value* v) const { return v->producer() && inGroup.count(v->producer()); }
  // "kernel 'k': node 'n' (Op): message" as an Error.
  [[noreturn]] void fail(const Node& n, const std::string& message) const;
  // Declares a register buffer of one element and its Allocate + initializing Store in `block`.
  std::string newAccumulator(BlockStmt& block, DType t, Expr init, const std::string& provenance);
  // `value`, what the index input `input` of `n` holds at `at`, checked (CheckedIndex) as an index into an axis
  // of `extent`: what every data-dependent address is made of. One Kernel::indexChecks entry per node and input.
  Expr checkedIndexAt(const Node& n, size_t input, Expr value, const std::vector<Expr>& at, int64_t axis,
                      int64_t extent);
};

// Emits the Compute statements that produce graph values at one point of the iteration domain.
class Emitter {
 public:
  // `domain`: the iteration domain's shape; `idx`: one index expression per dimension of it.
  Emitter(LowerCtx& ctx, Shape domain, std::vector<Expr> idx, BlockStmt& out, Emitter* parent = nullptr);
  // The value at the current point (null for an absent optional input).
  Expr value(const Value* v);
  LowerCtx& ctx() { return ctx_; }
  const std::vector<Expr>& idx() const { return idx_; }
  const Shape& domain() const { return domain_; }
  BlockStmt& out() { return out_; }
  std::map<const Value*, Expr> known;
  std::function<bool(const Value*)> delegate;  // values to take from the parent (computed once per row)

 private:
  Expr compute(const Value* v, const Node& producer, Expr e);
  Expr rangeExpr(const Node& p);
  Expr fillExpr(const Node& p, DType type);
  Expr channelParam(const Node& p, const Value* v, int64_t axis);
  Expr quantParam(const Node& p, size_t input);
  LowerCtx& ctx_;
  Shape domain_;
  std::vector<Expr> idx_;
  BlockStmt& out_;
  Emitter* parent_;
};

// Index expressions into a tensor of shape `in` broadcast (numpy rules) to a domain indexed by `idx`.
std::vector<Expr> broadcastIndex(const Shape& in, const Shape& domain, const std::vector<Expr>& idx);
// The expression of a pointwise op over its (already lowered) inputs; nullopt when `n` is not pointwise.
std::optional<Expr> pointwiseExpr(const Node& n, const std::vector<Expr>& in, DType outType);
bool isPointwiseOp(const std::string& op);
// Output `output` (> 0) of a pointwise op when it does not depend on the inputs (Dropout's mask in inference).
std::optional<Expr> pointwiseOutputExpr(const Node& n, size_t output);
// Reduce{Sum,Mean,Max,Min}, Softmax, LogSoftmax, LayerNormalization, training-mode BatchNormalization.
bool isReductionNode(const Node& n);
// Nested loops (outermost first) around `body`; returns the outermost statement.
Stmt loopNest(const std::vector<std::string>& vars, const Shape& extents, Stmt body, bool reduction = false);
std::vector<Expr> vars(const std::vector<std::string>& names);
std::vector<std::string> names(const std::string& prefix, size_t n);  // prefix0, prefix1, ...
// prefix followed by n ("v3"); appends, as GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
std::string numbered(std::string prefix, size_t n);
// Accumulation type: f32 for 16-bit floats, else the type itself.
DType accType(DType t);
// The input index a Transpose node `n` (input shape `in`) reads for its output index `idx`.
std::vector<Expr> transposeIndex(const Node& n, const Shape& in, const std::vector<Expr>& idx);
// Stores every group output with shape `domain` through the emitter; others are left to the caller.
void storeOutputs(Emitter& em, const std::set<const Value*>& skip = {});

// Shared by the lowerings with an anchor op (gemm, conv, pool, LRN), defined in lower_linalg.cpp.
// Refuses pointwise prologues: the anchor's inputs must come from outside the group.
void requireExternalInputs(LowerCtx& ctx, const Node& anchor);
// Runs the pointwise epilogue on `result` (the anchor's output at the current point of the nest `outVars` x
// `domain`), stores the group's outputs in `body` and makes the nest the kernel's body.
void finish(LowerCtx& ctx, const Node& anchor, const std::vector<std::string>& outVars, const Shape& domain,
            std::shared_ptr<BlockStmt> body, Expr result);
// begin <= i < end
Expr inBounds(const Expr& i, int64_t begin, int64_t end);
// Names of the spatial loops: ow; oh, ow; od, oh, ow; beyond three axes o0, o1, ...
std::vector<std::string> spatialNames(const std::string& prefix, size_t rank);

// Shared by the data-movement lowerings (lower_movement.cpp). The value of `v` at indices `idx`, through an
// emitter at that point: in-group producers (a pointwise prologue, another data-movement op) are computed there.
Expr valueAt(Emitter& em, const Value* v, std::vector<Expr> idx);
// i clamped into 0..extent-1.
Expr clampIndex(const Expr& i, int64_t extent);
// A Resize or Upsample node's output at the emitter's point (lower_resize.cpp).
Expr resizeExpr(LowerCtx& ctx, const Node& n, Emitter& em);

void lowerPointwise(LowerCtx& ctx);
void lowerRowReduction(LowerCtx& ctx);
void lowerGemm(LowerCtx& ctx, const Node& anchor);
void lowerConv(LowerCtx& ctx, const Node& anchor);
// A 1 x 1 conv on the GPU as a batched gemm over the image planes (kind "gemm"); false, with nothing changed,
// where the form does not apply (lower_linalg.cpp says when).
bool lowerPointwiseConv(LowerCtx& ctx, const Node& anchor);
void lowerConvTranspose(LowerCtx& ctx, const Node& anchor);
void lowerPool(LowerCtx& ctx, const Node& anchor);
void lowerLrn(LowerCtx& ctx, const Node& anchor);
void lowerCumSum(LowerCtx& ctx, const Node& anchor);  // lower_scan.cpp
void lowerScatter(LowerCtx& ctx, const Node& anchor);  // lower_scatter.cpp: ScatterElements, Scatter, ScatterND
void lowerDataMovement(LowerCtx& ctx, const Node& anchor);
// Two MatMuls around one Softmax: fusion's attention pattern (lower_attention.cpp).
bool isAttentionGroup(const std::vector<const Node*>& nodes);
void lowerAttention(LowerCtx& ctx);

}  // namespace tessera::kernel
