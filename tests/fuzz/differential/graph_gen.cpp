#include "graph_gen.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/builder.h"

namespace tessera::fuzz {
namespace {

// Ops whose result stays close to their input's scale, so float and double stay within the tolerance through a
// chain of them (steps such as Floor or Reciprocal would turn a rounding difference into a wrong answer).
const std::vector<std::string> kUnaryOps = {"Relu", "Neg",  "Abs",      "Tanh", "Sigmoid", "Erf",       "Sin",
                                            "Cos",  "Gelu", "Softsign", "Elu",  "Selu",    "LeakyRelu", "HardSigmoid",
                                            "HardSwish", "Softplus", "Exp", "Identity"};
const std::vector<std::string> kBinaryOps = {"Add", "Sub", "Mul", "Max", "Min"};
const std::vector<std::string> kReduceOps = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2",
                                             "ReduceSumSquare", "ReduceLogSumExp"};

class Generator {
 public:
  Generator(uint64_t seed, const GenOptions& o) : rng_(seed), o_(o), b_("fuzz_" + std::to_string(seed)) {}
  Graph run();

 private:
  using Family = Value* (Generator::*)();
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <class T> const T& oneOf(const std::vector<T>& v) { return v[size_t(uniform(0, int64_t(v.size()) - 1))]; }
  int64_t dim(bool allowZero = true);
  Shape shape(int rank, bool allowZero = true);
  Value* input(Shape s);
  Value* pickRank(int lo, int hi, bool nonEmpty = false);
  Value* ints(std::vector<int64_t> v) { return b_.ints(fresh('c'), std::move(v)); }
  Value* scalar(double v) { return b_.constant(fresh('s'), Tensor::scalar(dtype_, v)); }
  // A new name: the prefix and a counter (appended, not "x" + to_string: GCC 12 warns falsely on that).
  std::string fresh(char prefix) {
    std::string s(1, prefix);
    s += std::to_string(names_++);
    return s;
  }
  int64_t axis(int64_t rank) { return uniform(-rank, rank - 1); }
  Value* op(const std::string& name, const std::vector<Value*>& in, Attributes attrs = {});
  bool floats() const { return isFloat(dtype_); }
  Shape broadcastShape(const Shape& s);
  std::vector<int64_t> axesSubset(int64_t rank);

  Value* unary();
  Value* binary();
  Value* where();
  Value* reduce();
  Value* softmax();
  Value* layerNorm();
  Value* matmul();
  Value* gemm();
  Value* conv();
  Value* pool();
  Value* transpose();
  Value* reshape();
  Value* slice();
  Value* concat();
  Value* gather();
  Value* expand();
  Value* unsqueeze();
  Value* split();
  Value* pad();
  Value* cast();
  bool addOne();
  void dropUnused();

