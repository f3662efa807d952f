#include "frontend/onnx/upgrade.h"

#include <algorithm>
#include <limits>

#include "ir/error.h"

namespace tessera::onnxio {

namespace {

[[noreturn]] void nodeError(const Node& n, const std::string& message) {
  fail("node '" + n.id() + "' (" + n.op() + "): " + message);
}

// Puts `data` into input `slot` as a fresh initializer named after the node and the attribute.
void attachOperand(Graph& g, Node* n, const std::string& attr, size_t slot, Tensor data) {
  if (n->input(slot)) nodeError(*n, "has both attribute '" + attr + "' and input " + std::to_string(slot));
  Value* v = g.addInitializer(g.uniqueValueName(n->id() + "_" + attr), std::move(data));
  g.setNodeInput(n, slot, v);
  n->attrs().erase(attr);
}

// An int or ints attribute becomes a 1-D i64 input.
void intsToInput(Graph& g, Node* n, const std::string& attr, size_t slot) {
  const Attribute* a = n->attr(attr);
  if (!a) return;
  std::vector<int64_t> values;
  if (a->kind() == AttrKind::Int) values = {a->i()};
  else if (a->kind() == AttrKind::Ints) values = a->ints();
  else nodeError(*n, "attribute '" + attr + "' must be ints");
  attachOperand(g, n, attr, slot, Tensor::fromInts(DType::I64, {int64_t(values.size())}, values));
}

// A float attribute becomes a scalar input of `dtype`.
void floatToInput(Graph& g, Node* n, const std::string& attr, size_t slot, DType dtype) {
  const Attribute* a = n->attr(attr);
  if (!a) return;
  if (a->kind() != AttrKind::Float && a->kind() != AttrKind::Int) nodeError(*n, "attribute '" + attr + "' must be a float");
  attachOperand(g, n, attr, slot, Tensor::scalar(dtype, a->f()));
}

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Operands that moved from attributes to inputs, with the first opset that has the input form.
struct MovedOperand {
  const char* op;
  int64_t inputSince;
  const char* attr;
  size_t slot;
};
constexpr MovedOperand kMovedOperands[] = {
    {"Reshape", 5, "shape", 1},   {"Slice", 10, "starts", 1},   {"Slice", 10, "ends", 2},
    {"Slice", 10, "axes", 3},     {"TopK", 10, "k", 1},         {"Pad", 11, "pads", 1},
    {"Split", 13, "split", 1},    {"Squeeze", 13, "axes", 1},   {"Unsqueeze", 13, "axes", 1},
    {"ReduceSum", 13, "axes", 1},
};

// Constant's value_float / value_floats / value_int / value_ints forms become the tensor `value`.
void upgradeConstant(Node* n) {
  Attributes& a = n->attrs();
  auto take = [&](const char* name, auto make) {
    auto it = a.find(name);
    if (it == a.end()) return;
    Tensor t = make(it->second);
    a.erase(it);
    a["value"] = t;
  };
  take("value_float", [](const Attribute& x) { return Tensor::scalar(DType::F32, x.f()); });
  take("value_int", [](const Attribute& x) { return Tensor::scalar(DType::I64, double(x.i())); });
  take("value_floats", [](const Attribute& x) {
    return Tensor::fromDoubles(DType::F32, {int64_t(x.floats().size())}, x.floats());
  });
  take("value_ints", [](const Attribute& x) {
    return Tensor::fromInts(DType::I64, {int64_t(x.ints().size())}, x.ints());
  });
  for (const char* s : {"value_string", "value_strings", "sparse_value"})
    if (a.count(s)) nodeError(*n, std::string("attribute '") + s + "' is not supported (string or sparse constant)");
}

void upgradeBatchNorm(Node* n) {
  if (n->hasAttr("spatial") && n->attr("spatial")->kind() == AttrKind::Int && n->attr("spatial")->i() == 0)
    nodeError(*n, "spatial=0 (per-element statistics, opset < 9) is not supported");
  for (const char* s : {"spatial", "consumed_inputs", "is_test"}) n->attrs().erase(s);
}

// Opsets 1-6: `consumed_inputs` (an in-place hint) goes; the legacy broadcast of binary ops (B matched to a
// suffix of A's shape, or aligned at `axis`) is numpy's when there is no axis; Cast named its target type;
// Pad called its pads `paddings`; Concat's axis defaulted to 1 before opset 4.
void upgradeLegacy(Node* n, int64_t opset) {
  Attributes& a = n->attrs();
  a.erase("consumed_inputs");
  if (opset < 7 && a.count("broadcast") && n->op() != "Gemm") {
    if (a.count("axis") && a.at("broadcast").kind() == AttrKind::Int && a.at("broadcast").i() != 0)
      nodeError(*n, "broadcasting input 1 at axis " + std::to_string(a.at("axis").i()) + " (opset " +
                        std::to_string(opset) + ") is not supported; numpy broadcasting (opset 7) is");
    a.erase("broadcast");
    a.erase("axis");
  }
  if (n->op() == "Cast" && a.count("to") && a.at("to").kind() == AttrKind::String) {
    static const std::pair<const char*, int64_t> kNames[] = {
        {"FLOAT", 1},  {"UINT8", 2},   {"INT8", 3},   {"UINT16", 4}, {"INT16", 5},   {"INT32", 6},  {"INT64", 7},
        {"BOOL", 9},   {"FLOAT16", 10}, {"DOUBLE", 11}, {"UINT32", 12}, {"UINT64", 13}};
    std::string name = a.at("to").s();
    auto it = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& p) { return name == p.first; });
    if (it == std::end(kNames)) nodeError(*n, "attribute 'to' names type '" + name + "', which Tessera does not hold");
    a["to"] = it->second;
  }
  if (n->op() == "Pad" && a.count("paddings")) {
    a["pads"] = a.at("paddings");
    a.erase("paddings");
  }
  if (n->op() == "Concat" && opset < 4 && !a.count("axis")) a["axis"] = int64_t(1);
}

