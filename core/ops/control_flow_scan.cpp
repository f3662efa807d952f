// Scan (opset 9 and later): runs its body once per slice of its scan inputs along their axes, carrying state
// values, and stacks the body's scan outputs along their axes. Node inputs: N states, M scan inputs
// (num_scan_inputs), then the body's captures; outputs: the N final states, then the K stacked scan outputs.
#include "ops/control_flow_body.h"
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

// What inference and evaluation both need: the counts, axes and directions, checked.
struct ScanForm {
  size_t states = 0, scanInputs = 0, scanOutputs = 0;
  std::vector<int64_t> inAxes, inReverse, outAxes, outReverse;  // axes normalized
};

std::vector<int64_t> perScan(const Node& node, const std::string& attr, size_t count) {
  std::vector<int64_t> v = node.attrInts(attr, std::vector<int64_t>(count, 0));
  if (v.size() != count)
    failNode(node, "attribute '" + attr + "' has " + std::to_string(v.size()) + " values for " +
                       std::to_string(count) + " scans");
  return v;
}

ScanForm scanForm(const Node& node, const std::vector<size_t>& inRanks, const std::vector<size_t>& outRanks) {
  const Graph& body = bodyAttr(node, "body");
  size_t formal = bodyFormalInputs(body);
  if (node.numInputs() != body.inputs().size())
    failNode(node, "has " + std::to_string(node.numInputs()) + " inputs but body takes " +
                       std::to_string(body.inputs().size()) + " (with its outer values)");
  ScanForm f;
  int64_t m = node.attrInt("num_scan_inputs", -1);
  if (m < 1 || size_t(m) > formal) failNode(node, "attribute 'num_scan_inputs' = " + std::to_string(m) +
                                                      " must be 1 to " + std::to_string(formal));
  f.scanInputs = size_t(m);
  f.states = formal - f.scanInputs;
  if (body.outputs().size() < f.states || node.numOutputs() != body.outputs().size())
    failNode(node, "has " + std::to_string(node.numOutputs()) + " outputs; body gives " +
                       std::to_string(body.outputs().size()) + " for " + std::to_string(f.states) + " states");
  f.scanOutputs = body.outputs().size() - f.states;
  f.inReverse = perScan(node, "scan_input_directions", f.scanInputs);
  f.outReverse = perScan(node, "scan_output_directions", f.scanOutputs);
  f.inAxes = perScan(node, "scan_input_axes", f.scanInputs);
  f.outAxes = perScan(node, "scan_output_axes", f.scanOutputs);
  for (size_t j = 0; j < f.scanInputs; ++j) f.inAxes[j] = evalAxis(node, f.inAxes[j], int64_t(inRanks[j]));
  for (size_t j = 0; j < outRanks.size(); ++j) f.outAxes[j] = evalAxis(node, f.outAxes[j], int64_t(outRanks[j]) + 1);
  return f;
}

std::vector<size_t> scanInputRanks(const Node& node, size_t states, size_t scans) {
  std::vector<size_t> ranks;
  for (size_t j = 0; j < scans; ++j) {
    const Value* v = node.input(states + j);
    if (!v) failNode(node, "scan input " + std::to_string(j) + " is missing");
    if (v->shape().empty()) failNode(node, "scan input " + std::to_string(j) + " is a scalar; it needs an axis");
    ranks.push_back(v->shape().size());
  }
  return ranks;
}

// The iteration count: every scan input's extent along its axis.
int64_t scanLength(const Node& node, const ScanForm& f, const std::vector<Shape>& shapes) {
  int64_t length = -1;
  for (size_t j = 0; j < f.scanInputs; ++j) {
    int64_t e = shapes[j][size_t(f.inAxes[j])];
    if (length >= 0 && e != length)
      failNode(node, "scan input " + std::to_string(j) + " has " + std::to_string(e) + " slices, scan input 0 has " +
                         std::to_string(length));
    length = e;
  }
  return length;
}

