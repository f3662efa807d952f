// ai.onnx.ml's ops: LabelEncoder (keys to values, any of strings, integers and floats), Binarizer,
// ArrayFeatureExtractor and TreeEnsemble. Their names carry the domain (ops/registry.h, qualifiedOpName).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <variant>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

std::string mlOp(const char* name) { return qualifiedOpName("ai.onnx.ml", name); }

// --- LabelEncoder (ai.onnx.ml): each element looked up in keys and replaced by the value at the same
// position, or by the default. Keys and values are given as keys_strings / keys_int64s / keys_floats or
// keys_tensor (the same for values_*), the default as default_string ("_Unused"), default_int64 (-1),
// default_float (-0.0) or default_tensor.

struct Labels {
  Tensor keys, values, fallback;
};

// The attribute named `prefix` + one of the suffixes as a 1-D tensor, or an empty Tensor when none is set.
Tensor labelAttribute(const Node& node, const std::string& prefix) {
  if (const Attribute* a = node.attr(prefix + "strings"))
    return Tensor::strings({int64_t(a->strings().size())}, a->strings());
  if (const Attribute* a = node.attr(prefix + "int64s"))
    return Tensor::fromInts(DType::I64, {int64_t(a->ints().size())}, a->ints());
  if (const Attribute* a = node.attr(prefix + "floats"))
    return Tensor::fromDoubles(DType::F32, {int64_t(a->floats().size())}, a->floats());
  if (const Attribute* a = node.attr(prefix + "tensor")) return a->t();
  return {};
}

Labels labels(const Node& node) {
  Labels l{labelAttribute(node, "keys_"), labelAttribute(node, "values_"), {}};
  if (l.keys.empty() || l.values.empty()) failNode(node, "needs keys (keys_*) and values (values_*)");
  if (l.keys.numElements() != l.values.numElements())
    failNode(node, std::to_string(l.keys.numElements()) + " keys but " + std::to_string(l.values.numElements()) +
                       " values");
  const DType v = l.values.dtype();
  if (const Attribute* t = node.attr("default_tensor")) {
    l.fallback = t->t();
    if (l.fallback.dtype() != v || l.fallback.numElements() != 1)
      failNode(node, "default_tensor is " + l.fallback.type().toString() + "; it must be one " +
                         std::string(dtypeName(v)));
  } else if (v == DType::String) {
    l.fallback = Tensor::strings({1}, {node.attrString("default_string", "_Unused")});
  } else if (isFloat(v)) {
    l.fallback = Tensor::fromDoubles(v, {1}, std::vector<double>{node.attrFloat("default_float", -0.0)});
  } else {
    l.fallback = Tensor::fromInts(v, {1}, std::vector<int64_t>{node.attrInt("default_int64", -1)});
  }
  return l;
}

// One element as a key: strings as they are, numbers as their double (an int64 key beyond 2^53 may meet
// another; ONNX's keys are labels, not such numbers).
using Key = std::variant<std::string, double>;
Key keyAt(const Tensor& t, int64_t i) {
  if (t.holdsStrings()) return t.strings()[size_t(i)];
  return t.getDouble(i);
}

void inferLabelEncoder(InferContext& ctx) {
  Labels l = labels(ctx.node());
  if ((ctx.input(0).dtype == DType::String) != l.keys.holdsStrings())
    ctx.error("input 0 is " + ctx.input(0).toString() + " but the keys are " + std::string(dtypeName(l.keys.dtype())));
  ctx.outputs[0] = {l.values.dtype(), ctx.input(0).shape};
}

std::vector<Tensor> evalLabelEncoder(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  Labels l = labels(node);
  std::map<Key, int64_t> index;
  for (int64_t i = l.keys.numElements(); i-- > 0;) index[keyAt(l.keys, i)] = i;  // the first of equal keys wins
  const Tensor& x = *in[0];
  const int64_t n = x.numElements();
  auto source = [&](int64_t i) {
    auto it = index.find(keyAt(x, i));
    return it == index.end() ? std::pair{&l.fallback, int64_t(0)} : std::pair{&l.values, it->second};
  };
  if (l.values.holdsStrings()) {
    std::vector<std::string> out;
    for (int64_t i = 0; i < n; ++i) {
      auto [t, at] = source(i);
      out.push_back(t->strings()[size_t(at)]);
    }
    return {Tensor::strings(types[0].shape, std::move(out))};
  }
  Tensor y(types[0].dtype, types[0].shape);
  for (int64_t i = 0; i < n; ++i) {
    auto [t, at] = source(i);
    if (isFloat(y.dtype())) y.setDouble(i, t->getDouble(at));
    else y.setInt(i, t->getInt(at));
  }
  return {y};
}

// --- Binarizer: 1 where x > threshold, else 0, in x's dtype.

void inferBinarizer(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Numeric);
  ctx.outputs[0] = ctx.input(0);
}

std::vector<Tensor> evalBinarizer(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  const double threshold = node.attrFloat("threshold", 0.0);
  std::vector<double> x = in[0]->toDoubles();
  for (double& v : x) v = v > threshold ? 1.0 : 0.0;
  return {fromDoublesRounded(types[0].dtype, types[0].shape, x)};
}

