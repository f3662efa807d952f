#include "passes/infer_shapes.h"

#include "ops/infer.h"

namespace tessera {
namespace {

class InferShapesPass : public Pass {
 public:
  std::string name() const override { return "infer-shapes"; }
  std::string summary() const override { return "re-infer every value's type with constant propagation"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"retyped-values", "values whose type inference changed"},
            {"known-constants", "values known at compile time"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    std::vector<TensorType> before;
    std::vector<Node*> nodes = graph.nodes();
    for (Node* n : nodes)
      for (Value* out : n->outputs()) before.push_back(out->type());
    ConstantTable constants = inferTypes(graph);
    size_t k = 0;
    for (Node* n : nodes)
      for (Value* out : n->outputs())
        if (out->type() != before[k++]) ctx.count("retyped-values");
    ctx.count("known-constants", int64_t(constants.size()));
  }
};

}  // namespace

std::unique_ptr<Pass> createInferShapesPass() { return std::make_unique<InferShapesPass>(); }

}  // namespace tessera