void inferScan(InferContext& ctx) {
  const Node& node = ctx.node();
  const Graph& body = bodyAttr(node, "body");
  size_t formal = bodyFormalInputs(body);
  size_t m = size_t(std::max<int64_t>(1, node.attrInt("num_scan_inputs", 1)));
  if (m > formal) ctx.error("attribute 'num_scan_inputs' = " + std::to_string(m) + " exceeds body's inputs");
  ScanForm f = scanForm(node, scanInputRanks(node, formal - m, m), {});
  std::vector<Shape> shapes;
  std::vector<TensorType> types;
  for (size_t k = 0; k < f.states; ++k) types.push_back(ctx.input(k));
  for (size_t j = 0; j < f.scanInputs; ++j) {
    TensorType t = ctx.input(f.states + j);
    shapes.push_back(t.shape);
    t.shape.erase(t.shape.begin() + f.inAxes[j]);
    types.push_back(t);
  }
  int64_t length = scanLength(node, f, shapes);
  std::vector<TensorType> out = inferBodyOutputs(ctx, "body", types).value_or(declaredOutputTypes(body));
  for (size_t k = 0; k < f.states; ++k)
    if (out[k] != types[k])
      ctx.error("state " + std::to_string(k) + " enters as " + types[k].toString() + " and leaves the body as " +
                out[k].toString() + "; Tessera needs it to keep its type");
  std::vector<size_t> outRanks;
  for (size_t j = 0; j < f.scanOutputs; ++j) outRanks.push_back(out[f.states + j].shape.size());
  f = scanForm(node, scanInputRanks(node, f.states, f.scanInputs), outRanks);
  for (size_t i = 0; i < out.size(); ++i) {
    ctx.outputs[i] = out[i];
    if (i >= f.states) {
      Shape& s = ctx.outputs[i].shape;
      s.insert(s.begin() + f.outAxes[i - f.states], length);
    }
  }
}

std::vector<Tensor> evalScan(const Node& node, const std::vector<const Tensor*>& in,
                             const std::vector<TensorType>& types) {
  const Graph& body = bodyAttr(node, "body");
  size_t m = size_t(node.attrInt("num_scan_inputs", 1));
  size_t states = bodyFormalInputs(body) - m;
  std::vector<size_t> outRanks;
  for (size_t j = states; j < types.size(); ++j) outRanks.push_back(types[j].shape.size() - 1);
  ScanForm f = scanForm(node, scanInputRanks(node, states, m), outRanks);
  std::vector<Shape> shapes;
  for (size_t j = 0; j < f.scanInputs; ++j) shapes.push_back(in[f.states + j]->shape());
  int64_t length = scanLength(node, f, shapes);
  BodyRunner runner(node, "body", in);
  std::vector<Tensor> carried;
  for (size_t k = 0; k < f.states; ++k) carried.push_back(*in[k]);
  std::vector<std::vector<Tensor>> pieces(f.scanOutputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Tensor> formal = carried;
    for (size_t j = 0; j < f.scanInputs; ++j)
      formal.push_back(sliceAt(*in[f.states + j], f.inAxes[j], f.inReverse[j] ? length - 1 - t : t));
    std::vector<Tensor> outs = runner.run(formal);
    for (size_t k = 0; k < f.states; ++k) carried[k] = std::move(outs[k]);
    for (size_t j = 0; j < f.scanOutputs; ++j) pieces[j].push_back(std::move(outs[f.states + j]));
  }
  std::vector<Tensor> result = carried;
  for (size_t j = 0; j < f.scanOutputs; ++j)
    result.push_back(stackSlices(node, pieces[j], types[f.states + j], f.outAxes[j], f.outReverse[j] != 0));
  for (size_t i = 0; i < types.size(); ++i) requireType(node, result[i], types[i], i);
  return result;
}

}  // namespace

void registerScanOps(OpRegistry& r) {
  addOp(r, {"Scan", OpCategory::Other, "runs body (a subgraph) over slices of the scan inputs, carrying states", 1,
            kMaxVariadic, 1, kMaxVariadic, {}, inferScan, evalScan}, {.subgraphs = true});
}

}  // namespace tessera
