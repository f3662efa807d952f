#include "runtime/execute/index_record.h"

#include "ir/error.h"

namespace tessera::execute::detail {

void IndexRecord::appendTo(std::vector<ParamBuffer>& params) {
  if (g_.indexChecks.empty()) return;
  words_.fill(0);
  ParamBuffer record{words_.data(), sizeof words_, true};
  record.record = true;
  params.push_back(record);
}

void IndexRecord::throwIfSet() const {
  if (words_[0] == 0) return;
  int64_t check = words_[0] - 1;
  if (check < 0 || size_t(check) >= g_.indexChecks.size())
    fail("kernel " + g_.kernelId + ": its error record names index check " + std::to_string(check) + " of " +
         std::to_string(g_.indexChecks.size()));
  const kernel::IndexCheck& c = g_.indexChecks[size_t(check)];
  fail(kernel::indexCheckError(c, words_[1], words_[3]));
}

}  // namespace tessera::execute::detail