// --- ArrayFeatureExtractor(X, Y): the elements of X's last axis at the indices Y (all of them, flattened), for
// every position of the other axes; a 1-D X gives one row, [1, |Y|].

Shape extractedShape(const Shape& x, int64_t count) {
  if (x.size() <= 1) return {1, count};
  Shape out(x.begin(), x.end() - 1);
  out.push_back(count);
  return out;
}

void inferExtractor(InferContext& ctx) {
  requireDType(ctx, 1, {DType::I64});
  if (ctx.input(0).shape.empty()) ctx.error("input 0 is a scalar; it needs an axis to take features from");
  ctx.outputs[0] = {ctx.input(0).dtype, extractedShape(ctx.input(0).shape, ctx.input(1).numElements())};
}

std::vector<Tensor> evalExtractor(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  const Tensor& x = *in[0];
  const int64_t last = x.shape().back(), rows = last ? x.numElements() / last : 0;
  std::vector<int64_t> index = in[1]->toInts();
  for (size_t k = 0; k < index.size(); ++k)
    if (index[k] < 0 || index[k] >= last)
      failNode(node, indexOutOfRange(1, node.input(1)->name(), in[1]->shape(), int64_t(k), index[k], int64_t(x.shape().size()) - 1, last));
  Tensor y(types[0].dtype, types[0].shape);
  const size_t e = dtypeSize(x.dtype());
  const std::byte* src = x.bytes().data();
  std::byte* dst = y.mutableBytes().data();
  for (int64_t r = 0; r < rows; ++r)
    for (size_t k = 0; k < index.size(); ++k)
      std::memcpy(dst + (size_t(r) * index.size() + k) * e, src + size_t(r * last + index[k]) * e, e);
  return {y};
}

// --- TreeEnsemble (opset 5): each row of X [N, F] walks every tree from its root: an interior node compares
// one feature with its split (<=, <, >=, >, ==, != or set membership; NaN goes the true way where
// nodes_missing_value_tracks_true says so) and goes to its true or false child, which is a node or, where
// nodes_trueleafs / nodes_falseleafs say so, a leaf (a weight for one target). The leaves' weights are summed,
// averaged, or their min or max taken per target: Y [N, n_targets]. Only post_transform NONE is read.

struct Trees {
  std::vector<int64_t> roots, features, modes, trueIds, falseIds, trueLeafs, falseLeafs, missingTrue, leafTargets;
  std::vector<double> splits, leafWeights;
  std::vector<std::vector<double>> members;  // by node: the set of a MEMBER node, else empty
  int64_t targets = 0, aggregate = 1;
};

std::vector<double> tensorAttrDoubles(const Node& node, const char* name) {
  const Attribute* a = node.attr(name);
  if (!a) return {};
  if (a->kind() != AttrKind::Tensor) failNode(node, std::string("attribute ") + name + " must be a tensor");
  return a->t().toDoubles();
}

Trees trees(const Node& node) {
  Trees t;
  t.roots = node.attrInts("tree_roots");
  t.features = node.attrInts("nodes_featureids");
  t.trueIds = node.attrInts("nodes_truenodeids");
  t.falseIds = node.attrInts("nodes_falsenodeids");
  t.trueLeafs = node.attrInts("nodes_trueleafs");
  t.falseLeafs = node.attrInts("nodes_falseleafs");
  t.leafTargets = node.attrInts("leaf_targetids");
  t.missingTrue = node.attrInts("nodes_missing_value_tracks_true");
  t.splits = tensorAttrDoubles(node, "nodes_splits");
  t.leafWeights = tensorAttrDoubles(node, "leaf_weights");
  for (double m : tensorAttrDoubles(node, "nodes_modes")) t.modes.push_back(int64_t(m));
  t.targets = node.attrInt("n_targets", 0);
  t.aggregate = node.attrInt("aggregate_function", 1);
  const size_t n = t.modes.size();
  for (const auto* v : {&t.features, &t.trueIds, &t.falseIds, &t.trueLeafs, &t.falseLeafs})
    if (v->size() != n) failNode(node, "the nodes_* attributes differ in length (" + std::to_string(n) + " modes)");
  if (t.splits.size() != n) failNode(node, "nodes_splits holds " + std::to_string(t.splits.size()) + " values for " + std::to_string(n) + " nodes");
  if (!t.missingTrue.empty() && t.missingTrue.size() != n) failNode(node, "nodes_missing_value_tracks_true differs in length from nodes_modes");
  if (t.leafWeights.size() != t.leafTargets.size()) failNode(node, "leaf_weights and leaf_targetids differ in length");
  if (t.targets <= 0) failNode(node, "attribute n_targets must be positive");
  if (t.aggregate < 0 || t.aggregate > 3) failNode(node, "aggregate_function = " + std::to_string(t.aggregate) + " is not 0..3");
  if (node.attrInt("post_transform", 0) != 0) failNode(node, "post_transform other than NONE (0) is not supported");
  // The members of each MEMBER node, in the order of nodes_modes, each set ended by a NaN.
  std::vector<double> all = tensorAttrDoubles(node, "membership_values");
  t.members.resize(n);
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    if (t.modes[i] < 0 || t.modes[i] > 6) failNode(node, "nodes_modes[" + std::to_string(i) + "] = " + std::to_string(t.modes[i]) + " is not 0..6");
    if (t.modes[i] != 6) continue;
    if (at >= all.size()) failNode(node, "membership_values has no set for set-membership node " + std::to_string(i));
    for (; at < all.size() && !std::isnan(all[at]); ++at) t.members[i].push_back(all[at]);
    ++at;  // the NaN
  }
  for (int64_t r : t.roots)
    if (r < 0 || r >= int64_t(n)) failNode(node, "tree root " + std::to_string(r) + " is not a node (" + std::to_string(n) + " nodes)");
  return t;
}

