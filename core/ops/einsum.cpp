// Einsum: sums of products over labelled axes ("bij,bjk->bik"). A label repeated within one term takes the
// diagonal; "..." stands for the same broadcast dims in every term; without "->" the output is the ellipsis
// dims then the labels used once, in alphabetical order. Computed in double over every label combination
// (the reference is for correctness, not speed) and rounded once.
#include <algorithm>
#include <map>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

// Labels as small ints: 'a'..'z' 0-25, 'A'..'Z' 26-51, the ellipsis dims 52, 53, ... (aligned from the right).
constexpr int kEllipsisBase = 52;

struct EinsumPlan {
  std::vector<std::vector<int>> terms;  // one label per dim of each input
  std::vector<int> output;
  std::map<int, int64_t> extent;        // label -> size
  std::vector<int> all;                 // output labels then the summed ones
};

// One term's labels: letters, at most one "...", which covers `rank` minus the letters (for the output term,
// rank < 0: the widest input ellipsis).
std::vector<int> parseTerm(const Node& node, const std::string& term, int64_t rank, int64_t& ellipsisRank) {
  size_t dots = term.find("...");
  int64_t explicitCount = int64_t(term.size()) - (dots == std::string::npos ? 0 : 3);
  std::vector<int> out;
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      int64_t n = rank >= 0 ? rank - explicitCount : ellipsisRank;
      if (n < 0) failNode(node, "term '" + term + "' has more labels than its input's rank " + std::to_string(rank));
      ellipsisRank = std::max(ellipsisRank, n);
      for (int64_t k = 0; k < n; ++k) out.push_back(kEllipsisBase + int(n - 1 - k));  // counted from the right
      i += 2;
      continue;
    }
    char c = term[i];
    if (c >= 'a' && c <= 'z') out.push_back(c - 'a');
    else if (c >= 'A' && c <= 'Z') out.push_back(26 + c - 'A');
    else failNode(node, "equation term '" + term + "' has the character '" + std::string(1, c) + "'");
  }
  if (rank >= 0 && int64_t(out.size()) != rank)
    failNode(node, "term '" + term + "' has " + std::to_string(out.size()) + " labels for an input of rank " +
                       std::to_string(rank));
  return out;
}

std::string stripped(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ') out += c;
  return out;
}

EinsumPlan einsumPlan(const Node& node, const std::vector<Shape>& shapes) {
  std::string eq = stripped(node.attrString("equation", ""));
  if (eq.empty()) failNode(node, "attribute 'equation' is required");
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    failNode(node, "equation '" + eq + "' has " + std::to_string(terms.size()) + " terms for " +
                       std::to_string(shapes.size()) + " inputs");
  EinsumPlan p;
  int64_t ellipsisRank = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    p.terms.push_back(parseTerm(node, terms[t], int64_t(shapes[t].size()), ellipsisRank));
    for (size_t d = 0; d < shapes[t].size(); ++d) {
      int label = p.terms[t][d];
      int64_t n = shapes[t][d];
      auto [it, fresh] = p.extent.emplace(label, n);
      bool broadcast = label >= kEllipsisBase && (it->second == 1 || n == 1);
      if (broadcast) it->second = std::max(it->second, n);
      else if (!fresh && it->second != n)
        failNode(node, "label size mismatch in '" + eq + "': " + std::to_string(it->second) + " vs " +
                           std::to_string(n) + " (input " + std::to_string(t) + ", dim " + std::to_string(d) + ")");
    }
  }
  if (arrow != std::string::npos) {
    p.output = parseTerm(node, eq.substr(arrow + 2), -1, ellipsisRank);
  } else {
    for (int64_t k = ellipsisRank; k-- > 0;) p.output.push_back(kEllipsisBase + int(k));
    std::map<int, int> uses;
    for (const auto& t : p.terms)
      for (int l : t) uses[l] += 1;
    for (auto [l, n] : uses)
      if (n == 1 && l < kEllipsisBase) p.output.push_back(l);
  }
  for (int l : p.output) {
    if (!p.extent.count(l)) failNode(node, "output of '" + eq + "' has a label no input has");
    if (std::count(p.output.begin(), p.output.end(), l) > 1) failNode(node, "output of '" + eq + "' repeats a label");
  }
  p.all = p.output;
  for (auto [l, n] : p.extent)
    if (std::find(p.all.begin(), p.all.end(), l) == p.all.end()) p.all.push_back(l);
  return p;
}

