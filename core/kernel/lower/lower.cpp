#include "kernel/lower/lower.h"

#include "ir/error.h"
#include "kernel/lower/lower_context.h"
#include "kernel/visit.h"
#include "ops/registry.h"

namespace tessera::kernel {
namespace {

// The pool template accumulates a max or a mean (LpPool has none; pools have no sum or min).
bool isPoolOp(const std::string& op) {
  const OpTraits& t = opTraits(op);
  return t.pool != PoolKind::None && hasReductionKernel(t);
}
// Views and reindexing ops: lower_movement maps each output index onto the input (Pad, which fills, is not one).
// Resize and Upsample are fusion's opaque ops (a group alone) whose nest is a data-movement one: each output
// element reads its taps of the input.
bool isDataMovementOp(const std::string& op) {
  return opTraits(op).movement != MovementKind::None || op == "Resize" || op == "Upsample";
}

// The node that decides the kernel's structure, and the kind it gives.
std::pair<const Node*, std::string> anchorOf(const LowerCtx& ctx) {
  if (isAttentionGroup(ctx.nodes)) return {ctx.nodes.front(), "attention"};
  for (const Node* n : ctx.nodes)
    if (n->op() == "MatMul" || n->op() == "Gemm") return {n, "gemm"};
  for (const Node* n : ctx.nodes)
    if (n->op() == "ScatterElements" || n->op() == "Scatter" || n->op() == "ScatterND") return {n, "scatter"};
  for (const Node* n : ctx.nodes)
    if (n->op() == "Conv" || n->op() == "ConvTranspose") return {n, "conv"};
  for (const Node* n : ctx.nodes)  // LRN is a window over the channels, CumSum one along its axis: a pool's nest
    if (isPoolOp(n->op()) || n->op() == "LRN" || n->op() == "CumSum") return {n, "pool"};
  for (const Node* n : ctx.nodes)
    if (isReductionNode(*n)) return {n, "reduction"};
  for (const Node* n : ctx.nodes)
    if (isDataMovementOp(n->op())) return {n, "data-movement"};
  for (const Node* n : ctx.nodes)
    if (!isPointwiseOp(n->op())) ctx.fail(*n, "not supported by the kernel lowering");
  return {ctx.nodes.front(), "pointwise"};
}

// Inputs read only for their constant value (Reduce axes, Slice starts) are not kernel parameters.
void dropUnreadInputs(Kernel& k) {
  std::set<std::string> read;
  walk(k.body, [&](StmtNode& s) {
    mapDirectExprs(s, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& n) {
        if (n.kind == ExprKind::Load) read.insert(static_cast<const Load&>(n).buffer);
      });
      return e;
    });
  });
  std::erase_if(k.buffers, [&](const Buffer& b) { return b.role == BufferRole::Input && !read.count(b.name); });
}

}  // namespace

Kernel lowerToLoops(const Graph& g, const KernelSpec& spec) {
  Kernel k;
  k.id = spec.id;
  k.nodeIds = spec.nodeIds;
  LowerCtx ctx(g, k, spec);
  auto [anchor, kind] = anchorOf(ctx);
  k.kind = kind;
  // The precision policy follows the graph's op (PyTorch's is per op): a conv lowered as a gemm stays a conv.
  k.allowTf32 = (kind == "conv" && spec.tf32.conv) || (kind == "gemm" && spec.tf32.matmul);
  k.machine = spec.machine;
  if (kind == "attention") lowerAttention(ctx);
  else if (kind == "gemm") lowerGemm(ctx, *anchor);
  else if (kind == "conv" && anchor->op() == "ConvTranspose") lowerConvTranspose(ctx, *anchor);
  else if (kind == "conv" && lowerPointwiseConv(ctx, *anchor)) k.kind = "gemm";
  else if (kind == "conv") lowerConv(ctx, *anchor);
  else if (kind == "pool" && anchor->op() == "LRN") lowerLrn(ctx, *anchor);
  else if (kind == "pool" && anchor->op() == "CumSum") lowerCumSum(ctx, *anchor);
  else if (kind == "pool") lowerPool(ctx, *anchor);
  else if (kind == "reduction") lowerRowReduction(ctx);
  else if (kind == "data-movement") lowerDataMovement(ctx, *anchor);
  else if (kind == "scatter") lowerScatter(ctx, *anchor);
  else lowerPointwise(ctx);
  dropUnreadInputs(k);
  return k;
}

}  // namespace tessera::kernel
