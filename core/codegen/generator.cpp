#include "codegen/generator.h"

#include <algorithm>
#include <set>

#include "codegen/mma_match.h"
#include "codegen/prelude.h"
#include "ir/error.h"
#include "kernel/launch.h"
#include "kernel/overhang.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {
int tagIndex(ThreadTag t) {
  switch (t) {
    case ThreadTag::BlockX: case ThreadTag::ThreadX: case ThreadTag::Warp: case ThreadTag::MmaRow: case ThreadTag::MmaCol: return 0;
    case ThreadTag::BlockY: case ThreadTag::ThreadY: return 1;
    default: return 2;
  }
}
std::string tagAxis(ThreadTag t) { return std::string(1, "xyz"[tagIndex(t)]); }

// CPU: a loop OpenMP shares among threads when no loop around it is shared already.
bool cpuParallelLoop(const LoopHeader& h) {
  bool blockLoop = h.loopKind == LoopKind::Bound && isBlockTag(h.tag) && h.extent > 1;
  return !h.reduction && (h.loopKind == LoopKind::Parallel || blockLoop);
}
}  // namespace

Generator::Generator(const Kernel& k, Target target, bool dynamicShared)
    : k_(k), target_(target), ep_(k, target), dynamicShared_(dynamicShared) {
  if (target == Target::Cpu) ep_.setVectorArrays(cpuVectorArrays(k), cpuVectorLanes(k));
  planTma();
}

std::string Generator::sharedArray(const std::string& type, const std::string& name, const std::string& countText,
                                   int64_t count, int64_t bytes, int64_t align) {
  size_t offset = (sharedBytes_ + size_t(align) - 1) / size_t(align) * size_t(align);
  sharedBytes_ = offset + size_t(std::max<int64_t>(1, count) * bytes);
  if (!dynamicShared_) return "__shared__ __align__(" + std::to_string(align) + ") " + type + " " + name + "[" + countText + "];";
  return type + "* const " + name + " = reinterpret_cast<" + type + "*>(tsr_smem + " + std::to_string(offset) + ");";
}

int64_t sharedAlignment(const Buffer& b) { return b.swizzleBytes ? kSwizzleAlign : 16; }

bool swizzledShared(const Kernel& k) {
  return std::any_of(k.buffers.begin(), k.buffers.end(), [](const Buffer& b) { return b.swizzleBytes != 0; });
}

// The dynamic arena. A swizzled tile's atoms must start at a multiple of 1024 bytes (the swizzle repeats from
// those addresses); the driver promises the arena only 16, so it starts at the next multiple, launched with
// 1024 bytes more.
void Generator::dynamicArena() {
  if (!swizzledShared(k_)) {
    line("extern __shared__ __align__(16) unsigned char tsr_smem[];  // the block's shared arrays");
    return;
  }
  line("extern __shared__ __align__(1024) unsigned char tsr_smem_arena[];");
  line("unsigned char* const tsr_smem = tsr_smem_arena + ((" + std::to_string(kSwizzleAlign) +
       "u - ((unsigned)__cvta_generic_to_shared(tsr_smem_arena) & " + std::to_string(kSwizzleAlign - 1) + "u)) & " +
       std::to_string(kSwizzleAlign - 1) + "u);  // the block's shared arrays, from a 1024-byte boundary");
}

void Generator::line(const std::string& text, const std::vector<std::string>& provenance) {
  lines_.push_back(std::string(indent_ * 2, ' ') + text);
  out_.lineNodes.push_back(provenance);
}

std::string Generator::comment(const std::vector<std::string>& provenance) const {
  if (provenance.empty()) return "";
  std::string s;
  for (const auto& id : provenance) s += (s.empty() ? "" : ", ") + sanitizeComment(id);
  return "  // " + s;
}

void Generator::computeLaunch() {
  kernel::LaunchShape shape = kernel::launchShape(k_);
  for (int a = 0; a < 3; ++a) {
    out_.launch.grid[a] = static_cast<unsigned>(shape.grid[a]);
    out_.launch.block[a] = static_cast<unsigned>(shape.block[a]);
  }
}