std::vector<Shape> inputShapes(const InferContext& ctx) {
  std::vector<Shape> s;
  for (size_t i = 0; i < ctx.numInputs(); ++i) {
    requireDType(ctx, i, DTypeClass::Numeric);
    if (i) requireSameDType(ctx, 0, i);
    s.push_back(ctx.input(i).shape);
  }
  return s;
}

void inferEinsum(InferContext& ctx) {
  EinsumPlan p = einsumPlan(ctx.node(), inputShapes(ctx));
  Shape out;
  for (int l : p.output) out.push_back(p.extent[l]);
  ctx.outputs[0] = {ctx.input(0).dtype, out};
}

// Offset of each input's element at the label values `at`, as a sum of per-label strides (a label repeated in a
// term adds its strides, which walks the diagonal; a broadcast dim of size 1 has stride 0).
std::vector<std::vector<int64_t>> labelStrides(const EinsumPlan& p, const std::vector<const Tensor*>& in) {
  std::vector<std::vector<int64_t>> strides(in.size(), std::vector<int64_t>(p.all.size(), 0));
  for (size_t t = 0; t < in.size(); ++t) {
    std::vector<int64_t> s = stridesOf(in[t]->shape());
    for (size_t d = 0; d < s.size(); ++d) {
      size_t slot = size_t(std::find(p.all.begin(), p.all.end(), p.terms[t][d]) - p.all.begin());
      if (in[t]->shape()[d] != 1) strides[t][slot] += s[d];
    }
  }
  return strides;
}

std::vector<Tensor> evalEinsum(const Node& node, const std::vector<const Tensor*>& in,
                               const std::vector<TensorType>& types) {
  std::vector<Shape> shapes;
  for (const Tensor* t : in) shapes.push_back(t->shape());
  EinsumPlan p = einsumPlan(node, shapes);
  std::vector<std::vector<double>> values;
  for (const Tensor* t : in) values.push_back(t->toDoubles());
  std::vector<std::vector<int64_t>> strides = labelStrides(p, in);
  std::vector<int64_t> extents;
  for (int l : p.all) extents.push_back(p.extent[l]);
  int64_t outCount = numElements(types[0].shape), summed = 1;
  for (size_t k = p.output.size(); k < p.all.size(); ++k) summed *= extents[k];
  requireWorkBuffer(node, outCount);
  std::vector<double> out(size_t(outCount), 0.0);
  std::vector<int64_t> at(p.all.size(), 0);
  for (int64_t o = 0; o < outCount && summed > 0; ++o)
    for (int64_t s = 0; s < summed; ++s) {
      double product = 1;
      for (size_t t = 0; t < in.size(); ++t) {
        int64_t off = 0;
        for (size_t k = 0; k < at.size(); ++k) off += at[k] * strides[t][k];
        product *= values[t][size_t(off)];
      }
      out[size_t(o)] += product;
      for (size_t k = at.size(); k-- > 0;)  // odometer: summed labels fastest, output labels in output order
        if (++at[k] < extents[k]) break; else at[k] = 0;
    }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, out)};
}

}  // namespace

void registerEinsumOps(OpRegistry& r) {
  addOp(r, {"Einsum", OpCategory::Other, "sum of products over labelled axes, as numpy.einsum's equation says", 1,
            64, 1, 1, {}, inferEinsum, evalEinsum});
}

}  // namespace tessera
