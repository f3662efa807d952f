#pragma once
// Internal: which memory accesses of a vectorized loop can be one wide access for all its lanes (the CUDA
// vector path, vector.cpp). Pure analysis of the kernel IR; nothing here prints code.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel/kernel_ir.h"

namespace tessera::codegen::detail {

// An integer expression over the lanes 0..width-1 of a loop, as base + coef * lane with `base` free of the
// lane; `divisor` divides base for every value of the other variables (0 when base is 0).
struct LaneForm {
  kernel::Expr base;
  int64_t coef = 0;
  int64_t divisor = 1;
};
// nullopt when `e` does not take that form on every lane (the lane under a division that a lane step could
// cross, under a non-constant factor, inside a select...). Indices are non-negative, as the kernel IR keeps them.
std::optional<LaneForm> laneForm(const kernel::Expr& e, const std::string& lane, int64_t width);

// The element offset (row-major) of buffer[indices] as a LaneForm: `base` is lane 0's offset, `coef` the step
// from one lane to the next (0: every lane reads the same element).
std::optional<LaneForm> laneOffset(const kernel::Buffer& b, const std::vector<kernel::Expr>& indices,
                                   const std::string& lane, int64_t width);
// Lane 0's element offset when the lanes 0..width-1 touch `width` consecutive elements starting at a multiple
// of `width`; nullopt when that cannot be proven.
std::optional<kernel::Expr> alignedLaneOffset(const kernel::Buffer& b, const std::vector<kernel::Expr>& indices,
                                              const std::string& lane, int64_t width);

// How a vectorized loop's accesses run (planVectorLoop): one wide load or store per operand, one scalar load
// before the lanes for an operand every lane reads at the same place, the rest as written.
struct VectorPlan {
  struct Wide {
    std::string buffer;
    kernel::Expr offset;                          // element offset of lane 0, a multiple of the width
    bool store = false;
    std::vector<const kernel::ExprNode*> loads;   // the Load nodes it serves (loads)
    const kernel::StoreStmt* storeStmt = nullptr;  // the Store it serves (stores)
    std::vector<std::string> provenance;
  };
  struct Broadcast {
    std::string buffer;
    kernel::Expr offset;                         // the element every lane reads
    std::vector<const kernel::ExprNode*> loads;  // the Load nodes reading it
    std::vector<std::string> provenance;
  };
  std::vector<Wide> wide;
  std::vector<Broadcast> broadcast;
  bool empty() const { return wide.empty(); }
};
// The plan for a loop of kind Vectorized: empty (no wide access) when none of its accesses can be one, or
// when its body holds anything but computes, stores and reductions. Wide accesses are made only on kernel
// parameters (global buffers from separate allocations, so aligned to at least 256 bytes) and on shared
// buffers (declared __align__(16); not the copies of a pipelined loop's caches), only of elements
// of 2, 4 or 8 bytes making 4, 8 or 16 bytes a lane group; a buffer the body writes is never read wide, a
// wide store's buffer is stored once and not read in the body, and loads under a select arm or the right
// side of && / || (which C evaluates only sometimes) stay as written.
VectorPlan planVectorLoop(const kernel::Kernel& k, const kernel::ForStmt& loop);

}  // namespace tessera::codegen::detail
