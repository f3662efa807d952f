// ai.onnx.preview.training's optimizers: Adagrad, Adam and Momentum (standard or Nesterov), each one step over n
// tensors at once. Inputs: the learning rate R and the update count T (scalars), then n tensors of each operand
// kind (X, G, and the optimizer's state); outputs: the n new X and the n new states of each kind. The formulas
// are ONNX's (its reference implementation), computed in double and rounded once to each output's dtype.
#include <cmath>
#include <functional>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

std::string trainingOp(const char* name) { return qualifiedOpName("ai.onnx.preview.training", name); }

// `kinds` operand kinds after R and T (X, G, then the states), n tensors each; outputs X and the states.
struct Optimizer {
  int kinds;
  // (r, t, the operands of one tensor element by element) -> X_new and the new states, in place of X and states.
  std::function<void(const Node&, double r, int64_t t, std::vector<double*>&)> step;
};

int64_t groups(const InferContext& ctx, int kinds) {
  const int64_t operands = int64_t(ctx.numInputs()) - 2;
  if (operands <= 0 || operands % kinds != 0)
    ctx.error(std::to_string(ctx.numInputs()) + " inputs: expected R, T and " + std::to_string(kinds) +
              " tensors for each optimized tensor");
  return operands / kinds;
}

InferFn inferOptimizer(int kinds) {
  return [kinds](InferContext& ctx) {
    const int64_t n = groups(ctx, kinds);
    if (!ctx.input(0).shape.empty() || !ctx.input(1).shape.empty()) ctx.error("R and T must be scalars");
    requireDType(ctx, 0, DTypeClass::Float);
    requireDType(ctx, 1, {DType::I64});
    if (int64_t(ctx.outputs.size()) != n * (kinds - 1))
      ctx.error(std::to_string(ctx.outputs.size()) + " outputs: expected " + std::to_string(n * (kinds - 1)) +
                " (the new X and each state of the " + std::to_string(n) + " tensors)");
    for (int64_t i = 0; i < n; ++i)
      for (int k = 0; k < kinds; ++k) {
        const TensorType& t = ctx.input(size_t(2 + k * n + i));
        if (t != ctx.input(size_t(2 + i)))
          ctx.error("input " + std::to_string(2 + k * n + i) + " is " + t.toString() + "; it must match X " +
                    ctx.input(size_t(2 + i)).toString());
      }
    for (int k = 0, out = 0; k < kinds; ++k) {
      if (k == 1) continue;  // G has no new value
      for (int64_t i = 0; i < n; ++i) ctx.outputs[size_t(out * n + i)] = ctx.input(size_t(2 + i));
      ++out;
    }
  };
}

EvalFn evalOptimizer(Optimizer o) {
  return [o](const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
    const size_t n = (in.size() - 2) / size_t(o.kinds);
    const double r = in[0]->getDouble(0);
    const int64_t t = in[1]->getInt(0);
    std::vector<std::vector<double>> operand(size_t(o.kinds));
    std::vector<Tensor> outputs(types.size());
    for (size_t i = 0; i < n; ++i) {
      for (int k = 0; k < o.kinds; ++k) operand[size_t(k)] = in[2 + size_t(k) * n + i]->toDoubles();
      std::vector<double*> element(size_t(o.kinds));
      for (size_t e = 0; e < operand[0].size(); ++e) {
        for (int k = 0; k < o.kinds; ++k) element[size_t(k)] = &operand[size_t(k)][e];
        o.step(node, r, t, element);
      }
      for (int k = 0, out = 0; k < o.kinds; ++k) {
        if (k == 1) continue;
        const TensorType& type = types[size_t(out) * n + i];
        outputs[size_t(out) * n + i] = fromDoublesRounded(type.dtype, type.shape, operand[size_t(k)]);
        ++out;
      }
    }
    return outputs;
  };
}

// x, g, h: h += g'^2, x -= r / (1 + t * decay) * g' / (sqrt(h) + epsilon), with g' = g + norm_coefficient * x.
void adagrad(const Node& node, double r, int64_t t, std::vector<double*>& v) {
  double &x = *v[0], g = *v[1], &h = *v[2];
  const double rate = r / (1 + double(t) * node.attrFloat("decay_factor", 0.0));
  const double gr = node.attrFloat("norm_coefficient", 0.0) * x + g;
  h += gr * gr;
  x -= rate * gr / (std::sqrt(h) + node.attrFloat("epsilon", 1e-6));
}

// x, g, v, h: first and second moments of g', the step bias-corrected once t > 0, then x scaled by
// (1 - norm_coefficient_post).
void adam(const Node& node, double r, int64_t t, std::vector<double*>& e) {
  double &x = *e[0], g = *e[1], &v = *e[2], &h = *e[3];
  const double alpha = node.attrFloat("alpha", 0.9), beta = node.attrFloat("beta", 0.999);
  const double gr = node.attrFloat("norm_coefficient", 0.0) * x + g;
  v = alpha * v + (1 - alpha) * gr;
  h = beta * h + (1 - beta) * gr * gr;
  const double rate = t > 0 ? r * std::sqrt(1 - std::pow(beta, double(t))) / (1 - std::pow(alpha, double(t))) : r;
  x = (x - rate * v / (std::sqrt(h) + node.attrFloat("epsilon", 1e-6))) * (1 - node.attrFloat("norm_coefficient_post", 0.0));
}

// x, g, v: v = alpha v + beta' g' (beta' = 1 on the first step), then x -= r v (standard) or
// r (g' + alpha v) (nesterov).
void momentum(const Node& node, double r, int64_t t, std::vector<double*>& e) {
  double &x = *e[0], g = *e[1], &v = *e[2];
  const std::string mode = node.attrString("mode", "standard");
  if (mode != "standard" && mode != "nesterov") failNode(node, "attribute mode = '" + mode + "' is not standard or nesterov");
  const double alpha = node.attrFloat("alpha", 0.0), beta = t > 0 ? node.attrFloat("beta", 0.0) : 1.0;
  const double gr = node.attrFloat("norm_coefficient", 0.0) * x + g;
  v = alpha * v + beta * gr;
  x -= mode == "nesterov" ? r * (gr + alpha * v) : r * v;
}

void addOptimizer(OpRegistry& r, const char* name, const char* summary, int kinds,
                  void (*step)(const Node&, double, int64_t, std::vector<double*>&)) {
  addOp(r, {trainingOp(name), OpCategory::Other, summary, 2 + kinds, kMaxVariadic, kinds - 1, kMaxVariadic, {},
            inferOptimizer(kinds), evalOptimizer({kinds, step})});
}

}  // namespace

void registerTrainingOps(OpRegistry& r) {
  addOptimizer(r, "Adagrad", "one Adagrad step: X and the squared-gradient sums H", 3, adagrad);
  addOptimizer(r, "Adam", "one Adam step: X and the moments V and H", 4, adam);
  addOptimizer(r, "Momentum", "one momentum step (standard or Nesterov): X and the velocities V", 3, momentum);
}

}  // namespace tessera
