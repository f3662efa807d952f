#pragma once
// A run's tensor values looked at: statistics and a histogram, a 2-D slice, the error against the reference
// interpreter (where it is worst), per-node accuracy, and keeping only the values asked for within a budget.
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/cancel.h"
#include "ir/graph.h"
#include "runtime/execute/run_report.h"

namespace tessera::compare {

using Values = std::unordered_map<std::string, Tensor>;

struct TensorStats {
  DType dtype = DType::F32;
  Shape shape;
  int64_t count = 0;
  double min = 0, max = 0, mean = 0, std = 0;  // over the finite elements (0 when there are none)
  int64_t nans = 0, infs = 0;
  double histLo = 0, histHi = 0;   // the histogram spans [min, max] of the finite elements
  std::vector<int64_t> histogram;  // equal-width bins
};
TensorStats tensorStats(const Tensor& t, int bins = 32);

// The last two dimensions at `fixed` indices of the others (missing ones 0, each clamped into range): a rank-1
// tensor is one row, a scalar one cell. At most maxRows x maxCols from the top left.
struct Slice2D {
  int64_t rows = 0, cols = 0;        // of the slice shown
  int64_t totalRows = 0, totalCols = 0;
  std::vector<int64_t> fixed;        // the indices used for the leading dimensions
  std::vector<double> values;        // rows x cols, row-major (numbers)
  std::vector<std::string> texts;    // rows x cols, row-major (a string tensor's; `values` is then empty)
};
Slice2D slice2D(const Tensor& t, std::vector<int64_t> fixed, int64_t maxRows = 64, int64_t maxCols = 64);

// Element-wise |actual - reference|, and relative to max(|reference|, rms(reference)/10) (the floor keeps
// elements near zero from dominating, as the run's own check does). Where: the multi-index of the worst.
struct TensorError {
  bool comparable = true;  // false: the shapes or element counts differ (`message` says how)
  double maxAbs = 0, maxRel = 0;
  std::vector<int64_t> whereAbs, whereRel;
  int64_t nanMismatches = 0;  // NaN on one side only
  std::string message;
};
TensorError tensorError(const Tensor& actual, const Tensor& reference);
std::vector<int64_t> multiIndex(int64_t flat, const Shape& shape);

// Every value of `graph` from the reference interpreter on the run's graph inputs (RunReport::values, kept by
// RunOptions::keepValues). Throws Error naming a graph input the run did not keep.
Values referenceValues(const Graph& graph, const Values& run, const CancelToken& cancel = {});
// Node id → the worst relative error of its outputs that both sides hold (nodes inside a fused kernel have no
// value of their own in a run: they are absent).
std::map<std::string, double> nodeErrors(const Graph& graph, const Values& run, const Values& reference);

// The values named (all when `names` is empty), in name order, each kept while it fits in what is left of
// `budgetBytes`; those that do not are listed as dropped. A name the run does not hold is listed as missing.
struct KeptValues {
  std::map<std::string, Tensor> values;
  std::vector<std::string> dropped, missing;
  int64_t bytes = 0;
};
KeptValues keepWithinBudget(const Values& values, const std::vector<std::string>& names, int64_t budgetBytes);

}  // namespace tessera::compare