  std::mt19937_64 rng_;
  GenOptions o_;
  GraphBuilder b_;
  DType dtype_ = DType::F32;
  std::vector<Value*> pool_;
  std::vector<std::string> attempt_;  // node ids added by the draw in progress (removed when it is refused)
  int names_ = 0;
};

int64_t Generator::dim(bool allowZero) {
  if (allowZero && o_.zeroSizeDims && chance(0.03)) return 0;
  static const std::vector<int64_t> dims = {1, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 33};
  return oneOf(dims);
}

Shape Generator::shape(int rank, bool allowZero) {
  Shape d;
  for (int i = 0; i < rank; ++i) d.push_back(dim(allowZero));
  return d;
}

Value* Generator::input(Shape s) {
  Value* v = b_.input(fresh('x'), TensorType{dtype_, std::move(s)});
  return v;
}

// A value of the pool with rank in [lo, hi] (and no zero dimension when asked), else a new input.
Value* Generator::pickRank(int lo, int hi, bool nonEmpty) {
  std::vector<Value*> fit;
  for (Value* v : pool_) {
    int64_t r = int64_t(v->shape().size());
    if (r >= lo && r <= hi && v->dtype() == dtype_ && (!nonEmpty || numElements(v->shape()) > 0)) fit.push_back(v);
  }
  if (!fit.empty() && chance(0.85)) return oneOf(fit);
  return input(shape(int(uniform(lo, hi)), !nonEmpty));
}

Value* Generator::op(const std::string& name, const std::vector<Value*>& in, Attributes attrs) {
  std::string id = fresh('n');
  attempt_.push_back(id);
  return b_.op(name, in, std::move(attrs), id);
}

// A shape that broadcasts with `s`: some leading dims dropped, some dims set to 1.
Shape Generator::broadcastShape(const Shape& s) {
  Shape d = s;
  if (!d.empty() && chance(0.3)) d.erase(d.begin(), d.begin() + uniform(0, int64_t(d.size())));
  for (auto& x : d)
    if (chance(0.25)) x = 1;
  if (chance(0.1)) d.insert(d.begin(), dim(false));  // the partner has the higher rank
  return d;
}

// A random non-empty set of axes, each written positive or negative at random.
std::vector<int64_t> Generator::axesSubset(int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a)
    if (chance(0.5)) axes.push_back(chance(0.5) ? a - rank : a);
  if (axes.empty() && rank > 0) axes.push_back(axis(rank));
  std::shuffle(axes.begin(), axes.end(), rng_);
  return axes;
}

Value* Generator::unary() {
  Value* x = pickRank(0, o_.maxRank);
  if (!floats()) return op(oneOf(std::vector<std::string>{"Abs", "Neg", "Relu", "Identity"}), {x});
  std::string name = oneOf(kUnaryOps);
  Attributes attrs;
  if (name == "LeakyRelu" || name == "Elu") attrs["alpha"] = double(uniform(1, 30)) / 10;
  if (name == "HardSigmoid") attrs["alpha"] = 0.3;
  if (name == "Exp") x = op("Tanh", {x});  // keeps exp's result small
  return op(name, {x});
}

Value* Generator::binary() {
  Value* x = pickRank(0, o_.maxRank);
  Value* y = input(broadcastShape(x->shape()));
  if (chance(0.5)) std::swap(x, y);
  std::vector<std::string> ops = kBinaryOps;
  if (floats()) ops.push_back("Div");
  std::string name = oneOf(ops);
  if (name == "Div") y = op("Add", {op("Abs", {y}), scalar(1.0)});  // a denominator of at least 1
  return op(name, {x, y});
}

Value* Generator::where() {
  Value* x = pickRank(0, o_.maxRank);
  Value* y = input(broadcastShape(x->shape()));
  Value* cond = op(chance(0.5) ? "Greater" : "LessOrEqual", {input(broadcastShape(x->shape())), y});
  return chance(0.5) ? op("Where", {cond, x, y}) : op("Where", {cond, y, x});
}

Value* Generator::reduce() {
  Value* x = pickRank(1, o_.maxRank);
  std::string name = floats() ? oneOf(kReduceOps) : oneOf(std::vector<std::string>{"ReduceSum", "ReduceMax", "ReduceMin"});
  if (name == "ReduceMax" || name == "ReduceMin") x = pickRank(1, o_.maxRank, true);  // no identity for empty rows
  Attributes attrs{{"keepdims", int64_t(chance(0.5))}};
  if (chance(0.2)) return op(name, {x}, attrs);  // every axis
  return op(name, {x, ints(axesSubset(int64_t(x->shape().size())))}, attrs);
}

Value* Generator::softmax() {
  Value* x = pickRank(1, o_.maxRank, true);
  return op(chance(0.7) ? "Softmax" : "LogSoftmax", {x}, {{"axis", axis(int64_t(x->shape().size()))}});
}

