// Shared tiles filled by the tensor memory accelerator (TMA; docs/codegen.md, TMA fills). With the kernel
// parameter tma = 1, a pipelined loop whose caches are all 128-byte-swizzled boxes of global inputs fills each
// stage with bulk tensor copies (cp.async.bulk.tensor) that one thread issues, 64 columns (128 bytes) a copy,
// landing in the swizzled atoms the tensor cores read; the copies of a stage complete on its mbarrier, which
// every thread waits on with the stage's phase parity. The tensor maps describing the sources travel as
// kernel parameters (__grid_constant__), encoded by the backend.
#include "codegen/generator.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

// A box the TMA can copy into `cache`: a 16-bit, unpadded, swizzled read cache of a global input of the same
// rank, whose leading dimensions are 1 and whose rows are whole 128-byte chunks; every row of the source a
// multiple of 16 bytes (TMA's stride rule) and at most 256 rows a box.
bool tmaCopyable(const Kernel& k, const Buffer& cache) {
  if (cache.swizzleBytes != 128 || !cache.cacheIsRead || cache.cacheOf.empty() || cache.cacheZeroOutside ||
      cache.cacheByIteration || cache.cachePad != 0 || cache.cacheRowPad != 0 || dtypeSize(cache.dtype) != 2)
    return false;
  const Buffer* src = k.findBuffer(cache.cacheOf);
  size_t r = cache.shape.size();
  if (!src || src->role != BufferRole::Input || src->scope != MemScope::Global || src->shape.size() != r || r < 2 || r > 5) return false;
  for (size_t d = 0; d + 2 < r; ++d)
    if (cache.shape[d] != 1) return false;
  return cache.shape[r - 2] <= 256 && cache.shape[r - 1] % 64 == 0 && (src->shape[r - 1] * 2) % 16 == 0 &&
         cache.cacheBase.size() == r;
}

}  // namespace

void Generator::planTma() {
  auto p = k_.params.find("tma");
  if (target_ != Target::Cuda || p == k_.params.end() || p->second == 0) return;
  for (const Buffer& c : k_.buffers) {
    if (!tmaCopyable(k_, c)) continue;
    if (!tmaMaps_.count(c.cacheOf)) {
      const Buffer& src = *k_.findBuffer(c.cacheOf);
      GeneratedKernel::TensorMap m;
      for (size_t i = 0; i < k_.buffers.size(); ++i)
        if (k_.buffers[i].name == src.name) m.param = i;  // inputs come first: the buffer's index is its parameter's
      for (auto d = src.shape.rbegin(); d != src.shape.rend(); ++d) m.dims.push_back(uint64_t(*d));
      m.box.assign(src.shape.size(), 1);
      m.box[0] = 64;
      m.box[1] = uint32_t(c.shape[c.shape.size() - 2]);
      m.bf16 = c.dtype == DType::BF16;
      tmaMaps_[c.cacheOf] = out_.tensorMaps.size();
      out_.tensorMaps.push_back(m);
    }
    tmaCaches_.insert(c.name);
  }
}

bool Generator::tmaFills(const std::vector<std::string>& caches) const {
  if (caches.empty()) return false;
  for (const std::string& c : caches)
    if (!tmaCaches_.count(c)) return false;
  // Each source's box must be the one its map was made for (two caches of one source with other boxes: cp.async).
  for (const std::string& c : caches) {
    const Buffer& b = ep_.buffer(c);
    if (out_.tensorMaps[tmaMaps_.at(b.cacheOf)].box[1] != uint32_t(b.shape[b.shape.size() - 2])) return false;
  }
  return true;
}

std::string Generator::tensorMapName(const std::string& source) const { return "tsr_map_" + identifier(source); }

// The stage's barriers, one a stage, set up by one thread before the prologue.
void Generator::tmaBarriers(const ForStmt& f) {
  const auto& prov = f.provenance;
  std::string stages = std::to_string(f.h.pipelineStages);
  line("__shared__ __align__(8) unsigned long long tsr_full[" + stages + "];  // stage s's copies complete here", prov);
  line("if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {", prov);
  ++indent_;
  line("for (int tsr_s = 0; tsr_s < " + stages + "; ++tsr_s)", prov);
  line("  asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\\n\" :: \"r\"((unsigned)__cvta_generic_to_shared(&tsr_full[tsr_s])) : \"memory\");", prov);
  line("asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");", prov);
  --indent_;
  line("}", prov);
  line("__syncthreads();", prov);
}

// Iteration `iteration`'s tiles into copy `stage` of each cache, issued by one thread: the stage's barrier
// expects their bytes, then one bulk tensor copy per 64 columns of each tile.
void Generator::tmaStage(const ForStmt& f, const std::vector<std::string>& caches, const std::string& iteration,
                         const std::string& stage) {
  const auto& prov = f.provenance;
  int64_t bytes = 0;
  for (const std::string& c : caches) bytes += numElements(ep_.buffer(c).shape) * 2;
  line("if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {  // TMA: one thread issues the copies", prov);
  ++indent_;
  line("const long long " + identifier(f.h.var) + " = " + iteration + ";", prov);
  line("const unsigned tsr_bar = (unsigned)__cvta_generic_to_shared(&tsr_full[" + stage + "]);", prov);
  line("asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" :: \"r\"(tsr_bar), \"r\"(" +
           std::to_string(bytes) + ") : \"memory\");",
       prov);
  for (const std::string& c : caches) {
    const Buffer& b = ep_.buffer(c);
    size_t r = b.shape.size();
    int64_t rows = b.shape[r - 2];
    for (int64_t j = 0; j < b.shape[r - 1] / 64; ++j) {
      std::string coords, operands;
      for (size_t d = r; d-- > 0;) {
        Expr at = d == r - 1 ? add(b.cacheBase[d], intImm(64 * j)) : b.cacheBase[d];
        size_t n = r - 1 - d;
        coords += std::string(n ? ", " : "") + "%" + std::to_string(n + 2);
        operands += ", \"r\"((int)(" + ep_.print(at) + "))";
      }
      std::string dst = stagesName(c) + " + (" + stage + ") * " + std::to_string(numElements(b.shape)) + " + " + std::to_string(j * rows * 64);
      line("asm volatile(\"cp.async.bulk.tensor." + std::to_string(r) + "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {" +
               coords + "}], [%" + std::to_string(r + 2) + "];\\n\" :: \"r\"((unsigned)__cvta_generic_to_shared(" + dst + ")), \"l\"(&" +
               tensorMapName(b.cacheOf) + ")" + operands + ", \"r\"(tsr_bar) : \"memory\");  // columns " + std::to_string(64 * j) +
               ".." + std::to_string(64 * j + 63) + " of " + identifier(c),
           prov);
    }
  }
  --indent_;
  line("}", prov);
}

// Every thread waits until iteration `iteration`'s stage has landed: its barrier's phase for that use.
void Generator::tmaWait(const ForStmt& f, const std::vector<std::string>& provenance) {
  std::string v = identifier(f.h.var), stages = std::to_string(f.h.pipelineStages);
  line("asm volatile(\"{\\n.reg .pred P1;\\nTSR_WAIT:\\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\\n@!P1 bra TSR_WAIT;\\n}\\n\" :: "
       "\"r\"((unsigned)__cvta_generic_to_shared(&tsr_full[" + v + " % " + stages + "])), \"r\"((unsigned)((" + v + " / " + stages +
           ") & 1)) : \"memory\");  // TMA: this iteration's tiles have landed",
       provenance);
}

}  // namespace tessera::codegen::detail
