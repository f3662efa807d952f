#include "runtime/execute/executor.h"

#include <chrono>
#include <cstring>
#include <set>

#include "ir/error.h"
#include "ops/stats.h"
#include "runtime/execute/arena.h"
#include "runtime/execute/backend.h"
#include "runtime/execute/index_record.h"
#include "runtime/execute/memory_limit.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

namespace tessera::execute {

BackendKind parseBackend(const std::string& name) {
  if (name == "reference") return BackendKind::Reference;
  if (name == "cpu") return BackendKind::Cpu;
  if (name == "cuda") return BackendKind::Cuda;
  fail("unknown backend '" + name + "' (reference, cpu, cuda)");
}

namespace {

using kernel::BufferRole;
using detail::Arena;
using detail::bufferBytes;

bool isGraphOutput(const Graph& g, const std::string& value) {
  for (const Value* v : g.outputs())
    if (v->name() == value) return true;
  return false;
}

modcache::ModuleCache moduleCacheFor(const RunOptions& o) {
  if (!o.moduleCache) return modcache::ModuleCache();
  return o.moduleCacheDir.empty() ? modcache::defaultModuleCache() : modcache::ModuleCache(o.moduleCacheDir);
}

// Builds every generated kernel; what each build says goes into its report, and cache warnings into messages
// (a cache that cannot be written says so once, not once per kernel).
void buildKernels(detail::KernelBackend& be, const std::vector<const codegen::GeneratedKernel*>& gen, RunReport& r) {
  std::vector<detail::KernelBuild> builds = be.build(gen);
  bool toldNotStored = false;
  for (size_t i = 0; i < gen.size(); ++i) {
    if (!gen[i]) continue;
    KernelReport& kr = r.kernels[i];
    kr.cached = builds[i].cached;
    kr.compileMs = builds[i].compileMs;
    const std::string& w = builds[i].warning;
    bool notStored = w.rfind("module not cached", 0) == 0;
    if (!w.empty() && !(notStored && toldNotStored)) r.messages.push_back("kernel " + kr.group + ": " + w);
    toldNotStored = toldNotStored || notStored;
    if (!builds[i].error.empty()) kr.message = builds[i].error;
    else kr.status = KernelStatus::NotRun;
  }
}

int64_t groupFlops(const Graph& g, const kernel::KernelSpec& spec) {
  int64_t f = 0;
  for (const auto& id : spec.nodeIds)
    if (Node* n = g.findNode(id)) f += nodeFlops(*n);
  return f;
}

void runReferenceBackend(const CompiledModel& m, const std::vector<Tensor>& inputs, const RunOptions& o, RunReport& r) {
  ReferenceResult res;
  double ms = 0;
  for (int i = 0; i < std::max(1, o.reps); ++i) {
    auto start = std::chrono::steady_clock::now();
    ReferenceOptions ro;
    ro.cancel = o.cancel;
    res = runReference(*m.graph, inputs, ro);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  r.ran = true;
  r.totalMs = ms;
  r.outputs = res.outputs;
  r.outputsVerified = true;
}

// Values made from tf32-rounded products: a kernel's rounding reaches the kernels after it, so a kernel that reads
// such a value (and every graph output made of one) is checked at tf32's tolerance too.
void noteRounded(const kernel::Kernel& k, const KernelReport& kr, std::set<std::string>& rounded) {
  bool reads = false;
  for (const auto& b : k.buffers) reads = reads || (b.role == BufferRole::Input && rounded.count(b.value));
  if (kr.precision != "tf32" && !reads) return;
  for (const auto& b : k.buffers)
    if (b.role == BufferRole::Output) rounded.insert(b.value);
}

// Runs one kernel, times it and checks its outputs (at tf32's tolerance for values in `rounded`); on failure the
// reference's values stand in.
void runKernel(detail::KernelBackend& be, size_t i, const CompiledModel& m, Arena& arena, const ReferenceResult& ref,
               const RunOptions& o, const std::set<std::string>& rounded, const codegen::GeneratedKernel& gen,
               KernelReport& kr) {
  // Outputs nothing on the host reads (unchecked, not kept, not a graph output) may stay on the device.
  auto hostReads = [&](const std::string& value) { return o.verify || o.keepValues || isGraphOutput(*m.graph, value); };
  const kernel::Kernel& k = m.kernels[i].kernel;
  std::vector<detail::ParamBuffer> params;
  size_t bytes = 0;
  for (const auto& b : k.buffers) {
    if (b.role == BufferRole::Temp) continue;
    bool out = b.role == BufferRole::Output;
    void* p = out ? arena.place(b.value, bufferBytes(b), i) : arena.find(b.value);
    if (!p) fail("value '" + b.value + "' read by kernel " + k.id + " was never written");
    params.push_back({p, bufferBytes(b), out, b.value, out && hostReads(b.value)});
    bytes += bufferBytes(b);
  }
  detail::IndexRecord record(gen);
  record.appendTo(params);
  kr.ms = be.run(i, params, o.warmup, o.reps);
  record.throwIfSet();  // an index out of range: the kernel failed (its accesses were kept inside the buffers)
  double s = std::max(kr.ms, 1e-6) / 1e3;
  kr.gbps = static_cast<double>(bytes) / s / 1e9;
  kr.gflops = static_cast<double>(groupFlops(*m.graph, m.kernels[i].spec)) / s / 1e9;
  if (!o.verify) {
    kr.status = KernelStatus::Unchecked;
    return;
  }
  kr.verified = true;
  for (const auto& b : k.buffers) {
    if (b.role != BufferRole::Output) continue;
    auto it = ref.values.find(b.value);
    if (it == ref.values.end()) continue;
    Comparison c = compareTensors(arena.read(b.value), it->second, toleranceFor(b.dtype, rounded.count(b.value) ? "tf32" : ""));
    kr.maxRelErr = std::max(kr.maxRelErr, c.maxRelError);
    kr.maxAbsErr = std::max(kr.maxAbsErr, c.maxAbsError);
    if (!c.ok) {
      kr.verified = false;
      kr.message = "output '" + b.value + "': " + c.message;
    }
  }
  kr.status = kr.verified ? KernelStatus::Ok : KernelStatus::Mismatch;
}

// Every value the group's nodes produce, from the reference: by the group's node ids, since a kernel that
// could not be lowered has no buffers to go by.
void fillFromReference(const Graph& g, const CompiledKernel& ck, size_t i, Arena& arena, const ReferenceResult& ref) {
  for (const std::string& id : ck.spec.nodeIds)
    if (const Node* n = g.findNode(id))
      for (size_t o = 0; o < n->numOutputs(); ++o)
        if (const Value* v = n->output(o); v && ref.values.count(v->name()))
          arena.set(v->name(), ref.values.at(v->name()), i);
}

// Copies what kernel i wrote (its outputs, or the reference's stand-ins) before a later kernel reuses the memory.
void keepOutputs(const CompiledKernel& ck, Arena& arena, RunReport& r) {
  for (const auto& b : ck.kernel.buffers)
    if (b.role == BufferRole::Output && arena.find(b.value)) r.values[b.value] = arena.read(b.value);
}

std::unique_ptr<detail::KernelBackend> makeBackend(BackendKind backend, const RunOptions& o) {
  std::unique_ptr<detail::KernelBackend> be = backend == BackendKind::Cuda
                                                  ? detail::makeCudaBackend(o.arch, moduleCacheFor(o))
                                                  : detail::makeCpuBackend(moduleCacheFor(o));
  be->cancel = o.cancel;
  be->setTimeBudget(o.kernelBudgetMs);
  return be;
}

// Generates every kernel's source. One that could not be lowered or generated stays NotCompiled with the reason
// in its message (and a null entry in what is returned).
std::vector<const codegen::GeneratedKernel*> generateKernels(const CompiledModel& m, codegen::Target target,
                                                             const RunOptions& o, RunReport& r) {
  r.kernels.resize(m.kernels.size());
  r.generated.resize(m.kernels.size());
  std::vector<const codegen::GeneratedKernel*> gen(m.kernels.size(), nullptr);
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const CompiledKernel& ck = m.kernels[i];
    KernelReport& kr = r.kernels[i];
    kr.group = ck.spec.id;
    kr.nodes = ck.spec.nodeIds;
    kr.status = KernelStatus::NotCompiled;
    if (!ck.error.empty()) {
      kr.message = ck.error;
      continue;
    }
    if (o.predictMs) kr.predictedMs = o.predictMs(*m.graph, ck.kernel);
    try {
      r.generated[i] = codegen::generate(ck.kernel, target);
      kr.entry = r.generated[i].entry;
      kr.precision = r.generated[i].precision;
      gen[i] = &r.generated[i];
    } catch (const std::exception& e) {
      kr.message = std::string("codegen: ") + e.what();
    }
  }
  return gen;
}

// Runs the built kernels in order. A kernel that failed or was never built gets the reference's values in its
// place, so the kernels after it can still run.
void runKernels(detail::KernelBackend& be, const CompiledModel& m, const RunOptions& o, const ReferenceResult& ref,
                Arena& arena, std::set<std::string>& rounded, RunReport& r) {
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    KernelReport& kr = r.kernels[i];
    bool ran = false;
    o.cancel.check();
    if (kr.status == KernelStatus::NotRun) {
      try {
        noteRounded(m.kernels[i].kernel, kr, rounded);
        runKernel(be, i, m, arena, ref, o, rounded, r.generated[i], kr);
        r.totalMs += kr.ms;
        ran = true;
      } catch (const Cancelled&) {
        throw;
      } catch (const std::exception& e) {
        kr.status = KernelStatus::Failed;
        kr.message = e.what();
        r.messages.push_back("kernel " + kr.group + ": " + kr.message);
      }
    }
    if (!ran) fillFromReference(*m.graph, m.kernels[i], i, arena, ref);
    if (o.keepValues && (ran || o.verify)) keepOutputs(m.kernels[i], arena, r);  // a failed kernel's are garbage
  }
}

// The graph's outputs as the kernels left them, each checked against the reference's (at tf32's tolerance for
// one made of tf32-rounded values); the outputs are verified only when every kernel is Ok too.
void collectOutputs(const Graph& g, const RunOptions& o, const ReferenceResult& ref, Arena& arena,
                    const std::set<std::string>& rounded, RunReport& r) {
  r.outputsVerified = o.verify;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Value* out = g.outputs()[i];
    if (!arena.find(out->name())) {  // unverified: a kernel before it failed and no reference stands in
      r.messages.push_back("graph output '" + out->name() + "': not made (a kernel before it failed), zeros in its place");
      r.outputs.emplace_back(out->dtype(), out->shape());
      continue;
    }
    Tensor t = arena.read(out->name());
    std::string precision = rounded.count(out->name()) ? "tf32" : "";
    Comparison c = o.verify ? compareTensors(t, ref.outputs[i], toleranceFor(t.dtype(), precision)) : Comparison{};
    if (!c.ok) {
      r.outputsVerified = false;
      r.messages.push_back("graph output '" + out->name() + "': " + c.message);
    }
    r.outputs.push_back(std::move(t));
  }
  for (const auto& k : r.kernels)
    if (k.status != KernelStatus::Ok) r.outputsVerified = false;
}