Value* Generator::layerNorm() {
  Value* x = pickRank(1, o_.maxRank, true);
  int64_t a = axis(int64_t(x->shape().size()));
  int64_t first = a < 0 ? a + int64_t(x->shape().size()) : a;
  Shape normalized(x->shape().begin() + first, x->shape().end());
  std::vector<Value*> in = {x, input(normalized)};
  if (chance(0.6)) in.push_back(input(normalized));
  return op("LayerNormalization", in, {{"axis", a}, {"epsilon", 1e-5}});
}

Value* Generator::matmul() {
  Value* x = pickRank(1, 4);
  const Shape& s = x->shape();
  Shape w = {s.back(), dim()};
  if (s.size() > 2 && chance(0.3)) w.insert(w.begin(), s[s.size() - 3]);  // a batched right operand
  if (chance(0.15)) w = {s.back()};                                      // a vector
  return chance(0.5) ? op("MatMul", {x, input(w)}) : op("MatMul", {input(Shape{dim(), w.front()}), op("Relu", {x})});
}

Value* Generator::gemm() {
  Value* a = pickRank(2, 2);
  bool transA = chance(0.4), transB = chance(0.4);
  int64_t m = a->shape()[transA ? 1 : 0], k = a->shape()[transA ? 0 : 1], n = dim();
  std::vector<Value*> in = {a, input(transB ? Shape{n, k} : Shape{k, n})};
  if (chance(0.7)) in.push_back(input(oneOf(std::vector<Shape>{{n}, {1, n}, {m, 1}, {m, n}, {}})));
  Attributes attrs{{"transA", int64_t(transA)}, {"transB", int64_t(transB)}};
  if (chance(0.3)) attrs["alpha"] = 0.5;
  if (chance(0.3)) attrs["beta"] = 2.0;
  return op("Gemm", in, attrs);
}

Value* Generator::conv() {
  Value* x = pickRank(3, 4, true);
  const Shape& s = x->shape();
  int64_t spatial = int64_t(s.size()) - 2, c = s[1];
  std::vector<int64_t> groups;
  for (int64_t g = 1; g <= c; ++g)
    if (c % g == 0) groups.push_back(g);
  int64_t group = chance(0.3) ? oneOf(groups) : 1, m = group * uniform(1, 3);
  Shape w = {m, c / group};
  std::vector<int64_t> strides, dilations, pads(size_t(2 * spatial), 0);
  for (int64_t i = 0; i < spatial; ++i) {
    w.push_back(uniform(1, 3));
    strides.push_back(uniform(1, 2));
    dilations.push_back(chance(0.2) ? 2 : 1);
    pads[size_t(i)] = pads[size_t(i + spatial)] = uniform(0, 1);
  }
  std::vector<Value*> in = {x, input(w)};
  if (chance(0.5)) in.push_back(input(Shape{m}));
  Attributes attrs{{"group", group}, {"strides", strides}, {"dilations", dilations}};
  if (chance(0.2)) attrs["auto_pad"] = "SAME_UPPER";
  else attrs["pads"] = pads;
  return op("Conv", in, attrs);
}

Value* Generator::pool() {
  Value* x = pickRank(3, 4, true);
  int64_t spatial = int64_t(x->shape().size()) - 2;
  if (chance(0.25)) return op(chance(0.5) ? "GlobalAveragePool" : "GlobalMaxPool", {x});
  std::vector<int64_t> kernel, strides, pads(size_t(2 * spatial), 0);
  for (int64_t i = 0; i < spatial; ++i) {
    kernel.push_back(uniform(1, 3));
    strides.push_back(uniform(1, 2));
    pads[size_t(i)] = pads[size_t(i + spatial)] = kernel.back() > 1 ? uniform(0, 1) : 0;
  }
  Attributes attrs{{"kernel_shape", kernel}, {"strides", strides}, {"pads", pads}};
  if (chance(0.2)) attrs["ceil_mode"] = int64_t(1);
  bool average = floats() && chance(0.5);
  if (average) attrs["count_include_pad"] = int64_t(chance(0.5));
  return op(average ? "AveragePool" : "MaxPool", {x}, attrs);
}