GeneratedKernel Generator::run() {
  out_.kernelId = k_.id;
  out_.entry = entryName(k_.id);
  for (const Buffer& b : k_.buffers) usesHalf_ = usesHalf_ || isHalf(b.dtype);
  computeLaunch();
  prelude();
  preludeLines_ = lines_.size();
  std::string nodes;
  for (const auto& id : k_.nodeIds) nodes += (nodes.empty() ? "" : ", ") + sanitizeComment(id);
  line("// kernel " + sanitizeComment(k_.id) + " (" + sanitizeComment(k_.kind) + "), nodes: " + nodes, k_.nodeIds);
  launchComment();
  if (target_ == Target::Cpu && k_.params.count("tf32") && k_.params.at("tf32"))
    line("// tf32 = " + std::to_string(k_.params.at("tf32")) + " is a tensor-core format, not used on the CPU: the products here are exact f32");
  if (!tmaMaps_.empty())
    line("struct __align__(64) tsr_tensor_map { unsigned long long bits[16]; };  // a CUtensorMap, opaque here");
  sharesRegion_ = target_ == Target::Cpu && sharesRegion();
  signature();
  indent_ = 1;
  if (dynamicShared_) dynamicArena();
  if (!phasedBody()) body(k_.body);
  indent_ = 0;
  line("}");
  if (target_ == Target::Cpu) callWrapper();
  for (size_t i = 0; i < lines_.size(); ++i) (i < preludeLines_ ? out_.prelude : out_.body) += lines_[i] + "\n";
  out_.source = out_.prelude + out_.body;
  if (dynamicShared_) out_.dynamicSharedBytes = sharedBytes_ + (swizzledShared(k_) ? kSwizzleAlign : 0);
  return std::move(out_);
}

void Generator::prelude() {
  line(target_ == Target::Cuda ? "// CUDA C++ generated by Tessera" : "// C++ generated by Tessera");
  std::string text = target_ == Target::Cuda ? cudaPrelude(usesHalf_) : cppPrelude();
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    line(text.substr(start, end - start));
    start = end + 1;
  }
}

void Generator::launchComment() {
  if (target_ == Target::Cuda) {
    const LaunchDims& d = out_.launch;
    line("// launch: grid (" + std::to_string(d.grid[0]) + ", " + std::to_string(d.grid[1]) + ", " +
         std::to_string(d.grid[2]) + "), block (" + std::to_string(d.block[0]) + ", " + std::to_string(d.block[1]) +
         ", " + std::to_string(d.block[2]) + ")");
  }
}

void Generator::signature() {
  std::vector<const Buffer*> params;
  for (const Buffer& b : k_.buffers)
    if (b.role != BufferRole::Temp) params.push_back(&b);
  if (target_ == Target::Cuda)
    line("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(out_.launch.threads()) + ") " +
         out_.entry + "(");
  else
    line("extern \"C\" void " + out_.entry + "(");
  std::string restrict_ = target_ == Target::Cuda ? "__restrict__" : "__restrict";
  std::vector<std::string> decls;  // each parameter with its comment, in order
  for (const Buffer* b : params) {
    out_.params.push_back(b->name);
    std::string cst = b->role == BufferRole::Input ? "const " : "";
    decls.push_back(cst + storageType(b->dtype, target_) + "* " + restrict_ + " " + identifier(b->name) + "\t  // " +
                    std::string(dtypeName(b->dtype)) + shapeToString(b->shape) + " " + sanitizeComment(b->value));
  }
  if (!k_.indexChecks.empty()) {  // written by tsr_index (prelude.cpp) when an index is out of range
    out_.indexChecks = k_.indexChecks;
    decls.push_back(indexType(target_) + "* " + restrict_ + " tsr_err\t  // error record of the index checks: " +
                    "check + 1, index, extent, position");
  }
  if (target_ == Target::Cuda)  // workspaces come from the backend on the GPU; the CPU form allocates its own
    for (const Buffer& b : k_.buffers)
      if (b.role == BufferRole::Temp && b.scope == MemScope::Global) {
        out_.scratch.push_back({b.name, size_t(numElements(b.shape)) * dtypeSize(b.dtype)});
        decls.push_back(storageType(b.dtype, target_) + "* " + restrict_ + " " + identifier(b.name) + "\t  // " +
                        std::string(dtypeName(b.dtype)) + shapeToString(b.shape) + " workspace");
      }
  if (target_ == Target::Cuda && phaseCount() > 1) decls.push_back("const int tsr_phase\t  // launched once per phase, in order");
  for (size_t i = 0; i < out_.tensorMaps.size(); ++i) {  // in the maps' order, as the backend passes them
    const std::string& source = out_.params[out_.tensorMaps[i].param];
    decls.push_back("const __grid_constant__ tsr_tensor_map " + tensorMapName(source) + "\t  // TMA: the tiles of " + identifier(source));
  }
  for (size_t i = 0; i < decls.size(); ++i) {
    size_t tab = decls[i].find('\t');
    std::string sep = i + 1 < decls.size() ? "," : ") {";
    line("    " + decls[i].substr(0, tab) + sep + decls[i].substr(tab + 1));
  }
  if (decls.empty()) line(") {");
}

