#pragma once
// Internal: the error record of a generated kernel that checks indices read from tensors (kernel::CheckedIndex,
// codegen::GeneratedKernel::indexChecks). The caller appends it, zeroed, to the kernel's parameters; after the
// run a set record is the kernel's failure, said in the reference interpreter's words.
#include <array>
#include <cstdint>
#include <vector>

#include "codegen/codegen.h"
#include "runtime/execute/backend.h"

namespace tessera::execute::detail {

class IndexRecord {
 public:
  explicit IndexRecord(const codegen::GeneratedKernel& g) : g_(g) {}
  IndexRecord(const IndexRecord&) = delete;  // the parameters point into it
  IndexRecord& operator=(const IndexRecord&) = delete;
  // Adds the record after the outputs; nothing when the kernel checks no index.
  void appendTo(std::vector<ParamBuffer>& params);
  // Throws Error "node 'g' (Gather): input 1 ('idx') holds 5 at [2], out of range ..." when a check failed.
  void throwIfSet() const;

 private:
  const codegen::GeneratedKernel& g_;
  std::array<int64_t, codegen::kErrorRecordWords> words_{};
};

}  // namespace tessera::execute::detail