Value* Generator::transpose() {
  Value* x = pickRank(2, o_.maxRank);
  std::vector<int64_t> perm(x->shape().size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng_);
  return op("Transpose", {x}, {{"perm", perm}});
}

// A new shape for the same elements: the dims regrouped at random, with a 0 (keep) or a -1 (infer) sometimes.
Value* Generator::reshape() {
  Value* x = pickRank(1, o_.maxRank);
  std::vector<int64_t> to;
  for (int64_t d : x->shape()) {
    if (!to.empty() && chance(0.4)) to.back() *= d;
    else to.push_back(d);
  }
  if (chance(0.3)) to.push_back(1);
  if (to.size() > 1 && chance(0.3)) to[size_t(uniform(0, int64_t(to.size()) - 1))] = -1;
  if (chance(0.2) && to[0] == x->shape()[0]) to[0] = 0;
  return op("Reshape", {x, ints(to)});
}

Value* Generator::slice() {
  Value* x = pickRank(1, o_.maxRank);
  std::vector<int64_t> axes = axesSubset(int64_t(x->shape().size())), starts, ends, steps;
  for (int64_t a : axes) {
    int64_t d = x->shape()[size_t(a < 0 ? a + int64_t(x->shape().size()) : a)];
    int64_t step = oneOf(std::vector<int64_t>{1, 1, 2, -1, -2});
    int64_t lo = uniform(-d - 1, d + 1), hi = uniform(-d - 1, d + 1);
    if (step < 0) std::swap(lo, hi);
    starts.push_back(lo);
    ends.push_back(chance(0.1) ? (step > 0 ? INT64_MAX : INT64_MIN) : hi);
    steps.push_back(step);
  }
  return op("Slice", {x, ints(starts), ints(ends), ints(axes), ints(steps)});
}

Value* Generator::concat() {
  Value* x = pickRank(1, o_.maxRank);
  int64_t a = axis(int64_t(x->shape().size()));
  std::vector<Value*> in = {x};
  for (int64_t i = uniform(1, 2); i > 0; --i) {
    Shape s = x->shape();
    s[size_t(a < 0 ? a + int64_t(s.size()) : a)] = dim();
    in.push_back(chance(0.3) ? op(floats() ? "Tanh" : "Abs", {x}) : input(s));
  }
  std::shuffle(in.begin(), in.end(), rng_);
  return op("Concat", in, {{"axis", a}});
}

// Constant indices in range, negative ones included (ONNX counts them from the end).
Value* Generator::gather() {
  Value* x = pickRank(1, o_.maxRank, true);
  int64_t a = axis(int64_t(x->shape().size()));
  int64_t d = x->shape()[size_t(a < 0 ? a + int64_t(x->shape().size()) : a)];
  Shape is = shape(int(uniform(0, 2)), false);
  std::vector<int64_t> idx(size_t(numElements(is)));
  for (auto& i : idx) i = uniform(-d, d - 1);
  Value* indices = b_.constant(fresh('i'), Tensor::fromInts(DType::I64, is, idx));
  return op("Gather", {x, indices}, {{"axis", a}});
}

Value* Generator::expand() {
  Value* x = pickRank(0, o_.maxRank - 1);
  Shape to = x->shape();
  for (auto& d : to)
    if (d == 1 && chance(0.5)) d = dim(false);
  if (chance(0.5)) to.insert(to.begin(), dim(false));
  return op("Expand", {x, ints(to)});
}

// Unsqueeze at a random axis (negative or not), sometimes Squeezed back right away.
Value* Generator::unsqueeze() {
  Value* x = pickRank(0, o_.maxRank - 1);
  int64_t a = axis(int64_t(x->shape().size()) + 1);
  Value* u = op("Unsqueeze", {x, ints({a})});
  return chance(0.3) ? op("Squeeze", {u, ints({a})}) : u;
}

