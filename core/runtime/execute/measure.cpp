#include "runtime/execute/measure.h"

#include <cstring>
#include <map>

#include "ir/error.h"
#include "runtime/execute/backend.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

namespace tessera::execute {
namespace {

using kernel::BufferRole;

size_t bytesOf(const kernel::Buffer& b) { return size_t(numElements(b.shape)) * dtypeSize(b.dtype); }

// Generated source for each variant under its own entry name (the kernel id gets a _vN suffix).
std::vector<codegen::GeneratedKernel> generateAll(const std::vector<KernelVariant>& variants, codegen::Target target,
                                                  std::vector<VariantTiming>& out) {
  std::vector<codegen::GeneratedKernel> gen(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    kernel::Kernel k = variants[i].scheduled.clone();
    k.id += "_v" + std::to_string(i);
    try {
      gen[i] = codegen::generate(k, target);
    } catch (const std::exception& e) {
      out[i].status = "not compiled";
      out[i].message = std::string("codegen: ") + e.what();
    }
  }
  return gen;
}

// Runs variant i on the reference values of its inputs and compares its outputs with the reference.
void runVariant(detail::KernelBackend& be, size_t i, const kernel::Kernel& k, const ReferenceResult& ref,
                const MeasureOptions& o, double cutoffMs, VariantTiming& t) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<detail::ParamBuffer> params;
  for (const auto& b : k.buffers) {
    if (b.role == BufferRole::Temp) continue;
    storage.emplace_back(std::max<size_t>(bytesOf(b), 1));
    bool out = b.role == BufferRole::Output;
    if (!out) {
      auto it = ref.values.find(b.value);
      if (it == ref.values.end()) fail("value '" + b.value + "' read by kernel " + k.id + " has no reference value");
      std::memcpy(storage.back().data(), it->second.bytes().data(), bytesOf(b));
    }
    params.push_back({storage.back().data(), bytesOf(b), out});
  }
  t.ms = be.run(i, params, 0, 1);
  t.pruned = cutoffMs > 0 && t.ms > cutoffMs;
  if (!t.pruned) t.ms = be.run(i, params, std::max(0, o.warmup - 1), o.reps);
  t.verified = true;
  size_t slot = 0;
  for (const auto& b : k.buffers) {
    if (b.role == BufferRole::Temp) continue;
    size_t mine = slot++;
    if (b.role != BufferRole::Output || !ref.values.count(b.value)) continue;
    Tensor got(b.dtype, b.shape);
    std::memcpy(got.mutableBytes().data(), storage[mine].data(), bytesOf(b));
    Comparison c = compareTensors(got, ref.values.at(b.value));
    t.maxRelErr = std::max(t.maxRelErr, c.maxRelError);
    if (!c.ok) {
      t.verified = false;
      t.message = "output '" + b.value + "': " + c.message;
    }
  }
  t.status = t.verified ? "ok" : "mismatch";
}

}  // namespace

MeasureReport measureVariants(const CompiledModel& m, const std::vector<KernelVariant>& variants, BackendKind backend,
                              const MeasureOptions& o) {
  if (backend == BackendKind::Reference) fail("measure: the reference backend runs no generated kernels (cpu, cuda)");
  MeasureReport r;
  r.timings.resize(variants.size());
  for (const auto& v : variants)
    if (v.kernel >= m.kernels.size()) fail("measure: kernel index " + std::to_string(v.kernel) + " is out of range");
  codegen::Target target = backend == BackendKind::Cuda ? codegen::Target::Cuda : codegen::Target::Cpu;
  auto be = backend == BackendKind::Cuda ? detail::makeCudaBackend(o.arch) : detail::makeCpuBackend();
  r.device = be->device();
  std::vector<codegen::GeneratedKernel> gen = generateAll(variants, target, r.timings);
  std::vector<const codegen::GeneratedKernel*> ptrs(variants.size(), nullptr);
  for (size_t i = 0; i < gen.size(); ++i)
    if (r.timings[i].status != "not compiled") ptrs[i] = &gen[i];
  std::vector<std::string> errors = be->build(ptrs);
  for (size_t i = 0; i < ptrs.size(); ++i)
    if (ptrs[i] && !errors[i].empty()) {
      r.timings[i].status = "not compiled";
      r.timings[i].message = errors[i];
    }
  r.cannotRun = be->cannotRun();
  if (!r.cannotRun.empty()) return r;
  ReferenceOptions ro;
  ro.keepAll = true;
  ReferenceResult ref = runReference(*m.graph, randomInputs(*m.graph, o.seed), ro);
  std::map<size_t, double> bestMs;  // per kernel, verified medians
  for (size_t i = 0; i < variants.size(); ++i) {
    VariantTiming& t = r.timings[i];
    auto best = bestMs.find(variants[i].kernel);
    double cutoff = o.pruneFactor > 0 && best != bestMs.end() ? o.pruneFactor * best->second : 0;
    if (o.cancel && o.cancel->load()) {
      if (t.status == "not run") t.status = "cancelled";
      continue;
    }
    if (t.status == "not run") {
      try {
        runVariant(*be, i, variants[i].scheduled, ref, o, cutoff, t);
        if (t.verified && !t.pruned && (best == bestMs.end() || t.ms < best->second)) bestMs[variants[i].kernel] = t.ms;
      } catch (const std::exception& e) {
        t.status = "failed";
        t.message = e.what();
      }
    }
    if (o.progress) o.progress(i + 1, variants.size());
  }
  return r;
}

}  // namespace tessera::execute