namespace {
// Whether every thread of a region may run `s` whole: a shared loop, or a plain loop (the same iterations for
// every thread, so each meets the same shared loops in the same order) of nothing but such statements.
bool onlySharedLoops(const Stmt& s) {
  if (s->kind == StmtKind::Block) {
    const auto& stmts = static_cast<const BlockStmt&>(*s).stmts;
    return !stmts.empty() && std::all_of(stmts.begin(), stmts.end(), onlySharedLoops);
  }
  if (s->kind != StmtKind::For) return false;
  const LoopHeader& h = static_cast<const ForStmt&>(*s).h;
  if (cpuParallelLoop(h)) return true;
  bool plain = h.loopKind == LoopKind::Serial || h.loopKind == LoopKind::Bound;  // Bound: serial on the CPU
  return plain && onlySharedLoops(static_cast<const ForStmt&>(*s).body);
}
}  // namespace

// Nothing outside the shared loops: each thread may run the whole function inside one parallel region (a
// statement outside them would run once per thread).
bool Generator::sharesRegion() const { return onlySharedLoops(k_.body); }

// A uniform entry point for the host: every parameter is a pointer, passed in order through an array. A kernel
// whose loops share a region runs them in the caller's (tessera-cpu-worker opens one for a whole run, saving a
// fork and join a kernel), or in one of its own when called outside any; `<entry>_region` tells the worker.
void Generator::callWrapper() {
  std::string call = out_.entry + "(";
  for (size_t i = 0; i < out_.params.size(); ++i) {
    const Buffer& b = ep_.buffer(out_.params[i]);
    std::string cst = b.role == BufferRole::Input ? "const " : "";
    call += (i ? ", " : "") + std::string("(") + cst + storageType(b.dtype, target_) + "*)args[" + std::to_string(i) + "]";
  }
  if (!out_.indexChecks.empty()) call += std::string(out_.params.empty() ? "" : ", ") + "(int64_t*)args[" + std::to_string(out_.params.size()) + "]";
  call += ");";
  line("extern \"C\" void " + out_.entry + "_call(void** args) {");
  if (!sharesRegion_) {
    line("  " + call);
    line("}");
    return;
  }
  line("  if (omp_get_level() > 0) {  // inside the caller's parallel region: every thread takes its share");
  line("    " + call);
  line("    return;");
  line("  }");
  line("  #pragma omp parallel");
  line("  " + call);
  line("}");
  line("extern \"C\" const int " + out_.entry + "_region = 1;  // its loops share the caller's parallel region");
}

void Generator::body(const Stmt& s) {
  if (s->kind == StmtKind::Block) {
    for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts) stmt(c);
  } else {
    stmt(s);
  }
}

