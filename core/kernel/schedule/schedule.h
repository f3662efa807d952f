#pragma once
// Schedule primitives on the kernel IR. Each checks its preconditions in numbered steps and throws a
// ScheduleError naming the loop (or buffer) at fault, so a UI can highlight it; on success it rewrites the
// kernel in place and returns the names of what it created. Use them through TracedSchedule (trace.h) so the
// application is recorded; the free functions here are what a trace replays.
#include <string>
#include <vector>

#include "ir/error.h"
#include "kernel/kernel_ir.h"

namespace tessera::kernel {

class ScheduleError : public Error {
 public:
  // Message: "<primitive>: loop '<loop>' of kernel '<kernel>': step <n>: <what>".
  ScheduleError(const std::string& primitive, const std::string& kernel, const std::string& loop, int step,
                const std::string& what);
  const std::string& primitive() const { return primitive_; }
  const std::string& loop() const { return loop_; }  // the loop (or buffer, or parameter) at fault
  int step() const { return step_; }

 private:
  std::string primitive_, loop_;
  int step_;
};

namespace sched {

// i → i_o (ceil(extent/factor)), i_i (factor); guarded by `i_o*factor + i_i < extent` when it does not divide.
std::vector<std::string> split(Kernel& k, const std::string& loop, int64_t factor);
// Splits each loop of a perfect nest and reorders to outers then inners; returns outers then inners.
std::vector<std::string> tile(Kernel& k, const std::vector<std::string>& loops, const std::vector<int64_t>& factors);
// Permutes loops of one perfect nest into the given order (relative positions of the named loops).
void reorder(Kernel& k, const std::vector<std::string>& order);
// Merges a loop and the loop directly inside it into one loop `outer_inner`.
std::string fuse(Kernel& k, const std::string& outer, const std::string& inner);
void vectorize(Kernel& k, const std::string& loop);
// Computes the overhang of the tiles inside `loop` instead of skipping it: drops each guard inside whose work
// is on registers only (kernel/overhang.h), so the loops it held may be vectorized; the stores to memory keep
// theirs, so the overhang is computed and never written.
void overcompute(Kernel& k, const std::string& loop);
// Versions a loop whose body is one guard that holds at every iteration once it holds at the last (a tile's
// `i_o * f + i_i < N`): `if (guard at the last iteration) { an unguarded copy <loop>_whole }` and the guarded
// loop otherwise, so the whole tiles' copy may be vectorized. Returns the copy's name.
std::string version(Kernel& k, const std::string& loop);
void unroll(Kernel& k, const std::string& loop);
void parallel(Kernel& k, const std::string& loop);  // CPU threads
void bind(Kernel& k, const std::string& loop, ThreadTag tag);
// Copies the part of `buffer` read inside `loop` into a new buffer in `scope` at the start of the loop's body,
// and reads the copy instead. `pad` widens the cache's last dimension by that many unused elements, so that
// rows start in other shared-memory banks; `padRows` adds as many unused rows to the dimension before it, so
// that its planes do; `align` starts the box's last dimension at a multiple of that many elements of the
// buffer and rounds its extent up to whole runs (the start must be such a multiple plus a constant in the
// enclosing loops). Reads masked by the buffer's own bounds (select(inside, x[i], 0),
// a conv's padding) read the cache unmasked: the fill writes 0 outside the buffer instead. Returns the cache's
// name, then the fill loops.
std::vector<std::string> cacheRead(Kernel& k, const std::string& loop, const std::string& buffer, MemScope scope,
                                   const std::string& cacheName = "", int64_t pad = 0, int64_t padRows = 0,
                                   int64_t align = 0);
// Writes the part of `buffer` stored inside `loop` to a new buffer in `scope`, copied out at the end of the
// loop's body. Returns the cache's name, then the write-back loops.
std::vector<std::string> cacheWrite(Kernel& k, const std::string& loop, const std::string& buffer, MemScope scope);
// Moves the fill of a read cache to the start of another loop's body (its footprint recomputed there).
std::vector<std::string> computeAt(Kernel& k, const std::string& cache, const std::string& loop);
// Moves reduction loop `reduction` (with the loops inside it) out to the start of the body of `loop`, which
// encloses it through a perfect nest of data-parallel loops: the register accumulators set up before the
// reduction gain one leading dimension per loop between, and their initial values and the statements after
// the reduction get their own copies of those loops (named <loop>_init, <loop>_epi). Returns the copies' names.
std::vector<std::string> hoistReduction(Kernel& k, const std::string& reduction, const std::string& loop);
// The passes directly in the body of `loop` that read `buffer` the same way (equal loops, bindings, guards and
// indices) read one register copy of it, filled before the first of them and indexed by the passes' loop
// iterations (a thread-bound loop's dimension is one element per thread on the GPU). Returns the copy's name,
// then the fill's loops.
std::vector<std::string> keepInRegisters(Kernel& k, const std::string& loop, const std::string& buffer);
// Makes innermost reduction loop `loop` data-parallel: each of its iterations folds into its own element of a
// register array (per accumulator, set to the op's identity before the reduction's loops), and the array is
// folded into the accumulator after them, in order. Sum, max and min of float register accumulators. Returns
// the identities' loop, the fold loop, then the arrays.
std::vector<std::string> rfactor(Kernel& k, const std::string& loop);
// Merges max reduction loop `loop` with the loop after it that sums exp(x - max) over the same x into one pass
// over a (max, sum) pair (ReduceOp::MaxSumExp, online softmax); both loops unsplit. Returns the pair's name.
std::vector<std::string> onlineSoftmax(Kernel& k, const std::string& loop);
// Spreads each row of row loop `loop` (the kernel's only top-level loop; its passes unsplit) over `blocks`
// blocks: one phase per pass, separated by grid barriers. Phase p combines the partials of passes before p
// from their global workspaces, runs pass p over its block's part of the row and writes the part's partial;
// the last phase combines every pass and runs the row's output loops over its part. Each phase is a nest
// `row { part { ... } }`. Returns each phase's row and part loops, then the workspaces.
std::vector<std::string> splitReduction(Kernel& k, const std::string& loop, int64_t blocks);
// Spreads serial reduction loop `loop` (directly in the body of the innermost of the kernel's perfect nest of
// block-bound loops, summing into float register accumulators; hoist_reduction puts it there) over `parts`
// blocks (split-K): phase 0 runs each part of the loop in its own block (the part fused into the blockIdx.z
// loop, or a new one) and stores its accumulators to a global workspace [parts, block loops, accumulator];
// after a grid barrier, phase 1 runs the statements after the loop in the same blocks and threads on the sum
// of the parts. Returns the blockIdx.z loop of phase 0, then the workspaces.
std::vector<std::string> splitK(Kernel& k, const std::string& loop, int64_t parts);
// Software-pipelines a loop whose body fills shared read caches: the fills become asynchronous copies,
// `stages` iterations in flight.
void pipeline(Kernel& k, const std::string& loop, int stages);
// Stores shared buffer `buffer` in the 128-byte swizzled layout (Buffer::swizzleBytes), the one wgmma's
// descriptors read: each row of its last dimension a whole number of 128-byte chunks, its rows a multiple of
// 8, not padded, in shared memory. Addresses change, values do not.
void swizzle(Kernel& k, const std::string& buffer, int64_t bytes);
// Stores cache `buffer`'s last dimension as `factor` phases one after another (element x at
// (x % factor) * ceil(E / factor) + x / factor), every access rewritten, so reads that stride by `factor`
// along it (a stride-2 conv's columns) read consecutive elements. Values do not change.
void deinterleave(Kernel& k, const std::string& buffer, int64_t factor);
// Stores cache `buffer` with its axes in the order `perm` (axis i of the new layout is axis perm[i] of the
// old), every access rewritten: an NHWC input's packed patch stored [n, c, h, w] so a conv's lanes along w
// read consecutive elements. Values do not change.
void permute(Kernel& k, const std::string& buffer, const std::vector<int64_t>& perm);
// Stores input `buffer` packed (Buffer::packAxis): axis `axis` cut into blocks of `block` elements, the place in
// a block a new last axis ([OC, IC, 3, 3] as [OC/32, IC, 3, 3, 32]), every access rewritten; the runtime copies
// the value into that order before the kernel runs. For constants (weights) read by vectors along `axis`.
void pack(Kernel& k, const std::string& buffer, int64_t axis, int64_t block);
// Records a template parameter on the kernel.
void setParam(Kernel& k, const std::string& name, int64_t value);

}  // namespace sched
}  // namespace tessera::kernel