// A run whose device buffers would not fit in the device's free memory is refused before anything is built.
void checkDeviceMemory(const detail::KernelBackend& be, const CompiledModel& m,
                       const std::vector<const codegen::GeneratedKernel*>& gen, const RunOptions& o) {
  uint64_t free = be.freeDeviceBytes();
  if (!o.memoryLimit.checkDevice || free == 0) return;
  uint64_t need = deviceBytesNeeded(m, gen);
  if (need > free)
    fail("run needs " + formatBytes(need) + " of device memory (buffers and workspaces); " + be.device() + " has " +
         formatBytes(free) + " free");
}

}  // namespace

RunReport executeModel(const CompiledModel& m, BackendKind backend, const RunOptions& o) {
  RunReport r;
  const Graph& g = *m.graph;
  std::vector<Tensor> inputs = o.inputs.empty() ? randomInputs(g, o.seed) : o.inputs;
  r.backend = backend == BackendKind::Reference ? "reference" : backend == BackendKind::Cpu ? "cpu" : "cuda";
  if (backend == BackendKind::Reference) {
    r.device = "host (reference interpreter)";
    runReferenceBackend(m, inputs, o, r);
    return r;
  }
  checkHostMemory(m, backend, o, false);
  std::unique_ptr<detail::KernelBackend> be = makeBackend(backend, o);
  r.device = be->device();
  auto buildStart = std::chrono::steady_clock::now();
  codegen::Target target = backend == BackendKind::Cuda ? codegen::Target::Cuda : codegen::Target::Cpu;
  std::vector<const codegen::GeneratedKernel*> gen = generateKernels(m, target, o, r);
  checkDeviceMemory(*be, m, gen, o);
  buildKernels(*be, gen, r);
  o.cancel.check();  // a killed compiler reports an error per kernel; the run is cancelled, not failed
  r.buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - buildStart).count();
  for (const auto& k : r.kernels)
    if (k.status == KernelStatus::NotCompiled) r.messages.push_back("kernel " + k.group + ": " + k.message);
  r.cannotRun = be->cannotRun();
  if (!r.cannotRun.empty()) {
    r.messages.push_back(r.cannotRun);
    return r;
  }
  ReferenceOptions ro;
  ro.keepAll = true;
  ro.cancel = o.cancel;
  ReferenceResult ref = o.verify ? runReference(g, inputs, ro) : ReferenceResult{};
  Arena arena(g, inputs, m.kernels);
  std::set<std::string> rounded;  // noteRounded
  if (o.keepValues) {
    for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i) r.values[g.inputs()[i]->name()] = inputs[i];
    for (Value* v : g.initializers()) r.values[v->name()] = *v->initializer();
  }
  runKernels(*be, m, o, ref, arena, rounded, r);
  r.ran = true;
  collectOutputs(g, o, ref, arena, rounded, r);
  return r;
}

RunReport executeWithBaseline(const CompiledModel& m, BackendKind backend, const RunOptions& o) {
  if (backend != BackendKind::Reference) checkHostMemory(m, backend, o, true);
  RunReport r = executeModel(m, backend, o);
  if (backend == BackendKind::Reference || !r.ran) return r;
  // The baseline under the model's precision policy, so the fusion's gain is like for like.
  kernel::KernelSpec first = m.kernels.empty() ? kernel::KernelSpec{} : m.kernels.front().spec;
  CompiledModel base = compileKernels(m.graph, unfusedGroups(*m.graph, first.tf32, first.machine));
  RunReport b = executeModel(base, backend, o);
  if (b.ran) r.baselineTotalMs = b.totalMs;
  for (const auto& msg : b.messages) r.messages.push_back("baseline: " + msg);
  return r;
}

}  // namespace tessera::execute