void Generator::stmt(const Stmt& s) {
  visitStmt(*s, [&](auto& n) {
    using N = std::decay_t<decltype(n)>;
    const auto& prov = n.provenance;
    if constexpr (std::is_same_v<N, ForStmt>) {
      forLoop(n);
    } else if constexpr (std::is_same_v<N, BlockStmt>) {
      line("{", prov);
      ++indent_;
      body(s);
      --indent_;
      line("}", prov);
    } else if constexpr (std::is_same_v<N, AllocateStmt>) {
      allocate(n);
    } else if constexpr (std::is_same_v<N, ComputeStmt>) {
      line("const " + computeType(n.dtype, target_) + " " + identifier(n.name) + " = " + ep_.print(n.value) + ";" +
               comment(prov),
           prov);
    } else if constexpr (std::is_same_v<N, StoreStmt>) {
      std::string v = ep_.print(n.value);
      line(ep_.element(n.buffer, n.indices) + " = " + ep_.toStorage(n.buffer, v) + ";" +
               comment(prov),
           prov);
    } else if constexpr (std::is_same_v<N, ReduceStmt>) {
      reduce(n);
    } else if constexpr (std::is_same_v<N, IfThenStmt>) {
      if (target_ == Target::Cuda && guardOnlySkipsRegisterWork(k_, n, OverhangReads::CachesOnly)) {
        line("{  // unguarded (" + ep_.print(n.cond) + "): the rows past it are computed on registers, never stored", prov);
        ++indent_;
        body(n.body);
        --indent_;
        line("}", prov);
        return;
      }
      line("if (" + ep_.print(n.cond) + ") {" + comment(prov), prov);
      ++indent_;
      body(n.body);
      --indent_;
      line("}", prov);
    } else if constexpr (std::is_same_v<N, SyncStmt>) {
      if (n.grid) line("// grid barrier: every block has finished the loops above", prov);
      else if (target_ == Target::Cuda && n.warpOnly) line("__syncwarp();", prov);
      else if (target_ == Target::Cuda) blockBarrier(prov);
    } else if constexpr (std::is_same_v<N, AsyncCopyStmt>) {
      asyncCopy(n);
    } else {
      // Pipeline markers outside a loop generated as a pipeline (pipeline.cpp): the copies were synchronous.
      if (n.wait) line("// pipeline wait(" + std::to_string(n.pending) + ")", prov);
      else line("// pipeline commit", prov);
    }
  });
}

// A block barrier. Where the tensor cores read shared tiles through descriptors (wgmma), the writes before it
// are also ordered for them: each writing thread's proxy fence, then the barrier (PTX ISA, async proxy).
void Generator::blockBarrier(const std::vector<std::string>& prov) {
  if (swizzledShared(k_)) line("asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\");", prov);
  line("__syncthreads();", prov);
}

void Generator::allocate(const AllocateStmt& n) {
  const auto& prov = n.provenance;
  const Buffer& b = ep_.buffer(n.buffer);
  if (b.scope == MemScope::Global) return globalWorkspace(b, prov);
  bool shared = b.scope == MemScope::Shared;
  std::string type = shared ? storageType(b.dtype, target_) : computeType(b.dtype, target_);
  // Aligned for the vector path's wide shared accesses (vector_access.h). On the cpu, GCC 12 gives a local
  // array 32-byte vector stores without realigning the stack of an OpenMP outlined function: the light
  // shufflenet's depthwise conv died on vmovaps in about half its runs. alignas(64) makes it realign.
  int64_t count = std::max<int64_t>(1, numElements(b.shape));
  if (shared && target_ == Target::Cuda) {
    line(sharedArray(type, identifier(n.buffer), std::to_string(count), count, int64_t(dtypeSize(b.dtype)), sharedAlignment(b)) +
             comment(prov),
         prov);
    return;
  }
  std::string qual = target_ == Target::Cpu ? "alignas(64) " : "";
  if (ep_.isVectorArray(n.buffer)) {
    line(qual + ep_.vectorName("tsr_vf") + " " + identifier(n.buffer) + "[" + std::to_string(count) + " / " +
             ep_.vectorName("TSR_VF") + "];  // f32 vectors" + comment(prov),
         prov);
    return;
  }
  line(qual + type + " " + identifier(n.buffer) + "[" + std::to_string(count) + "];" + comment(prov), prov);
}

