#pragma once
// Internal: the statement generator shared by the CUDA and C++ targets.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/c_types.h"

namespace tessera::kernel {
struct AttentionNest;  // kernel/attention_nest.h
}

namespace tessera::codegen::detail {

struct VectorPlan;     // vector_access.h
struct FlashShape;     // flash_attention.cpp
struct PipelineShape;  // pipeline.cpp

// CPU: the register buffers declared as arrays of f32 vectors (cpu_vector.cpp): those the kernel's vectorized
// loops access in vector form, which GCC then keeps in vector registers.
std::set<std::string> cpuVectorArrays(const kernel::Kernel& k);
// CPU: the lanes every vectorized loop of the kernel is a multiple of (16, 8 or 4; loops of no such width stay
// scalar): the vector type its loops and arrays use (prelude.cpp: tsr_vf, tsr_vf8, tsr_vf4).
int64_t cpuVectorLanes(const kernel::Kernel& k);

// Shared arrays holding swizzled tiles (Buffer::swizzleBytes) start at multiples of this many bytes.
inline constexpr int64_t kSwizzleAlign = 1024;
int64_t sharedAlignment(const kernel::Buffer& b);
// The array holding a pipelined loop's copies of a cache (pipeline.cpp).
std::string stagesName(const std::string& cache);
bool swizzledShared(const kernel::Kernel& k);

class Generator {
 public:
  // dynamicShared: CUDA, every shared array is a slice of one `extern __shared__` arena launched with
  // GeneratedKernel::dynamicSharedBytes (a block's static shared memory stops at 48 KiB; codegen.cpp generates
  // again this way when a kernel's arrays need more).
  Generator(const kernel::Kernel& k, Target target, bool dynamicShared = false);
  GeneratedKernel run();
  size_t sharedBytes() const { return sharedBytes_; }  // CUDA: the block's shared arrays, as generated

