#include "fusion/space.h"

#include <algorithm>

#include "ops/broadcast.h"
#include "ops/registry.h"
#include "ops/specialize.h"
#include "passes/rewrite.h"

namespace tessera {
namespace {

Shape outShape(const Node& n) { return n.output(0) ? n.output(0)->shape() : Shape{}; }
Shape inShape(const Node& n) { return n.input(0) ? n.input(0)->shape() : Shape{}; }

std::vector<int64_t> normalized(const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes)
    if (auto n = normalizeAxis(a, int64_t(rank))) out.push_back(*n);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> range(int64_t from, size_t rank) {
  std::vector<int64_t> out;
  for (int64_t a = std::max<int64_t>(from, 0); a < int64_t(rank); ++a) out.push_back(a);
  return out;
}

// Reduced axes of a Reduce* node: the constant `axes` input, else all axes (unless noop_with_empty_axes).
std::vector<int64_t> reduceAxes(const Node& n, size_t rank) {
  if (const Tensor* t = constantValue(n.input(1))) return normalized(t->toInts(), rank);
  if (n.hasAttr("axes")) return normalized(n.attrInts("axes"), rank);
  if (n.attrInt("noop_with_empty_axes", 0)) return {};
  return range(0, rank);
}

Space reductionSpace(const Node& n) {
  Space s{SpaceKind::Reduction, inShape(n), {}, outShape(n), false, n.op()};
  size_t rank = s.shape.size();
  const std::string& op = n.op();
  const OpTraits& t = opTraits(op);
  if (t.reduce != ReduceKind::None && t.pool == PoolKind::None) {  // Reduce*: axes input or attribute
    s.axes = reduceAxes(n, rank);
  } else if (op == "LayerNormalization") {
    auto a = normalizeAxis(n.attrInt("axis", -1), int64_t(rank));
    s.axes = range(a.value_or(int64_t(rank) - 1), rank);
  } else if (t.pool == PoolKind::Global) {
    s.axes = range(2, rank);
  } else if (t.pool == PoolKind::Window) {
    s.axes = range(2, rank);
    s.windowed = true;
  } else {  // Softmax, LogSoftmax, ArgMax, ArgMin and other single-axis reductions
    s.axes = normalized({n.attrInt("axis", -1)}, rank);
  }
  if (t.rowNormalization) {
    s.reduced = s.shape;  // the row results are broadcast back over the row
    for (int64_t a : s.axes) s.reduced[size_t(a)] = 1;
  }
  return s;
}

bool broadcastsTo(const Shape& small, const Shape& big) {
  auto b = broadcastShapes({small, big});
  return b && *b == big;
}

double ratio(const Shape& big, const Shape& small) {
  int64_t s = numElements(small);
  return s > 0 ? double(numElements(big)) / double(s) : 1.0;
}

bool isMatrixOp(SpaceKind k) { return k == SpaceKind::Gemm || k == SpaceKind::Conv; }

MergeCheck legal(Space merged, std::string rule, std::string reason, double recompute = 1.0) {
  return {std::move(merged), std::move(rule), std::move(reason), recompute};
}
MergeCheck illegal(std::string rule, std::string reason) { return {std::nullopt, std::move(rule), std::move(reason)}; }

std::string sh(const Shape& s) { return shapeToString(s); }

MergeCheck pointwiseIntoPointwise(const Space& p, const Space& c) {
  if (p.shape == c.shape) return legal(c, "pointwise-chain", "both are pointwise over " + sh(c.shape));
  if (broadcastsTo(p.shape, c.shape)) {
    double f = ratio(c.shape, p.shape);
    return legal(c, "pointwise-chain",
                 "the group's space " + sh(p.shape) + " broadcasts to " + sh(c.shape) + ", so its work repeats " +
                     std::to_string(int64_t(f)) + " times",
                 f);
  }
  if (broadcastsTo(c.shape, p.shape))
    return legal(p, "pointwise-chain", sh(c.shape) + " is a broadcast slice of the group's space " + sh(p.shape));
  return illegal("iteration-space-mismatch", "the consumer writes " + sh(c.shape) + ", which is not a broadcast of "
                                                 "the group's space " + sh(p.shape));
}

// Pools (windowed or global) and LRN are lowered as a window nest that reads its input from memory.
bool poolTemplate(const Space& s) {
  return s.windowed || s.anchorOp.find("Pool") != std::string::npos || s.anchorOp == "LRN";
}

MergeCheck intoReduction(const Space& p, const Space& c) {
  if (p.kind == SpaceKind::Pointwise && poolTemplate(c))
    return illegal("no-template", "the " + describeSpace(c) + " (" + c.anchorOp + ") reads its input from memory; "
                                  "it has no prologue slot for the pointwise group over " + sh(p.shape));
  if (p.kind == SpaceKind::Pointwise) {
    if (p.shape == c.shape) return legal(c, "prologue", "the pointwise group over " + sh(p.shape) + " feeds the " +
                                                            describeSpace(c) + " as its prologue");
    if (broadcastsTo(p.shape, c.shape))
      return legal(c, "prologue", "the pointwise group over " + sh(p.shape) + " is broadcast into the " +
                                      describeSpace(c), ratio(c.shape, p.shape));
    return illegal("iteration-space-mismatch",
                   "the pointwise group over " + sh(p.shape) + " does not cover the " + describeSpace(c));
  }
  // Both reductions.
  if (p.shape == c.shape && p.axes == c.axes && !p.windowed && !c.windowed)
    return legal(p, "same-rows", "both reduce " + sh(c.shape) + " over the same axes");
  if (p.shape == c.shape)
    return illegal("iteration-space-mismatch", "the " + describeSpace(p) + " and the " + describeSpace(c) +
                                                   " need different tilings of one tensor");
  return illegal("reduction-after-reduction", "the " + describeSpace(c) + " reads the result of the " +
                                                  describeSpace(p) + ", a changed shape");
}

MergeCheck reductionIntoPointwise(const Space& p, const Space& c) {
  if (c.shape == p.shape || c.shape == p.reduced || broadcastsTo(c.shape, p.reduced) ||
      (!p.windowed && broadcastsTo(c.shape, p.shape)))
    return legal(p, "same-rows", "the pointwise op over " + sh(c.shape) + " runs along the rows of the " +
                                     describeSpace(p));
  return illegal("iteration-space-mismatch", "the pointwise op writes " + sh(c.shape) + ", neither the rows " +
                                                 sh(p.shape) + " nor the results " + sh(p.reduced) + " of the " +
                                                 describeSpace(p));
}

}  // namespace

Space nodeSpace(const Node& node) {
  const OpSchema* schema = OpRegistry::instance().find(node.op());
  OpCategory cat = schema ? schema->category : OpCategory::Other;
  if (isSpecialized(node)) cat = OpCategory::Other;  // a data-dependent shape: alone, on the host (ops/specialize.h)
  switch (cat) {
    case OpCategory::Pointwise: return {SpaceKind::Pointwise, outShape(node), {}, {}, false, node.op()};
    case OpCategory::Reduction:  // one the lowering has no nest for is a host group of its own
      if (!hasReductionKernel(opTraits(node.op()))) return {SpaceKind::Opaque, outShape(node), {}, {}, false, node.op()};
      return reductionSpace(node);
    case OpCategory::Matmul: return {SpaceKind::Gemm, outShape(node), {}, {}, false, node.op()};
    case OpCategory::Conv: return {SpaceKind::Conv, outShape(node), {}, {}, false, node.op()};
    case OpCategory::DataMovement:  // Pad fills: no movement kind, no data-movement nest, a host group alone
      if (opTraits(node.op()).movement == MovementKind::None) return {SpaceKind::Opaque, outShape(node), {}, {}, false, node.op()};
      return {SpaceKind::Move, outShape(node), {}, {}, false, node.op()};
    default: return {SpaceKind::Opaque, outShape(node), {}, {}, false, node.op()};
  }
}

std::optional<MergeCheck> transposeIntoConv(const Node& producer, const Node& consumer, const Space& convGroup) {
  if (producer.op() != "Transpose" || consumer.op() != "Conv" || convGroup.kind != SpaceKind::Conv) return std::nullopt;
  const Value* t = producer.output(0);
  if (consumer.input(0) != t || t->isGraphOutput()) return std::nullopt;
  for (const Use& u : t->uses())
    if (u.node != &consumer) return std::nullopt;
  return legal(convGroup, "input-transpose",
               "the Transpose's index map folds into the " + describeSpace(convGroup) +
                   "'s input loads, so the conv reads " + sh(producer.input(0)->shape()) + " where it lies");
}

std::string describeSpace(const Space& s) {
  switch (s.kind) {
    case SpaceKind::Pointwise: return "pointwise space " + sh(s.shape);
    case SpaceKind::Gemm: return s.anchorOp + " " + sh(s.shape);
    case SpaceKind::Conv: return s.anchorOp + " " + sh(s.shape);
    case SpaceKind::Move: return "data movement " + sh(s.shape);
    case SpaceKind::Opaque: return s.anchorOp + " (opaque)";
    case SpaceKind::Attention: return "attention kernel " + sh(s.shape);
    case SpaceKind::Reduction: {
      std::string axes;
      for (int64_t a : s.axes) {
        if (!axes.empty()) axes += ",";
        axes += std::to_string(a);
      }
      bool row = !s.axes.empty() && s.axes.back() + 1 == int64_t(s.shape.size());
      std::string what = s.windowed ? "window reduction" : row ? "row reduction" : "column reduction";
      return what + " (" + s.anchorOp + ") of " + sh(s.shape) + " over axis " + axes;
    }
  }
  return "?";
}

MergeCheck mergeSpaces(const Space& p, const Space& c) {
  if (p.kind == SpaceKind::Attention || c.kind == SpaceKind::Attention)
    return illegal("attention", "the attention kernel fuses its own pattern only");
  if (p.kind == SpaceKind::Opaque || c.kind == SpaceKind::Opaque) {
    const Space& o = p.kind == SpaceKind::Opaque ? p : c;
    return illegal("no-template", o.anchorOp + " is opaque: no kernel template takes other ops with it");
  }
  if (p.kind == SpaceKind::Move && c.kind == SpaceKind::Move)
    return legal(c, "index-chain", "both only move data, so their index maps compose into one copy");
  if (p.kind == SpaceKind::Move || c.kind == SpaceKind::Move) {
    const Space& m = p.kind == SpaceKind::Move ? p : c;
    const Space& o = p.kind == SpaceKind::Move ? c : p;
    return illegal("no-template", "the data movement (" + m.anchorOp + ") has no template slot in the " +
                                      describeSpace(o) + "; it is a separate copy");
  }
  if (isMatrixOp(p.kind) && isMatrixOp(c.kind))
    return illegal("gemm-into-gemm", "the " + describeSpace(p) + " and the " + describeSpace(c) +
                                         " each need their own tiled product loop");
  if (isMatrixOp(p.kind) && c.kind == SpaceKind::Reduction)
    return illegal("gemm-into-reduction", "the " + describeSpace(p) + " tiles its output in blocks, but the " +
                                              describeSpace(c) + " needs whole rows");
  if (isMatrixOp(c.kind))
    return illegal("no-template", "the " + describeSpace(c) + " template reads its operands from memory; it has "
                                  "no prologue slot for the " + describeSpace(p));
  if (isMatrixOp(p.kind)) {
    if (c.shape == p.shape) return legal(p, "epilogue", "pointwise over the " + describeSpace(p) + " output tile");
    return illegal("iteration-space-mismatch", "the epilogue would write " + sh(c.shape) + " but the " +
                                                   describeSpace(p) + " tiles " + sh(p.shape));
  }
  if (c.kind == SpaceKind::Reduction) return intoReduction(p, c);
  if (p.kind == SpaceKind::Reduction) return reductionIntoPointwise(p, c);
  return pointwiseIntoPointwise(p, c);
}

}  // namespace tessera
