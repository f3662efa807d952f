#include "runtime/execute/module_batch.h"

#include <algorithm>

#include "ir/fnv.h"
#include "runtime/execute/module_source.h"

namespace tessera::execute::detail {

std::string taggedEntry(const std::string& moduleSource) {
  return std::string(kModuleEntry) + "_" + fnv1a64Hex(moduleSource);
}

std::string batchSource(const std::string& prelude, const std::vector<const std::string*>& modules) {
  std::string out = prelude;
  for (const std::string* m : modules)
    out += renamed(m->substr(prelude.size()), kModuleEntry, taggedEntry(*m)) + "\n";
  return out;
}

std::vector<std::vector<size_t>> formBatches(const std::vector<size_t>& modules, const std::vector<std::string>& sources,
                                             size_t preludeBytes, unsigned threads) {
  if (modules.empty()) return {};
  const size_t n = modules.size(), jobs = std::max(threads, 1u);
  size_t count = std::max(std::min(n, 2 * jobs), (n + kMaxBatch - 1) / kMaxBatch);
  count = std::min(n, (count + jobs - 1) / jobs * jobs);  // whole rounds of the compilers
  // The body's length stands for its compile time (a poor measure, but the only one before compiling); the
  // longest go first, each to the batch with the least so far (longest processing time first).
  std::vector<size_t> order = modules;
  auto body = [&](size_t m) { return sources[m].size() - std::min(preludeBytes, sources[m].size()); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return body(a) > body(b); });
  std::vector<std::vector<size_t>> batches(count);
  std::vector<size_t> load(count, 0);
  for (size_t m : order) {
    size_t best = count;
    for (size_t b = 0; b < count; ++b)
      if (batches[b].size() < kMaxBatch && (best == count || load[b] < load[best])) best = b;
    batches[best].push_back(m);
    load[best] += body(m);
  }
  for (auto& b : batches) std::sort(b.begin(), b.end());  // in kernel order: a unit reads as the model does
  return batches;
}

}  // namespace tessera::execute::detail