void Generator::reduce(const ReduceStmt& n) {
  const auto& prov = n.provenance;
  const Buffer& b = ep_.buffer(n.buffer);
  std::string ref = ep_.element(n.buffer, n.indices);
  if (n.op == ReduceOp::MaxSumExp) {  // never a vector array (cpuVectorArrays)  // a register pair [m, s] in its compute type (see prelude.cpp)
    std::string second = identifier(n.buffer) + "[" + ep_.linear(n.buffer, n.indices) + " + 1]";
    line("tsr_maxsumexp(" + ref + ", " + second + ", " + ep_.print(n.value) + ");" + comment(prov), prov);
    return;
  }
  std::string cur = ep_.fromStorage(n.buffer, ref);
  std::string v = reduceCombine(n.op, b.dtype, target_, cur, ep_.print(n.value));
  line(ref + " = " + ep_.toStorage(n.buffer, v) + ";" + comment(prov), prov);
}

void Generator::forLoop(const ForStmt& f) {
  const LoopHeader& h = f.h;
  bool outerReduction = h.reduction && reductionDepth_ == 0;
  if (h.reduction) ++reductionDepth_;
  std::string v = identifier(h.var), n = std::to_string(h.extent);
  std::string it = indexType(target_);
  bool parallel = false;
  int64_t unroll = 1;  // CPU: copies of the body `#pragma GCC unroll` asks for
  if (target_ == Target::Cuda && h.loopKind == LoopKind::Bound && isMmaTag(h.tag)) {
    mmaLanes(f);
  } else if (target_ == Target::Cuda && h.loopKind == LoopKind::Bound) {
    boundLoop(f);
  } else if (target_ == Target::Cuda && h.pipelineStages > 1 && pipelinedLoop(f)) {  // pipeline.cpp
  } else if (asyncFill_ && copyGroup(f)) {                                          // lanes of a pipelined fill
  } else if (h.loopKind == LoopKind::Vectorized && vectorLoop(f)) {  // emitted there: wide loads and stores
  } else if (h.loopKind == LoopKind::Vectorized && cpuVectorLoop(f)) {  // cpu_vector.cpp: vector registers
  } else if (target_ == Target::Cuda && flashAttentionRows(f)) {     // flash_attention.cpp: a warp's query rows
  } else if (target_ == Target::Cuda && wgmmaLoop(f)) {              // wgmma.cpp: a warpgroup's k steps
  } else if (target_ == Target::Cuda && mmaNest(f)) {                // mma.cpp: a warp's tiles
  } else {
    if (target_ == Target::Cpu) {
      parallel = parallelDepth_ == 0 && cpuParallelLoop(h);
      if (parallel) line(sharesRegion_ ? "#pragma omp for" : "#pragma omp parallel for", f.provenance);
      // A vectorized reduction loop carries its accumulator from lane to lane: `omp simd` without a reduction
      // clause would race on it, so its lanes are unrolled in order (the IR's meaning, docs/kernel-ir.md).
      else if (h.loopKind == LoopKind::Vectorized && !h.reduction) line("#pragma omp simd", f.provenance);
      else if (h.loopKind == LoopKind::Unrolled || h.loopKind == LoopKind::Vectorized) {
        unroll = std::min<int64_t>({h.extent, 64, std::max<int64_t>(1, kCpuUnrollBudget / cpuUnrolled_)});
        if (unroll > 1) line("#pragma GCC unroll " + std::to_string(unroll), f.provenance);
      }
    } else if (h.loopKind == LoopKind::Unrolled || h.loopKind == LoopKind::Vectorized) {
      line("#pragma unroll", f.provenance);
    }
    std::string note = h.loopKind == LoopKind::Bound ? "  // " + std::string(threadTagName(h.tag)) : "";
    line("for (" + it + " " + v + " = 0; " + v + " < " + n + "; ++" + v + ") {" + note, f.provenance);
    if (parallel) ++parallelDepth_;
    cpuUnrolled_ *= unroll;
    ++indent_;
    body(f.body);
    --indent_;
    cpuUnrolled_ /= unroll;
    if (parallel) --parallelDepth_;
    line("}", f.provenance);
  }
  if (h.reduction) --reductionDepth_;
  if (outerReduction && target_ == Target::Cuda) combineAcrossThreads(f);
}