// Returns true when the dtype of input 0 is needed and not known yet.
bool upgradeTypedBounds(Graph& g, Node* n, int64_t opset, const TensorType* input0) {
  bool clip = n->op() == "Clip" && opset < 11 && (n->hasAttr("min") || n->hasAttr("max"));
  bool pad = n->op() == "Pad" && opset < 11 && n->hasAttr("value");
  if (!clip && !pad) return false;
  if (!input0) {  // first pass: drop the bounds; inference does not need them
    for (const char* s : {"min", "max", "value"}) n->attrs().erase(s);
    return true;
  }
  if (clip) {
    floatToInput(g, n, "min", 1, input0->dtype);
    floatToInput(g, n, "max", 2, input0->dtype);
  } else {
    floatToInput(g, n, "value", 2, input0->dtype);
  }
  return false;
}
}  // namespace

bool isCoercingSoftmax(const std::string& op, int64_t opset) {
  return opset < 13 && (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax");
}

std::optional<int64_t> coercedSoftmaxAxis(const std::string& nodeId, const std::string& op, const Attributes& attrs,
                                          const TensorType& input0) {
  auto rank = int64_t(input0.shape.size());
  auto it = attrs.find("axis");
  int64_t axis = it == attrs.end() ? 1 : it->second.i();
  if (axis < -rank || axis > rank)
    fail("node '" + nodeId + "' (" + op + "): axis " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank));
  if (axis < 0) axis += rank;
  if (axis == rank - 1) return std::nullopt;  // the 2-D coercion is then a softmax over the last axis
  return axis;
}

bool upgradeNode(Graph& g, Node* n, int64_t opset, const TensorType* input0) {
  const std::string& op = n->op();
  if (opset < 7) upgradeLegacy(n, opset);
  for (const MovedOperand& m : kMovedOperands)
    if (op == m.op && opset < m.inputSince) intsToInput(g, n, m.attr, m.slot);
  if (startsWith(op, "Reduce") && op != "ReduceSum" && opset < 18) intsToInput(g, n, "axes", 1);
  if (op == "Split" && opset < 18 && !n->input(1) && !n->hasAttr("num_outputs"))
    n->attrs()["num_outputs"] = int64_t(n->numOutputs());  // Split-18 wants the count said explicitly
  if (op == "Constant") upgradeConstant(n);
  if (op == "BatchNormalization") upgradeBatchNorm(n);
  if (op == "Gemm") n->attrs().erase("broadcast");
  if (op == "Dropout" && opset < 12) {
    n->attrs().erase("is_test");
    floatToInput(g, n, "ratio", 1, DType::F32);
  }
  if (isCoercingSoftmax(op, opset)) {
    n->attrs()["axis"] = int64_t(-1);  // exact when coercedSoftmaxAxis found no rewrite was needed
    return !input0;
  }
  return upgradeTypedBounds(g, n, opset, input0);
}

}  // namespace tessera::onnxio
