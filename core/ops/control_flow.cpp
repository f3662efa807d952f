// If, Loop and Scan: ops whose bodies are graphs (graph attributes). The reference semantics run a body with
// the reference semantics of its nodes (control_flow_body.h); inference infers a body with its input types.
// Shapes stay static: If's branches must agree unless the condition is a constant, Loop's carried values keep
// their types, and Loop's scan outputs have the trip count's length (input 0, a shape input).
#include "ops/control_flow_body.h"
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

bool truth(const Tensor& t) { return t.numElements() > 0 && t.getInt(0) != 0; }

void requireCondition(const InferContext& ctx, size_t input, const std::string& what) {
  const TensorType& t = ctx.input(input);
  if (t.dtype != DType::Bool || t.numElements() != 1)
    ctx.error("input " + std::to_string(input) + " (" + what + ") must be one bool, not " + t.toString());
}

std::vector<TensorType> bodyOutputs(const InferContext& ctx, const std::string& name,
                                    const std::vector<TensorType>& formal) {
  if (auto types = inferBodyOutputs(ctx, name, formal)) return *types;
  return declaredOutputTypes(bodyAttr(ctx.node(), name));
}

// The node's inputs before the captures of body `name` (its trailing inputs are the body's captures).
size_t nodeFormalInputs(const InferContext& ctx, const std::string& name) {
  size_t captures = bodyAttr(ctx.node(), name).numCaptures();
  if (ctx.numInputs() < captures)
    ctx.error("has " + std::to_string(ctx.numInputs()) + " inputs but " + name + " reads " +
              std::to_string(captures) + " outer values");
  return ctx.numInputs() - captures;
}

// ---- If ----

// A branch's output types. When they depend on values only known when it runs (a NonMaxSuppression inside it),
// the If's outputs do too: the declared types may be placeholders (exporters declare such outputs with symbolic
// dims), so the If asks for values, as a Reshape by a computed shape does, and is specialized (ops/specialize.h).
std::vector<TensorType> branchOutputs(const InferContext& ctx, const std::string& name) {
  if (auto types = inferBodyOutputs(ctx, name, {})) return *types;
  throw NeedsValuesError("node '" + ctx.node().id() + "' (" + ctx.node().op() + "): " + name +
                             "'s output types depend on values that must be a constant known at compile time",
                         ctx.node().id());
}

void inferIf(InferContext& ctx) {
  requireCondition(ctx, 0, "cond");
  for (const char* name : {"then_branch", "else_branch"}) {
    if (nodeFormalInputs(ctx, name) != 1) ctx.error("passes its branches other outer values than " + std::string(name) + " reads");
    if (bodyFormalInputs(bodyAttr(ctx.node(), name)) != 0) ctx.error(std::string(name) + " must have no inputs of its own");
    if (bodyAttr(ctx.node(), name).outputs().size() != ctx.node().numOutputs())
      ctx.error(std::string(name) + " has " + std::to_string(bodyAttr(ctx.node(), name).outputs().size()) +
                " outputs but the node has " + std::to_string(ctx.node().numOutputs()));
  }
  if (const Tensor* cond = ctx.constantInput(0)) {
    ctx.outputs = branchOutputs(ctx, truth(*cond) ? "then_branch" : "else_branch");
    return;
  }
  std::vector<TensorType> thenTypes = branchOutputs(ctx, "then_branch");
  std::vector<TensorType> elseTypes = branchOutputs(ctx, "else_branch");
  for (size_t i = 0; i < thenTypes.size(); ++i)
    if (thenTypes[i] != elseTypes[i])
      ctx.error("output " + std::to_string(i) + " is " + thenTypes[i].toString() + " in then_branch but " +
                elseTypes[i].toString() + " in else_branch; Tessera needs static types, so the branches must agree "
                "unless cond is a constant");
  ctx.outputs = thenTypes;
}

std::vector<Tensor> evalIf(const Node& node, const std::vector<const Tensor*>& in,
                           const std::vector<TensorType>& types) {
  BodyRunner branch(node, truth(*in[0]) ? "then_branch" : "else_branch", in);
  std::vector<Tensor> outs = branch.run({});
  for (size_t i = 0; i < types.size(); ++i) requireType(node, outs[i], types[i], i);
  return outs;
}

// ---- Loop ----

// A carried value may enter as an optional and leave the body as what it holds (ONNX's loop16_seq_none: None at
// first, then a sequence): the later iterations, and the Loop's output, have the type it leaves with.
bool unwrapsOptional(const TensorType& entering, const TensorType& leaving) {
  return entering.isOptional() && !leaving.isOptional() && leaving.dtype == entering.dtype &&
         leaving.isSequence() == entering.isSequence();
}

// The carried value as the Loop's output: one that entered as an optional and was never replaced (no iteration
// ran) gives what it holds.
Tensor carriedResult(const Node& node, const Tensor& value, const TensorType& type, size_t k) {
  if (!value.type().isOptional() || type.isOptional()) return value;
  if (value.elements().empty())
    failNode(node, "carried value " + std::to_string(k) + " is still the empty optional it entered as (no iteration "
                   "ran), but the loop's output " + std::to_string(k) + " is a " + type.toString());
  return value.elements()[0];
}

// Loop's node inputs: M (trip count), cond, N carried values, then captures. Body: iteration number, cond,
// N carried values (then captures); outputs: cond, N carried values, K scan outputs.
struct LoopShape {
  size_t carried = 0, scans = 0;
};