 private:
  void line(const std::string& text, const std::vector<std::string>& provenance = {});
  void prelude();
  void signature();
  void callWrapper();
  bool sharesRegion() const;
  void launchComment();
  void stmt(const kernel::Stmt& s);
  void allocate(const kernel::AllocateStmt& n);
  void blockBarrier(const std::vector<std::string>& provenance);
  void reduce(const kernel::ReduceStmt& n);
  void body(const kernel::Stmt& s);  // the statements of a loop or if body, without extra braces
  void forLoop(const kernel::ForStmt& f);
  void boundLoop(const kernel::ForStmt& f);
  void mmaLanes(const kernel::ForStmt& f);       // a loop bound to mma.row / mma.col (mma.cpp)
  bool tryMma(const kernel::ForStmt& rowLoop);   // the whole tile as one mma instruction, when it is one
  bool mmaNest(const kernel::ForStmt& outer);    // two loops of mma tiles, each fragment loaded once, when they are
  bool wgmmaLoop(const kernel::ForStmt& f);      // a warpgroup's k steps of mma tiles as wgmma, when they are (wgmma.cpp)
  // CUDA, flash_attention.cpp: a warp's rows of the attention template's tensor-core form, when they are; the
  // pieces it generates.
  bool flashAttentionRows(const kernel::ForStmt& rows);
  std::string flashRowValid(const kernel::ForStmt& rows, const kernel::AttentionNest& nest);
  void flashFill(const kernel::Load& load, const std::string& rowVar, const std::string& rowValue, const std::string& colVar,
                 int64_t rows, int64_t width, const std::string& dst, int64_t stride, const std::string& thread,
                 int64_t threads, const std::string& inside);
  void flashHelpers(DType t);
  void flashScores(const kernel::AttentionNest& a, const FlashShape& f, const std::vector<std::string>& prov);
  void flashTilePairs(const std::string& loop, int64_t pairs, const std::string& address, bool trans,
                      const std::string& acc, const std::string& a, int64_t mtiles);
  void flashChain(const kernel::ForStmt& rows, const kernel::AttentionNest& a, const FlashShape& f,
                  const std::vector<std::string>& prov);
  void flashSoftmax(const kernel::AttentionNest& a, const FlashShape& f, const std::vector<std::string>& prov);
  void flashValues(const kernel::AttentionNest& a, const FlashShape& f, const std::vector<std::string>& prov);
  void flashOutput(const kernel::ForStmt& rows, const kernel::AttentionNest& a, const FlashShape& f);
  void openElements(int64_t mtiles, const std::string& tile, int64_t tiles, const std::string& rowVar,
                    const std::string& columnVar, const std::string& columnStart, const std::vector<std::string>& prov);
  void closeElements();
  bool vectorLoop(const kernel::ForStmt& f);     // CUDA: a vectorized loop as wide loads and stores, when it can be (vector.cpp)
  bool cpuVectorLoop(const kernel::ForStmt& f);  // CPU: a vectorized loop on f32 vectors, when it can be (cpu_vector.cpp)
  void cpuVectorStmt(const kernel::Stmt& s, const kernel::ForStmt& f);
  struct VectorLanes;
  void vectorRegisters(const kernel::ForStmt& f, const VectorPlan& plan, VectorLanes& lanes);
  void laneStmt(const kernel::Stmt& s, const kernel::ForStmt& f, const VectorLanes& lanes);
  // CUDA, pipeline.cpp: a pipelined loop with multi-buffered caches and cp.async fills, when it can be;
  // the fills of one iteration into one copy of the caches; a copy (cp.async inside a fill, else a plain load);
  // a fill's lanes as wide cp.async copies, when they can be.
  bool pipelinedLoop(const kernel::ForStmt& f);
  struct PipelineForm {
    bool tma = false;            // the stages' tiles come by TMA (tma.cpp), else by cp.async
    bool wgmmaInFlight = false;  // an iteration's wgmma still runs while the next one's is issued
    int ahead = 1;               // iterations whose copies are in flight before this one's wait
  };
  void pipelinePrologue(const kernel::ForStmt& f, const PipelineShape& shape, const PipelineForm& form);
  void pipelineIterations(const kernel::ForStmt& f, const PipelineShape& shape, const PipelineForm& form);
  void fillStage(const kernel::ForStmt& f, const std::vector<std::string>& caches, const std::vector<kernel::Stmt>& fills,
                 const std::string& iteration, const std::string& stage);
  void asyncCopy(const kernel::AsyncCopyStmt& n);
  bool copyGroup(const kernel::ForStmt& f);
  // tma.cpp: which caches the TMA fills (planTma, at the start), whether a pipelined loop's caches all are, and
  // the lines of its barriers, of one stage's copies and of the wait for one.
  void planTma();
  bool tmaFills(const std::vector<std::string>& caches) const;
  std::string tensorMapName(const std::string& source) const;
  void tmaBarriers(const kernel::ForStmt& f);
  void tmaStage(const kernel::ForStmt& f, const std::vector<std::string>& caches, const std::string& iteration,
                const std::string& stage);
  void tmaWait(const kernel::ForStmt& f, const std::vector<std::string>& provenance);
  void combineAcrossThreads(const kernel::ForStmt& outer);  // combine.cpp
  struct Partial;
  void combineReduce(const Partial& p);
  void combineThroughShared(const Partial& p, unsigned count, const std::string& slotOf, const std::string& writer);
  int phaseCount() const;  // launches the kernel's grid barriers separate (1 without any)
  bool phasedBody();       // CUDA: the body as one `if (tsr_phase == p)` per phase, when it has several
  void globalWorkspace(const kernel::Buffer& b, const std::vector<std::string>& provenance);
  void computeLaunch();
  std::string comment(const std::vector<std::string>& provenance) const;
  // CUDA: the declaration of a block's shared array of `count` elements of `bytes` each (static, or a slice of
  // the dynamic arena at the next 16-byte offset), counted in sharedBytes_; `countText` is how the static form
  // writes the count.
  std::string sharedArray(const std::string& type, const std::string& name, const std::string& countText,
                          int64_t count, int64_t bytes, int64_t align = 16);
  void dynamicArena();

  const kernel::Kernel& k_;
  Target target_;
  ExprPrinter ep_;
  GeneratedKernel out_;
  std::vector<std::string> lines_;
  int indent_ = 0;
  int reductionDepth_ = 0;  // reduction loops around the statement being generated
  int parallelDepth_ = 0;   // CPU: loops made OpenMP-parallel around it
  // CPU: copies of a statement the unrolled loops around it ask GCC for. Nested unrolls multiply: a tile fill
  // of 64 × 16 unrolled copies (zfnet's last gemm) took g++ 6.9 s, so a nest gets kCpuUnrollBudget copies at
  // most and the inner loops what the outer ones leave (in the light models' C++ only such fills exceed it).
  static constexpr int64_t kCpuUnrollBudget = 256;
  int64_t cpuUnrolled_ = 1;
  // CPU: every statement lies inside a shared loop (sharesRegion()), so those loops are worksharing loops
  // (`omp for`) of a region the caller opens: the worker's for a run, else the `_call` wrapper's.
  bool sharesRegion_ = false;
  int warpDepth_ = 0;       // CUDA: warp-bound loops around it (threadIdx.x inside is the lane)
  int combineCount_ = 0;
  size_t preludeLines_ = 0;
  bool usesHalf_ = false;
  bool asyncFill_ = false;  // CUDA: generating the fills of a pipelined loop (cp.async)
  int wgmmaPending_ = 0;    // CUDA: wgmma groups a warpgroup leaves in flight at the end of its k steps
  bool dynamicShared_ = false;
  std::set<std::string> tmaCaches_;           // caches the TMA fills
  std::map<std::string, size_t> tmaMaps_;     // source buffer -> its tensor map (GeneratedKernel::tensorMaps)
  size_t sharedBytes_ = 0;
};

}  // namespace tessera::codegen::detail
