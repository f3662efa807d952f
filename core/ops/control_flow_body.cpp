#include "ops/control_flow_body.h"

#include <cstring>

#include "ir/error.h"
#include "ops/eval_graph.h"
#include "ops/infer.h"
#include "ops/op_support.h"
#include "ops/specialize.h"

namespace tessera::ops {

const Graph& bodyAttr(const Node& node, const std::string& name) {
  const Attribute* a = node.attr(name);
  if (!a || a->kind() != AttrKind::Graph) failNode(node, "attribute '" + name + "' must be a graph");
  return a->g();
}

Graph specializeBody(const Node& node, const std::string& name, const Graph& body,
                     const std::vector<TensorType>& types, const std::vector<const Tensor*>& data, bool evaluate) {
  if (types.size() != body.inputs().size())
    failNode(node, name + " has " + std::to_string(body.inputs().size()) + " inputs but is given " +
                       std::to_string(types.size()));
  Graph g = body.clone();
  std::vector<Value*> inputs = g.inputs();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i < data.size() && data[i]) g.bindInput(inputs[i], *data[i]);
    else inputs[i]->setType(types[i]);
  }
  try {
    if (!evaluate) inferTypes(g);
    else inferSpecializing(g, [] { return std::vector<Tensor>{}; });  // every input is bound: nothing to feed
  } catch (const Error& e) {
    failNode(node, name + ": " + e.what());
  }
  return g;
}

namespace {
// A body's inference failed only because a shape operand is not a compile-time constant (it follows from a
// formal input's value): the model's declared output types then stand in.
bool needsValues(const Error& e) {
  return std::string(e.what()).find("must be a constant known at compile time") != std::string::npos;
}
}  // namespace

std::optional<std::vector<TensorType>> inferBodyOutputs(const InferContext& ctx, const std::string& name,
                                                        const std::vector<TensorType>& formal) {
  const Graph& body = bodyAttr(ctx.node(), name);
  size_t captures = body.numCaptures();
  if (ctx.numInputs() < captures) ctx.error(name + " reads " + std::to_string(captures) + " outer values");
  std::vector<TensorType> types = formal;
  std::vector<const Tensor*> data(formal.size(), nullptr);
  for (size_t c = 0; c < captures; ++c) {
    size_t in = ctx.numInputs() - captures + c;
    types.push_back(ctx.input(in));
    data.push_back(ctx.constantInput(in));
  }
  try {
    Graph g = specializeBody(ctx.node(), name, body, types, data);
    std::vector<TensorType> out;
    for (Value* v : g.outputs()) out.push_back(v->type());
    return out;
  } catch (const Error& e) {
    if (needsValues(e)) return std::nullopt;
    throw;
  }
}

std::vector<TensorType> declaredOutputTypes(const Graph& body) {
  std::vector<TensorType> out;
  for (Value* v : body.outputs()) out.push_back(v->type());
  return out;
}

BodyRunner::BodyRunner(const Node& node, std::string name, const std::vector<const Tensor*>& inputs)
    : node_(node), name_(std::move(name)), body_(bodyAttr(node, name_)) {
  size_t captures = body_.numCaptures();
  if (inputs.size() < captures) failNode(node, name_ + " reads more outer values than the node passes");
  captures_.assign(inputs.end() - std::ptrdiff_t(captures), inputs.end());
  for (const Tensor* t : captures_)
    if (!t) failNode(node, name_ + " reads an outer value that has no data");
}

std::vector<Tensor> BodyRunner::run(const std::vector<Tensor>& formal) {
  std::vector<TensorType> types;
  for (const Tensor& t : formal) types.push_back(t.type());
  for (const Tensor* t : captures_) types.push_back(t->type());
  std::vector<const Tensor*> data(formal.size(), nullptr);
  data.insert(data.end(), captures_.begin(), captures_.end());
  if (!perRun_ && (!typed_ || typedFor_ != types)) {
    try {
      typed_.emplace(specializeBody(node_, name_, body_, types, data));
      typedFor_ = types;
    } catch (const Error& e) {
      if (!needsValues(e)) throw;
      perRun_ = true;
    }
  }
  if (!perRun_) return evalBody(*typed_, formal);
  for (size_t i = 0; i < formal.size(); ++i) data[i] = &formal[i];
  return evalBody(specializeBody(node_, name_, body_, types, data, true), {});
}

std::vector<Tensor> BodyRunner::evalBody(const Graph& g, const std::vector<Tensor>& inputs) const {
  try {
    return evalGraph(g, inputs).outputs;
  } catch (const Cancelled&) {
    throw;
  } catch (const Error& e) {
    failNode(node_, name_ + ": " + e.what());
  }
}

namespace {
// Writes `piece` as index `pos` along `axis` of `dst` (whose shape is piece's with an extent inserted at axis).
void placeSlice(Tensor& dst, int64_t axis, int64_t pos, const Tensor& piece) {
  AxisSplit sp = splitAtAxis(dst.shape(), axis);
  size_t run = size_t(sp.inner) * dtypeSize(dst.dtype());
  if (run == 0) return;
  std::byte* d = dst.mutableBytes().data();
  const std::byte* p = piece.bytes().data();
  for (int64_t o = 0; o < sp.outer; ++o)
    std::memcpy(d + size_t(o * sp.extent + pos) * run, p + size_t(o) * run, run);
}

}  // namespace

Tensor stackSlices(const Node& node, const std::vector<Tensor>& pieces, const TensorType& type, int64_t axis,
                   bool reverse) {
  int64_t count = type.shape[size_t(axis)];
  if (int64_t(pieces.size()) != count)
    failNode(node, "ran " + std::to_string(pieces.size()) + " iterations, but its scan outputs were given a static "
                   "length of " + std::to_string(count) + " (the trip count)");
  Tensor out(type.dtype, type.shape);
  Shape pieceShape = type.shape;
  pieceShape.erase(pieceShape.begin() + axis);
  for (int64_t t = 0; t < count; ++t) {
    if (pieces[size_t(t)].type() != TensorType{type.dtype, pieceShape})
      failNode(node, "iteration " + std::to_string(t) + " gives a scan output of " + pieces[size_t(t)].type().toString() +
                     ", not " + TensorType{type.dtype, pieceShape}.toString());
    placeSlice(out, axis, reverse ? count - 1 - t : t, pieces[size_t(t)]);
  }
  return out;
}

Tensor sliceAt(const Tensor& x, int64_t axis, int64_t index) {
  Shape shape = x.shape();
  std::vector<int64_t> strides = stridesOf(shape);
  int64_t offset = index * strides[size_t(axis)];
  shape.erase(shape.begin() + axis);
  strides.erase(strides.begin() + axis);
  return stridedCopy(x, {x.dtype(), shape}, strides, offset);
}

}  // namespace tessera::ops
