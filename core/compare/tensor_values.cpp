#include "compare/tensor_values.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ir/error.h"
#include "runtime/reference/interpreter.h"

namespace tessera::compare {

TensorStats tensorStats(const Tensor& t, int bins) {
  TensorStats s;
  s.dtype = t.dtype();
  s.shape = t.shape();
  s.count = t.numElements();
  if (t.holdsObjects()) return s;  // strings, sequences, optionals: no numbers to count or bin
  const std::vector<double> v = t.toDoubles();
  double sum = 0, sq = 0;
  int64_t finite = 0;
  s.min = INFINITY, s.max = -INFINITY;
  for (double x : v) {
    if (std::isnan(x)) ++s.nans;
    else if (std::isinf(x)) ++s.infs;
    else {
      ++finite, sum += x, sq += x * x;
      s.min = std::min(s.min, x), s.max = std::max(s.max, x);
    }
  }
  if (finite == 0) s.min = s.max = 0;
  s.mean = finite ? sum / double(finite) : 0;
  s.std = finite ? std::sqrt(std::max(0.0, sq / double(finite) - s.mean * s.mean)) : 0;
  s.histLo = s.min, s.histHi = s.max;
  s.histogram.assign(size_t(std::max(bins, 1)), 0);
  const double width = (s.max - s.min) / double(s.histogram.size());
  for (double x : v) {
    if (!std::isfinite(x)) continue;
    size_t b = width > 0 ? size_t((x - s.min) / width) : 0;
    ++s.histogram[std::min(b, s.histogram.size() - 1)];
  }
  return s;
}

std::vector<int64_t> multiIndex(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] <= 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

Slice2D slice2D(const Tensor& t, std::vector<int64_t> fixed, int64_t maxRows, int64_t maxCols) {
  const Shape& shape = t.shape();
  const size_t rank = shape.size();
  const size_t lead = rank >= 2 ? rank - 2 : 0;
  Slice2D s;
  fixed.resize(lead, 0);
  for (size_t d = 0; d < lead; ++d) fixed[d] = std::clamp<int64_t>(fixed[d], 0, std::max<int64_t>(shape[d] - 1, 0));
  s.fixed = fixed;
  s.totalRows = rank >= 2 ? shape[rank - 2] : 1;
  s.totalCols = rank >= 1 ? shape[rank - 1] : 1;
  s.rows = std::min(s.totalRows, maxRows);
  s.cols = std::min(s.totalCols, maxCols);
  if (t.numElements() == 0 || t.isContainer()) return s.rows = s.cols = 0, s;
  int64_t base = 0;
  for (size_t d = 0; d < lead; ++d) base = base * shape[d] + fixed[d];
  base *= s.totalRows * s.totalCols;
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t c = 0; c < s.cols; ++c) {
      const int64_t at = base + r * s.totalCols + c;
      if (t.holdsStrings()) s.texts.push_back(t.strings()[size_t(at)]);
      else s.values.push_back(t.getDouble(at));
    }
  return s;
}

TensorError tensorError(const Tensor& actual, const Tensor& reference) {
  TensorError e;
  if (actual.shape() != reference.shape()) {
    e.comparable = false;
    e.message = "shape " + shapeToString(actual.shape()) + " against the reference's " + shapeToString(reference.shape());
    return e;
  }
  if (actual.holdsObjects() || reference.holdsObjects()) {
    e.comparable = false;
    e.message = "a " + actual.type().toString() + " has no numbers to measure an error on; it is equal or not";
    return e;
  }
  const std::vector<double> a = actual.toDoubles(), r = reference.toDoubles();
  double sq = 0;
  for (double x : r) sq += std::isfinite(x) ? x * x : 0;
  const double floor = std::max(std::sqrt(sq / double(std::max<size_t>(r.size(), 1))) / 10, 1e-30);
  int64_t atAbs = -1, atRel = -1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(r[i])) ++e.nanMismatches;
    const double abs = std::fabs(a[i] - r[i]);
    if (!std::isfinite(abs)) continue;
    const double rel = abs / std::max(std::fabs(r[i]), floor);
    if (abs > e.maxAbs) e.maxAbs = abs, atAbs = int64_t(i);
    if (rel > e.maxRel) e.maxRel = rel, atRel = int64_t(i);
  }
  if (atAbs >= 0) e.whereAbs = multiIndex(atAbs, actual.shape());
  if (atRel >= 0) e.whereRel = multiIndex(atRel, actual.shape());
  return e;
}

Values referenceValues(const Graph& graph, const Values& run, const CancelToken& cancel) {
  std::vector<Tensor> inputs;
  for (const Value* in : graph.inputs()) {
    auto it = run.find(in->name());
    if (it == run.end()) fail("the run did not keep graph input '" + in->name() + "' (run with values kept)");
    inputs.push_back(it->second);
  }
  ReferenceOptions o;
  o.keepAll = true;
  o.cancel = cancel;
  ReferenceResult r = runReference(graph, inputs, o);
  return std::move(r.values);
}

std::map<std::string, double> nodeErrors(const Graph& graph, const Values& run, const Values& reference) {
  std::map<std::string, double> out;
  for (const Node* n : graph.topoOrder())
    for (const Value* v : n->outputs()) {
      if (!v) continue;
      auto a = run.find(v->name()), r = reference.find(v->name());
      if (a == run.end() || r == reference.end()) continue;
      const TensorError e = tensorError(a->second, r->second);
      if (!e.comparable) continue;
      out[n->id()] = std::max(out.count(n->id()) ? out[n->id()] : 0.0, e.maxRel);
    }
  return out;
}

KeptValues keepWithinBudget(const Values& values, const std::vector<std::string>& names, int64_t budgetBytes) {
  KeptValues k;
  std::set<std::string> wanted(names.begin(), names.end());
  if (names.empty())
    for (const auto& [name, t] : values) wanted.insert(name);
  for (const std::string& name : wanted) {
    auto it = values.find(name);
    if (it == values.end()) {
      k.missing.push_back(name);
      continue;
    }
    const int64_t bytes = int64_t(it->second.byteSize());
    if (k.bytes + bytes > budgetBytes) {
      k.dropped.push_back(name);
      continue;
    }
    k.bytes += bytes;
    k.values.emplace(name, it->second);
  }
  return k;
}

}  // namespace tessera::compare
