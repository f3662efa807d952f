#pragma once
// Internal to the templates (template_*.cpp): the loop lookups and schedule idioms they share, and the
// definition each template file gives of itself. Not part of the library's interface.
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "kernel/launch.h"
#include "kernel/templates/templates.h"

namespace tessera::kernel::templ {

// The shared memory a block of the templates' defaults stays within. Explicit parameters and the tuner may use
// up to kSharedBytesLimit (launch.h: dynamic shared memory); the defaults keep to the static 48 KiB they were
// measured at until deeper tiles are measured better.
inline constexpr int64_t kDefaultSharedBytes = kStaticSharedBytes;
// The SMs the GPU defaults fill (the H200's 132; the H100 SXM has 132 too): "every SM gets a block" below.
inline constexpr int64_t kDefaultSms = 132;

// One template: the function applying it, its parameter space, and the defaults it picks for a kernel.
struct TemplateDef {
  void (*apply)(TracedSchedule&, const TemplateParams&);
  std::vector<TemplateParam> space;
  TemplateParams (*defaults)(Kernel&);
};

const TemplateDef& pointwiseTemplate();
const TemplateDef& rowReductionTemplate();
const TemplateDef& rowReductionCpuTemplate();  // the reduction kernels of Machine::Cpu
const TemplateDef& gemmTemplate();
const TemplateDef& gemmCpuTemplate();  // the gemm kernels of Machine::Cpu
const TemplateDef& convTemplate();
const TemplateDef& convCpuTemplate();  // the 2-D ungrouped conv kernels of Machine::Cpu
// A 2-D convolution (n, oc, oh, ow; reducing ic, kh, kw) without groups: the implicit-GEMM forms' kernels.
bool plainConv2d(Kernel& k);
// A depthwise conv: output channel `oc` reads input channel `oc + ic` (one a group), its own.
bool depthwiseConv(Kernel& k, const std::string& oc);
// plainConv2d, or a 2-D pool, with NCHW output (its rows along ow): the kernels conv-cpu schedules on
// Machine::Cpu.
bool convCpuApplies(Kernel& k);
const TemplateDef& poolTemplate();
const TemplateDef& transposeTemplate();
const TemplateDef& dataMovementTemplate();
const TemplateDef& attentionTemplate();  // the fused attention kernels (both machines)
const TemplateDef& scatterTemplate();    // ScatterElements/ScatterND by indices known at run time (both machines)
// Elementwise and data-movement kernels (not transposes) of Machine::Cpu: rows vectorized, rows over threads.
const TemplateDef& elementwiseCpuTemplate();

// The data-parallel loops of the perfect nest starting at `s`, outermost first.
std::vector<std::string> chainFrom(Stmt s);
std::vector<std::string> outerChain(const Kernel& k);
// The top-level loop nests of the kernel (several for Split), each as its chain of data-parallel loops.
std::vector<std::vector<std::string>> topNests(const Kernel& k);
int64_t extentOf(Kernel& k, const std::string& loop);
int64_t chainExtent(Kernel& k, const std::vector<std::string>& loops);
// The largest candidate not above `limit` that divides `extent` (or the smallest candidate).
int64_t pickDividing(const std::vector<int64_t>& candidates, int64_t extent, int64_t limit);
// Fuses a list of nested loops into one; returns its name ("" for none).
std::string fuseAll(TracedSchedule& s, const std::vector<std::string>& loops);
// Splits `loop` by min(factor, extent): returns {outer, inner}, or {loop, ""} when the factor is 1.
std::pair<std::string, std::string> splitBy(TracedSchedule& s, const std::string& loop, int64_t factor);
// Binds a loop to the threads of a block: split by `threads` when it is longer.
void bindThreads(TracedSchedule& s, const std::string& loop, int64_t threads, ThreadTag tag = ThreadTag::ThreadX);
// Refuses a parameter combination: a ScheduleError naming the template and the parameter.
[[noreturn]] void rejectParams(Kernel& k, const std::string& templateName, const std::string& param, const std::string& what);
// The input buffers read inside `loop`, in buffer order (a gemm's operands A and B).
std::vector<std::string> inputsReadIn(Kernel& k, const std::string& loop);
// Some input is read inside `loop` and every one has one of `types` (the tensor-core forms' operand checks).
bool operandsOf(Kernel& k, const std::string& loop, std::initializer_list<DType> types);
// The mma forms' tf32 parameter: 0 (16-bit operands), or 1..3 (how f32 operands become tf32: rounded,
// truncated, rounded by an add; codegen's MmaTile::Tf32Rounding) on f32 operands read inside `depthLoop`;
// anything else refused naming it.
void checkTf32(Kernel& k, const std::string& templateName, const TemplateParams& p, const std::string& depthLoop);

// --- the CPU forms' register tiles (gemm-cpu, conv-cpu) ---
// A vectorized loop is at most kVectorLanes long (the vectorize primitive's limit, AVX-512's f32 lanes).
inline constexpr int64_t kVectorLanes = 16;
// A longer loop is split, its steps to be unrolled. Returns the {steps, lanes} loops ("" for no steps).
std::pair<std::string, std::string> splitLanes(TracedSchedule& s, const std::string& loop);
// Some guard is inside `loop` (vectorize refuses it).
bool holdsGuard(Kernel& k, const std::string& loop);
// The loops of the register tile, and the copies hoistReduction made of them (<loop>_init, <loop>_epi): rows
// and vector steps unrolled, lanes vectorized, unrolled where `guarded` says a split left guards in the tile's
// arithmetic. A guard left on the lanes (the stores overcompute keeps, a fill overhanging its buffer) is a mask
// in the CPU's vector path (docs/codegen.md): unrolled, a 16-lane tile's overhang was 16 scalar copies of its
// epilogue for each of its rows, half of a densenet121 gemm module's compile.
void unrollAndVectorize(TracedSchedule& s, const std::vector<std::string>& copies, const std::vector<std::string>& unrolled,
                        const std::string& lanes, bool guarded);

// The data-movement kernels whose innermost output loop is not the input's innermost index: transposes.
bool isTransposeLike(Kernel& k);

// Threads per tag, innermost (x) first.
using ThreadDims = std::vector<std::pair<int64_t, ThreadTag>>;
// A shared-memory fill spread over the block's threads: its loops fused, then split into
// repeats x threadIdx.y x threadIdx.x (the repeats unrolled when 16 or fewer). lanes > 1 (dividing the
// fill) first splits off that many consecutive elements per thread as an unrolled innermost loop, which a code
// generator may copy as one wide access (cp.async of 16 bytes in a pipelined loop, docs/codegen.md);
// vectorized: that loop is vectorized instead (a write-back's wide global stores, the vector path).
void bindFill(TracedSchedule& s, const std::vector<std::string>& fillLoops, const ThreadDims& dims, int64_t lanes = 1,
              bool vectorized = false);
// Stages every input read inside `ko` in shared memory, filled by the block's threads; rows padded by `pad`;
// copyBytes > 0: each thread copies runs of that many bytes (bindFill's lanes, by the operand's dtype).
// Returns the caches made, in operand order.
std::vector<std::string> stageOperands(TracedSchedule& s, const std::string& ko, const ThreadDims& dims, int64_t pad = 0,
                                       int64_t copyBytes = 0);
// The same with each operand's rows padded by padOf(operand).
using PadOf = std::function<int64_t(const std::string&)>;
std::vector<std::string> stageOperands(TracedSchedule& s, const std::string& ko, const ThreadDims& dims, const PadOf& padOf,
                                       int64_t copyBytes);
// Some read of `buffer` inside `loop` has `var` in its first (front = true) or last index.
bool indexUses(Kernel& k, const std::string& loop, const std::string& buffer, const std::string& var, bool front);
// stages = S > 1: the k-outer loop software-pipelined (docs/kernel-ir.md, Pipelines): the copies of the next
// S - 1 tiles are in flight while this one's math runs, in S copies of each shared tile. Like the tile sizes, S
// is an upper bound: fewer stages where the k steps or a block's shared memory (kSharedBytesLimit) do not allow S.
void pipelineStages(TracedSchedule& s, const std::string& ko, const TemplateParams& p);
// split_k = P > 1 (a parameter of the conv and gemm templates; absent: 1): the k-outer loop's steps spread over P
// blocks (split-K, sched::splitK), for outputs too few to give every SM a block, each block summing a part of
// the reduction and a second phase adding the parts in the epilogue. Refused naming split_k when P does not
// divide the steps.
int64_t splitKParam(const TemplateParams& p);
void splitKOuter(TracedSchedule& s, const std::string& ko, const TemplateParams& p, const std::string& templateName);

}  // namespace tessera::kernel::templ