void Generator::boundLoop(const ForStmt& f) {
  const LoopHeader& h = f.h;
  std::string v = identifier(h.var);
  std::string index;
  unsigned dim;
  if (h.tag == ThreadTag::Warp) {
    index = "threadIdx.x / 32";
    dim = out_.launch.block[0] / 32;
  } else if (h.tag == ThreadTag::ThreadX && warpDepth_ > 0) {
    index = "threadIdx.x % 32";
    dim = 32;
  } else {
    index = (isBlockTag(h.tag) ? "blockIdx." : "threadIdx.") + tagAxis(h.tag);
    dim = isBlockTag(h.tag) ? out_.launch.grid[tagIndex(h.tag)] : out_.launch.block[tagIndex(h.tag)];
  }
  line("{", f.provenance);
  ++indent_;
  line("const long long " + v + " = " + index + ";  // loop " + v + " in 0.." + std::to_string(h.extent) + " bound to " +
           std::string(threadTagName(h.tag)),
       f.provenance);
  bool guard = static_cast<int64_t>(dim) > h.extent;
  if (guard) {
    line("if (" + v + " < " + std::to_string(h.extent) + ") {", f.provenance);
    ++indent_;
  }
  if (h.tag == ThreadTag::Warp) ++warpDepth_;
  body(f.body);
  if (h.tag == ThreadTag::Warp) --warpDepth_;
  if (guard) {
    --indent_;
    line("}", f.provenance);
  }
  --indent_;
  line("}", f.provenance);
}

}  // namespace tessera::codegen::detail

namespace tessera::codegen::detail {

using namespace kernel;

// The statements of the kernel's top-level block split at its grid barriers (one segment without any).
std::vector<std::vector<Stmt>> phaseSegments(const Kernel& k) {
  std::vector<std::vector<Stmt>> out(1);
  if (k.body->kind != StmtKind::Block) return {{k.body}};
  for (const Stmt& s : static_cast<BlockStmt&>(*k.body).stmts) {
    if (s->kind == StmtKind::Sync && static_cast<SyncStmt&>(*s).grid) out.emplace_back();
    else out.back().push_back(s);
  }
  return out;
}

int Generator::phaseCount() const {
  int n = static_cast<int>(phaseSegments(k_).size());
  if (kernel::launchCount(k_) != n) fail("kernel '" + k_.id + "': a grid barrier stands inside a loop; it can only separate the top-level nests");
  return n;
}

// CUDA: one launch per phase, the phase a parameter; the CPU runs the phases in order (OpenMP's parallel loops
// end with a barrier).
bool Generator::phasedBody() {
  int phases = phaseCount();
  if (target_ != Target::Cuda || phases == 1) return false;
  out_.phases = phases;
  auto segments = phaseSegments(k_);
  for (size_t p = 0; p < segments.size(); ++p) {
    line("if (tsr_phase == " + std::to_string(p) + ") {");
    ++indent_;
    for (const Stmt& s : segments[p]) stmt(s);
    --indent_;
    line("}");
  }
  return true;
}

// A buffer in global memory that holds no graph value: a parameter on the GPU, allocated here on the CPU.
void Generator::globalWorkspace(const Buffer& b, const std::vector<std::string>& provenance) {
  std::string name = identifier(b.name), n = std::to_string(std::max<int64_t>(1, numElements(b.shape)));
  if (target_ == Target::Cuda) return line("// " + name + ": workspace of " + n + " elements, a parameter", provenance);
  std::string t = storageType(b.dtype, target_);
  line("tsr_workspace<" + t + "> " + name + "_owner(" + n + ");  // workspace, zeroed", provenance);
  line(t + "* const " + name + " = " + name + "_owner.p;", provenance);
}

}  // namespace tessera::codegen::detail
