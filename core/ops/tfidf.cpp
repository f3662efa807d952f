// TfIdfVectorizer over integer tokens: counts the pool's n-grams (lengths min_gram_length..max_gram_length, their
// items up to max_skip_count tokens apart) in each row of X [C] or [N, C] and writes them at ngram_indexes as
// counts (TF), weights of the n-grams present (IDF) or counts times weights (TFIDF). The counting walks a trie of
// the pool and counts unigrams once, whatever the skip, as ONNX's reference does.
#include <algorithm>
#include <map>
#include <memory>

#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

struct Trie {
  int64_t output = -1;  // the output index of the n-gram ending here, -1 for a prefix only
  std::map<int64_t, std::unique_ptr<Trie>> next;
};

struct TfIdfPlan {
  Trie root;
  int64_t width = 0;  // max(ngram_indexes) + 1
};

TfIdfPlan tfidfPlan(const Node& node) {
  std::vector<int64_t> pool = node.attrInts("pool_int64s"), counts = node.attrInts("ngram_counts");
  std::vector<int64_t> indexes = node.attrInts("ngram_indexes");
  if (pool.empty() || counts.empty())
    failNode(node, "needs pool_int64s and ngram_counts (string pools are not supported)");
  TfIdfPlan p;
  size_t gram = 0;
  for (size_t n = 1; n <= counts.size(); ++n) {
    size_t start = size_t(counts[n - 1]), end = n < counts.size() ? size_t(counts[n]) : pool.size();
    if (start > end || end > pool.size() || (end - start) % n)
      failNode(node, "ngram_counts " + intsToString(counts) + " does not split the pool into whole " +
                         std::to_string(n) + "-grams");
    for (size_t at = start; at < end; at += n, ++gram) {
      if (gram >= indexes.size()) failNode(node, "ngram_indexes has fewer entries than the pool has n-grams");
      Trie* t = &p.root;
      for (size_t k = 0; k < n; ++k) {
        auto& child = t->next[pool[at + k]];
        if (!child) child = std::make_unique<Trie>();
        t = child.get();
      }
      if (indexes[gram] < 0) failNode(node, "ngram_indexes holds the negative index " + std::to_string(indexes[gram]));
      t->output = indexes[gram];
      p.width = std::max(p.width, indexes[gram] + 1);
    }
  }
  return p;
}

void inferTfIdf(InferContext& ctx) {
  requireDType(ctx, 0, {DType::I64, DType::I32});
  const Shape& x = ctx.input(0).shape;
  if (x.empty() || x.size() > 2) ctx.error("input 0 must be [C] or [N, C], not " + ctx.input(0).toString());
  std::string mode = ctx.node().attrString("mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") ctx.error("mode '" + mode + "' is not TF, IDF or TFIDF");
  int64_t width = tfidfPlan(ctx.node()).width;
  size_t weights = ctx.node().attrFloats("weights").size();
  if (weights && weights < size_t(width)) ctx.error("weights has " + std::to_string(weights) + " values for " +
                                                    std::to_string(width) + " outputs");
  ctx.outputs[0] = {DType::F32, x.size() == 1 ? Shape{width} : Shape{x[0], width}};
}

// Adds the n-gram counts of one row to `counts`.
void countRow(const Node& node, const Trie& root, const int64_t* row, int64_t size, std::vector<double>& counts) {
  int64_t minGram = node.attrInt("min_gram_length", 1), maxGram = node.attrInt("max_gram_length", 1);
  int64_t maxSkip = node.attrInt("max_skip_count", 0), first = minGram;
  for (int64_t skip = 1; skip <= maxSkip + 1; ++skip) {
    for (int64_t start = 0; start < size && start + skip * (first - 1) < size; ++start) {
      const Trie* t = &root;
      for (int64_t n = 1, at = start; n <= maxGram && at < size; ++n, at += skip) {
        auto it = t->next.find(row[at]);
        if (it == t->next.end()) break;
        t = it->second.get();
        if (n >= first && t->output >= 0) counts[size_t(t->output)] += 1;
      }
    }
    if (first == 1 && ++first > maxGram) break;  // unigrams do not depend on the skip
  }
}

std::vector<Tensor> evalTfIdf(const Node& node, const std::vector<const Tensor*>& in,
                              const std::vector<TensorType>& types) {
  TfIdfPlan p = tfidfPlan(node);
  const Shape& x = in[0]->shape();
  int64_t rows = x.size() == 1 ? 1 : x[0], size = x.back();
  std::vector<int64_t> tokens = in[0]->toInts();
  std::vector<double> y(size_t(rows * p.width), 0.0), weights = node.attrFloats("weights");
  std::string mode = node.attrString("mode", "TF");
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> counts(size_t(p.width), 0.0);
    countRow(node, p.root, tokens.data() + r * size, size, counts);
    for (int64_t k = 0; k < p.width; ++k) {
      double w = weights.empty() ? 1.0 : weights[size_t(k)], c = counts[size_t(k)];
      y[size_t(r * p.width + k)] = mode == "TF" ? c : mode == "IDF" ? (c > 0 ? w : 0.0) : c * w;
    }
  }
  return {fromDoublesRounded(types[0].dtype, types[0].shape, y)};
}

}  // namespace

void registerTfIdfOps(OpRegistry& r) {
  addOp(r, {"TfIdfVectorizer", OpCategory::Other, "n-gram counts of integer token rows (TF, IDF, TFIDF)", 1, 1, 1, 1,
            {}, inferTfIdf, evalTfIdf});
}

}  // namespace tessera