LoopShape loopShape(const InferContext& ctx) {
  const Graph& body = bodyAttr(ctx.node(), "body");
  size_t formal = nodeFormalInputs(ctx, "body");
  if (formal < 2) ctx.error("needs inputs M and cond (either may be omitted) before the carried values");
  if (bodyFormalInputs(body) != formal)
    ctx.error("passes " + std::to_string(formal - 2) + " carried values but body takes " +
              std::to_string(bodyFormalInputs(body)) + " inputs (the iteration number, cond and the carried values)");
  LoopShape s{formal - 2, 0};
  if (body.outputs().size() < 1 + s.carried)
    ctx.error("body has " + std::to_string(body.outputs().size()) + " outputs; it needs the condition and " +
              std::to_string(s.carried) + " carried values");
  s.scans = body.outputs().size() - 1 - s.carried;
  if (ctx.node().numOutputs() > s.carried + s.scans)
    ctx.error("has " + std::to_string(ctx.node().numOutputs()) + " outputs but body gives " +
              std::to_string(s.carried + s.scans));
  return s;
}

// The number of iterations the scan outputs are given: M when the loop starts (cond true or absent).
int64_t staticTripCount(const InferContext& ctx) {
  if (!ctx.hasInput(0)) ctx.error("scan outputs need a trip count (input 0, M); a loop ended by cond alone has none");
  std::vector<int64_t> m = constantInts(ctx, 0, "M");
  if (m.size() != 1 || m[0] < 0) ctx.error("input 0 (M) must be one non-negative count, not " + intsToString(m));
  const Tensor* cond = ctx.hasInput(1) ? ctx.constantInput(1) : nullptr;
  return cond && !truth(*cond) ? 0 : m[0];
}

void inferLoop(InferContext& ctx) {
  LoopShape s = loopShape(ctx);
  if (ctx.hasInput(0) && (ctx.input(0).dtype != DType::I64 || ctx.input(0).numElements() != 1))
    ctx.error("input 0 (M) must be one i64, not " + ctx.input(0).toString());
  if (ctx.hasInput(1)) requireCondition(ctx, 1, "cond");
  std::vector<TensorType> formal = {{DType::I64, {}}, {DType::Bool, {}}};
  for (size_t k = 0; k < s.carried; ++k) formal.push_back(ctx.input(2 + k));
  std::vector<TensorType> out = bodyOutputs(ctx, "body", formal);
  if (out[0].dtype != DType::Bool || out[0].numElements() != 1)
    ctx.error("body output 0 (the condition) must be one bool, not " + out[0].toString());
  for (size_t k = 0; k < s.carried; ++k)
    if (out[1 + k] != formal[2 + k] && !unwrapsOptional(formal[2 + k], out[1 + k]))
      ctx.error("carried value " + std::to_string(k) + " enters as " + formal[2 + k].toString() +
                " and leaves the body as " + out[1 + k].toString() + "; Tessera needs it to keep its type");
  int64_t trips = s.scans > 0 ? staticTripCount(ctx) : 0;
  for (size_t i = 0; i < ctx.node().numOutputs(); ++i) {
    if (i >= s.carried && !out[1 + i].isTensor())
      ctx.error("scan output " + std::to_string(i - s.carried) + " is a " + out[1 + i].toString() +
                "; a scan output stacks tensors");
    ctx.outputs[i] = out[1 + i];
    if (i >= s.carried) ctx.outputs[i].shape.insert(ctx.outputs[i].shape.begin(), trips);
  }
}

std::vector<Tensor> evalLoop(const Node& node, const std::vector<const Tensor*>& in,
                             const std::vector<TensorType>& types) {
  BodyRunner body(node, "body", in);
  size_t carriedCount = bodyFormalInputs(body.body()) - 2;
  int64_t trips = in[0] ? in[0]->getInt(0) : INT64_MAX;
  bool cond = in[1] ? truth(*in[1]) : true;
  std::vector<Tensor> carried;
  for (size_t k = 0; k < carriedCount; ++k) carried.push_back(*in[2 + k]);
  size_t scanCount = body.body().outputs().size() - 1 - carriedCount;
  std::vector<std::vector<Tensor>> scans(scanCount);
  for (int64_t i = 0; i < trips && cond; ++i) {
    std::vector<Tensor> formal = {Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{i}),
                                  Tensor::fromInts(DType::Bool, {}, std::vector<int64_t>{1})};
    formal.insert(formal.end(), carried.begin(), carried.end());
    std::vector<Tensor> outs = body.run(formal);
    cond = truth(outs[0]);
    for (size_t k = 0; k < carriedCount; ++k) carried[k] = std::move(outs[1 + k]);
    for (size_t j = 0; j < scanCount; ++j) scans[j].push_back(std::move(outs[1 + carriedCount + j]));
  }
  std::vector<Tensor> result;
  for (size_t i = 0; i < types.size(); ++i)
    result.push_back(i < carriedCount ? carriedResult(node, carried[i], types[i], i) : stackSlices(node, scans[i - carriedCount], types[i], 0, false));
  for (size_t i = 0; i < types.size(); ++i) requireType(node, result[i], types[i], i);
  return result;
}

}  // namespace

void registerScanOps(OpRegistry& r);  // control_flow_scan.cpp

void registerControlFlowOps(OpRegistry& r) {
  addOp(r, {"If", OpCategory::Other, "runs then_branch or else_branch (subgraphs) as cond says", 1, kMaxVariadic, 1,
            kMaxVariadic, {}, inferIf, evalIf}, {.subgraphs = true, .containers = true, .strings = true});
  // Its cost follows M, not the size of its operands: never evaluated at compile time.
  addOp(r, {"Loop", OpCategory::Other, "runs body (a subgraph) M times or while cond holds, carrying values", 0,
            kMaxVariadic, 1, kMaxVariadic, {0, 1}, inferLoop, evalLoop}, {.subgraphs = true, .unboundedEval = true, .containers = true, .strings = true});
  registerScanOps(r);
}

}  // namespace tessera