bool goesTrue(const Trees& t, size_t i, double x) {
  if (std::isnan(x) && !t.missingTrue.empty() && t.missingTrue[i]) return true;
  const double s = t.splits[i];
  switch (t.modes[i]) {
    case 0: return x <= s;
    case 1: return x < s;
    case 2: return x >= s;
    case 3: return x > s;
    case 4: return x == s;
    case 5: return x != s;
    default: return std::find(t.members[i].begin(), t.members[i].end(), x) != t.members[i].end();
  }
}

// The leaf one row reaches in the tree at `root`.
size_t leafOf(const Node& node, const Trees& t, int64_t root, const double* row, int64_t features) {
  size_t i = size_t(root);
  if (t.trueLeafs[i] && t.falseLeafs[i] && t.trueIds[i] == t.falseIds[i]) return i;  // a tree that is one leaf
  for (size_t steps = 0; steps <= t.modes.size(); ++steps) {
    const int64_t f = t.features[i];
    if (f < 0 || f >= features) failNode(node, "node " + std::to_string(i) + " reads feature " + std::to_string(f) + " of " + std::to_string(features));
    const bool right = goesTrue(t, i, row[f]);
    const int64_t next = right ? t.trueIds[i] : t.falseIds[i];
    const bool leaf = right ? t.trueLeafs[i] : t.falseLeafs[i];
    const int64_t bound = int64_t(leaf ? t.leafWeights.size() : t.modes.size());
    if (next < 0 || next >= bound) failNode(node, "node " + std::to_string(i) + " leads to " + (leaf ? "leaf " : "node ") + std::to_string(next) + ", which does not exist");
    if (leaf) return size_t(next);
    i = size_t(next);
  }
  failNode(node, "the tree at root " + std::to_string(root) + " has a cycle");
}

void inferTreeEnsemble(InferContext& ctx) {
  requireDType(ctx, 0, DTypeClass::Float);
  if (ctx.input(0).shape.size() != 2) ctx.error("input 0 is " + ctx.input(0).toString() + "; X must be [N, F]");
  Trees t = trees(ctx.node());
  ctx.outputs[0] = {ctx.input(0).dtype, {ctx.input(0).shape[0], t.targets}};
}

std::vector<Tensor> evalTreeEnsemble(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  Trees t = trees(node);
  const int64_t rows = in[0]->shape()[0], features = in[0]->shape()[1];
  std::vector<double> x = in[0]->toDoubles();
  const double start = t.aggregate == 2 ? std::numeric_limits<double>::max() : t.aggregate == 3 ? std::numeric_limits<double>::lowest() : 0.0;
  std::vector<double> y(size_t(rows * t.targets), start);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t root : t.roots) {
      const size_t leaf = leafOf(node, t, root, x.data() + r * features, features);
      const int64_t target = t.leafTargets[leaf];
      if (target < 0 || target >= t.targets) failNode(node, "leaf " + std::to_string(leaf) + " votes for target " + std::to_string(target) + " of " + std::to_string(t.targets));
      double& out = y[size_t(r * t.targets + target)];
      const double w = t.leafWeights[leaf];
      if (t.aggregate == 1) out += w;
      else if (t.aggregate == 0) out += w / double(t.roots.size());
      else out = t.aggregate == 2 ? std::min(out, w) : std::max(out, w);
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerMlOps(OpRegistry& r) {
  addOp(r, {mlOp("LabelEncoder"), OpCategory::Other,
            "each key replaced by its value, else the default (strings, integers, floats)", 1, 1, 1, 1, {},
            inferLabelEncoder, evalLabelEncoder}, {.strings = true});
  addOp(r, {mlOp("Binarizer"), OpCategory::Other, "y = x > threshold ? 1 : 0", 1, 1, 1, 1, {}, inferBinarizer, evalBinarizer});
  addOp(r, {mlOp("TreeEnsemble"), OpCategory::Other, "a tree ensemble's leaf weights per target (sum, average, min, max)",
            1, 1, 1, 1, {}, inferTreeEnsemble, evalTreeEnsemble});
  addOp(r, {mlOp("ArrayFeatureExtractor"), OpCategory::Other, "the elements of the last axis at the given indices",
            2, 2, 1, 1, {}, inferExtractor, evalExtractor});
}

}  // namespace tessera