// Split into two along an axis; one part goes on (the other stays in the graph, maybe as an output).
Value* Generator::split() {
  Value* x = pickRank(1, o_.maxRank, true);
  int64_t a = axis(int64_t(x->shape().size()));
  int64_t d = x->shape()[size_t(a < 0 ? a + int64_t(x->shape().size()) : a)];
  int64_t first = uniform(0, d);
  std::string id = fresh('n');
  attempt_.push_back(id);
  std::vector<Value*> parts = b_.opN("Split", {x, ints({first, d - first})}, 2, {{"axis", a}}, id);
  pool_.push_back(parts[1]);
  return parts[0];
}

Value* Generator::pad() {
  Value* x = pickRank(1, o_.maxRank, true);
  std::vector<int64_t> pads;
  for (size_t i = 0; i < 2 * x->shape().size(); ++i) pads.push_back(uniform(0, 2));
  std::string mode = oneOf(std::vector<std::string>{"constant", "constant", "edge", "reflect"});
  std::vector<Value*> in = {x, ints(pads)};
  if (mode == "constant" && chance(0.5)) in.push_back(scalar(0.5));
  return op("Pad", in, {{"mode", mode}});
}

// To a float type no wider than the value's, or integer to float: a widening cast of a computed value would
// compare a float's rounding at the wider type's tolerance (the reference rounds each node's result once).
Value* Generator::cast() {
  Value* x = pickRank(0, o_.maxRank);
  const int64_t kFloat = 1, kFloat16 = 10, kDouble = 11;  // ONNX TensorProto.DataType codes
  std::vector<int64_t> narrower = {kFloat16};
  if (dtype_ != DType::F16) narrower.push_back(kFloat);
  if (dtype_ == DType::F64) narrower.push_back(kDouble);
  int64_t to = floats() ? oneOf(narrower) : kFloat;
  return op("Cast", {x}, {{"to", to}});
}

// Draws one op; a draw that type inference refuses is undone (its nodes removed) and reported as false.
bool Generator::addOne() {
  static const std::vector<Family> families = {
      &Generator::unary,  &Generator::unary,     &Generator::binary,  &Generator::binary,  &Generator::where,
      &Generator::reduce, &Generator::softmax,   &Generator::layerNorm, &Generator::matmul, &Generator::gemm,
      &Generator::conv,   &Generator::pool,      &Generator::transpose, &Generator::reshape, &Generator::slice,
      &Generator::concat, &Generator::gather,    &Generator::expand,  &Generator::unsqueeze, &Generator::split,
      &Generator::pad,    &Generator::cast};
  Family f = oneOf(families);
  attempt_.clear();
  try {
    Value* v = (this->*f)();
    pool_.push_back(v);
    return true;
  } catch (const Error&) {
    for (auto it = attempt_.rbegin(); it != attempt_.rend(); ++it)
      if (Node* n = b_.graph().findNode(*it)) b_.graph().removeNode(n);
    dropUnused();
    return false;
  }
}

void Generator::dropUnused() {
  std::vector<Value*> unused;
  for (Value* v : b_.graph().values())
    if ((v->isGraphInput() || v->initializer()) && v->uses().empty() && !v->isGraphOutput()) unused.push_back(v);
  for (Value* v : unused) b_.graph().removeValue(v);
}

Graph Generator::run() {
  dtype_ = oneOf(std::vector<DType>{DType::F32, DType::F32, DType::F32, DType::F32, DType::F32, DType::F64,
                                    DType::F16, DType::I64});
  int ops = int(uniform(o_.minOps, o_.maxOps));
  for (int tries = 0; tries < 20 * ops && int(pool_.size()) < ops; ++tries) addOne();
  if (pool_.empty()) pool_.push_back(op("Abs", {input(shape(2))}));
  for (Value* v : pool_)  // the sinks, and now and then a value that is also used inside
    if (v->uses().empty() || chance(0.15)) b_.output(v);
  dropUnused();
  return b_.finish();
}

}  // namespace

Graph generateGraph(uint64_t seed, const GenOptions& options) { return Generator(seed, options).run(); }

}  // namespace tessera::fuzz
