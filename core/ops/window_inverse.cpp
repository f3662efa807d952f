// The inverses of sliding windows: Col2Im (sums columns of window taps back into an image: input [N, C * prod(block),
// L] with image_shape and block_shape as shape inputs) and MaxUnpool (scatters pooled values back to the flat
// positions MaxPool's indices name, zeros elsewhere).
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

std::vector<int64_t> perAxisAttr(const Node& node, const char* name, size_t rank, int64_t fallback) {
  std::vector<int64_t> v = node.attrInts(name, std::vector<int64_t>(rank, fallback));
  if (v.size() != rank)
    failNode(node, std::string("attribute '") + name + "' needs " + std::to_string(rank) + " values");
  return v;
}

// --- Col2Im ---

struct Col2ImGeometry {
  std::vector<int64_t> image, block, strides, dilations, padsBegin, blocks;  // blocks: window positions per axis
};

Col2ImGeometry col2imGeometry(const Node& node, const Shape& x, std::vector<int64_t> image,
                              std::vector<int64_t> block) {
  size_t r = image.size();
  if (block.size() != r || r == 0) failNode(node, "image_shape and block_shape must have the same length >= 1");
  Col2ImGeometry g{image, block, perAxisAttr(node, "strides", r, 1), perAxisAttr(node, "dilations", r, 1), {}, {}};
  for (size_t d = 0; d < r; ++d)
    if (image[d] < 1 || block[d] < 1 || g.strides[d] < 1 || g.dilations[d] < 1)
      failNode(node, "image_shape, block_shape, strides and dilations must be positive");
  std::vector<int64_t> pads = node.attrInts("pads", std::vector<int64_t>(2 * r, 0));
  if (pads.size() != 2 * r) failNode(node, "attribute 'pads' needs 2 values per spatial axis");
  int64_t L = 1, K = 1;
  for (size_t d = 0; d < r; ++d) {
    g.padsBegin.push_back(pads[d]);
    int64_t span = image[d] + pads[d] + pads[r + d] - g.dilations[d] * (block[d] - 1) - 1;
    g.blocks.push_back(span < 0 ? 0 : span / g.strides[d] + 1);
    L *= g.blocks.back();
    K *= block[d];
  }
  if (x.size() != 3 || x[1] % K || x[2] != L)
    failNode(node,
             "input " + shapeToString(x) + " must be [N, C * " + std::to_string(K) + ", " + std::to_string(L) + "]");
  return g;
}

void inferCol2Im(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Numeric);
  std::vector<int64_t> image = constantInts(ctx, 1, "image_shape"), block = constantInts(ctx, 2, "block_shape");
  const Shape& x = ctx.input(0).shape;
  col2imGeometry(ctx.node(), x, image, block);
  Shape out{x[0], x[1] / numElements(block)};
  out.insert(out.end(), image.begin(), image.end());
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

std::vector<Tensor> evalCol2Im(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  const Shape& x = in[0]->shape();
  Col2ImGeometry g = col2imGeometry(node, x, in[1]->toInts(), in[2]->toInts());
  int64_t K = numElements(g.block), L = x[2], planes = x[0] * (x[1] / K), imagePlane = numElements(g.image);
  std::vector<int64_t> kStr = stridesOf(g.block), lStr = stridesOf(g.blocks), iStr = stridesOf(g.image);
  std::vector<double> v = in[0]->toDoubles(), y(size_t(planes * imagePlane), 0.0);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t l = 0; l < L; ++l) {
      int64_t at = 0;  // image offset of tap k of block l, or -1 in the padding
      for (size_t d = 0; d < g.image.size() && at >= 0; ++d) {
        int64_t p = (l / lStr[d] % g.blocks[d]) * g.strides[d] + (k / kStr[d] % g.block[d]) * g.dilations[d] -
                    g.padsBegin[d];
        at = p < 0 || p >= g.image[d] ? -1 : at + p * iStr[d];
      }
      if (at < 0) continue;
      for (int64_t p = 0; p < planes; ++p) y[size_t(p * imagePlane + at)] += v[size_t((p * K + k) * L + l)];
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

// --- MaxUnpool(X, I, output_shape?) ---

Shape unpoolShape(const Node& node, const Shape& x, const Tensor* outputShape) {
  if (outputShape && outputShape->numElements()) return outputShape->toInts();
  size_t r = x.size() - 2;
  std::vector<int64_t> kernel = node.attrInts("kernel_shape"), strides = perAxisAttr(node, "strides", r, 1);
  std::vector<int64_t> pads = node.attrInts("pads", std::vector<int64_t>(2 * r, 0));
  if (kernel.size() != r || pads.size() != 2 * r) failNode(node, "kernel_shape and pads must match the spatial rank");
  for (size_t d = 0; d < r; ++d)
    if (kernel[d] < 1 || strides[d] < 1) failNode(node, "kernel_shape and strides must be positive");
  Shape out{x[0], x[1]};
  for (size_t d = 0; d < r; ++d) out.push_back((x[2 + d] - 1) * strides[d] + kernel[d] - pads[d] - pads[r + d]);
  return out;
}

void inferMaxUnpool(InferContext& ctx) {
  requireDType(ctx, 1, {DType::I64});
  if (ctx.input(0).shape.size() < 3 || ctx.input(1).shape != ctx.input(0).shape)
    ctx.error("X " + ctx.input(0).toString() + " must be [N, C, spatial...] and I of its shape");
  const Tensor* os = ctx.hasInput(2) ? &ctx.requireConstant(2, "output_shape") : nullptr;
  ctx.outputs[0] = {ctx.input(0).dtype, unpoolShape(ctx.node(), ctx.input(0).shape, os)};
}

// The indices address the default-shaped output (the pooled input's shape); a larger output_shape pads that
// result with zeros at the end of each dim, as ONNX's reference does.
std::vector<Tensor> evalMaxUnpool(const Node& node, const std::vector<const Tensor*>& in,
                                  const std::vector<TensorType>& types) {
  Shape inner = unpoolShape(node, in[0]->shape(), nullptr);
  const Shape& outer = types[0].shape;
  std::vector<int64_t> innerStr = stridesOf(inner), outerStr = stridesOf(outer);
  Tensor out(types[0].dtype, outer);
  std::vector<double> x = in[0]->toDoubles();
  std::vector<int64_t> idx = in[1]->toInts();
  int64_t count = numElements(inner);
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0 || idx[i] >= count)
      failNode(node, "index " + std::to_string(idx[i]) + " is outside the unpooled " + shapeToString(inner));
    int64_t to = 0;
    for (size_t d = 0; d < inner.size() && to >= 0; ++d) {
      int64_t c = idx[i] / innerStr[d] % inner[d];
      to = c >= outer[d] ? -1 : to + c * outerStr[d];
    }
    if (to >= 0) out.setDouble(to, x[i]);
  }
  return {out};
}

}  // namespace

void registerWindowInverseOps(OpRegistry& r) {
  auto other = OpCategory::Other;  // no kernel template (see README)
  addOp(r, {"Col2Im", other, "sum columns of window taps back into an image", 3, 3, 1, 1, {1, 2}, inferCol2Im,
            evalCol2Im});
  addOp(r, {"MaxUnpool", other, "scatter pooled values to MaxPool's indices, zeros elsewhere", 2, 3, 1, 1, {2},
            inferMaxUnpool, evalMaxUnpool});
}

}  // namespace tessera
