#include "passes/fold_constants.h"

#include <algorithm>

#include "ir/error.h"
#include "ops/registry.h"
#include "passes/rewrite.h"

namespace tessera {
namespace {

// Ops never folded: random, or (Dropout) only an identity in inference, which canonicalize handles, or of a
// cost not bounded by their operands (a Loop's trip count), or making a sequence or optional (an initializer
// is a tensor: model files hold no other).
bool foldable(const Node& n) {
  const OpTraits& t = opTraits(n.op());
  bool containers = std::any_of(n.outputs().begin(), n.outputs().end(), [](const Value* v) { return !v->type().isTensor(); });
  return !t.random && !t.randomInTraining && evalCostBounded(n) && !containers;
}

// Shape and Size need only the static type of their input, not its data.
bool dependsOnTypeOnly(const Node& n) { return opTraits(n.op()).shapeOnly; }

// A data-movement node (Reshape, Transpose, Slice, ...) whose data input is a constant nothing else reads, and
// whose result is no larger: folded, its result replaces that constant, so the model does not grow however
// large it is (a patch conv's weights made a matmul's operand by decompose, a conv's weights cut to its live
// taps by canonicalize).
bool rearrangesDeadConstant(const Node& n) {
  if (opTraits(n.op()).movement == MovementKind::None || n.numOutputs() != 1) return false;
  const Value* data = n.input(0);
  return data && data->uses().size() == 1 && !data->isGraphOutput() &&
         n.output(0)->type().numElements() <= data->type().numElements();
}

class FoldConstantsPass : public Pass {
 public:
  explicit FoldConstantsPass(int64_t maxElements) : maxElements_(maxElements) {}
  std::string name() const override { return "fold-constants"; }
  std::string summary() const override { return "evaluate small nodes whose inputs are all constants"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"folded-nodes", "nodes replaced by initializers"},
            {"folded-elements", "elements of the initializers made"},
            {"too-large", "constant nodes left as ops because the result is too large"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    for (Node* n : graph.topoOrder()) {
      if (!foldable(*n) || !inputsConstant(*n)) continue;
      const OpSchema* schema = OpRegistry::instance().find(n->op());
      if (!schema || (!schema->eval && !dependsOnTypeOnly(*n))) continue;
      int64_t elements = 0;
      for (Value* out : n->outputs()) elements += out->type().numElements();
      if (elements > maxElements_ && !rearrangesDeadConstant(*n)) {
        ctx.count("too-large");
        continue;
      }
      if (!ctx.tryRewrite()) return;
      replaceWithConstants(graph, n, evaluate(*n, *schema));
      ctx.count("folded-nodes");
      ctx.count("folded-elements", elements);
    }
  }

 private:
  static bool inputsConstant(const Node& n) {
    if (dependsOnTypeOnly(n)) return true;
    for (Value* in : n.inputs())
      if (in && !in->initializer()) return false;
    return true;
  }

  static std::vector<Tensor> evaluate(const Node& n, const OpSchema& schema) {
    if (n.op() == "Size")
      return {Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{numElements(n.input(0)->shape())})};
    if (n.op() == "Shape") return {shapeOf(n)};
    std::vector<const Tensor*> ins;
    for (Value* in : n.inputs()) ins.push_back(in ? in->initializer() : nullptr);
    std::vector<TensorType> types;
    for (Value* out : n.outputs()) types.push_back(out->type());
    std::vector<Tensor> outs = schema.eval(n, ins, types);
    if (outs.size() < n.numOutputs()) fail("node '" + n.id() + "' (" + n.op() + "): evaluation gave too few outputs");
    outs.resize(n.numOutputs());
    for (size_t i = 0; i < outs.size(); ++i)
      if (outs[i].type() != types[i])
        fail("node '" + n.id() + "' (" + n.op() + "): evaluated output " + std::to_string(i) + " is " +
             outs[i].type().toString() + " but " + types[i].toString() + " was inferred");
    return outs;
  }

  static Tensor shapeOf(const Node& n) {
    const Shape& s = n.input(0)->shape();
    int64_t rank = int64_t(s.size());
    int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    Shape part(s.begin() + start, s.begin() + end);
    return Tensor::fromInts(DType::I64, {end - start}, part);
  }

  int64_t maxElements_;
};

}  // namespace

std::unique_ptr<Pass> createFoldConstantsPass(int64_t maxElements) {
  return std::make_unique<FoldConstantsPass>(maxElements);
}

}  // namespace tessera
